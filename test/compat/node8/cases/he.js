const he = require('he');

exports.handler = () => ({ encoded: he.encode('foo © bar ≠ baz 𝌆 <x>'), decoded: he.decode('&lt;p&gt;caf&eacute; &#x1D306;') });
