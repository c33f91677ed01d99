const cookie = require('cookie');

exports.handler = () => ({ parsed: cookie.parse('a=1; b=hello%20world; c="q"'), serialized: cookie.serialize('session', 'x y', { httpOnly: true, maxAge: 60, path: '/' }) });
