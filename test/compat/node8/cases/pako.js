const pako = require('pako');

exports.handler = () => {
  const input = 'islet '.repeat(200);
  const deflated = pako.deflate(input);
  const gzipped = pako.gzip(input);
  return { smaller: deflated.length < input.length, inflated: pako.inflate(deflated, { to: 'string' }) === input, ungzipped: pako.ungzip(gzipped, { to: 'string' }).length };
};
