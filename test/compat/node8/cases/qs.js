const qs = require('qs');

exports.handler = () => ({
  parsed: qs.parse('a[b][c]=1&list[]=x&list[]=y&n=2'),
  string: qs.stringify({ a: { b: 'c d' }, arr: [1, 2] }, { encodeValuesOnly: true }),
});
