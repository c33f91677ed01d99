const JSON5 = require('json5');

exports.handler = () => ({ parsed: JSON5.parse("{unquoted: 'single', trailing: [1, 2,], hex: 0x1F, // comment\n}"), text: JSON5.stringify({ a: 1, 'b-c': [true] }) });
