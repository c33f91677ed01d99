const fetch = require('node-fetch');

exports.handler = async () => {
  const res = await fetch(`${process.env.COMPAT_URL}/json?y=2`, { headers: { 'x-test': 'node-fetch' } });
  const post = await fetch(`${process.env.COMPAT_URL}/echo`, { method: 'POST', body: JSON.stringify({ a: 1 }), headers: { 'content-type': 'application/json' } });
  return { status: res.status, type: res.headers.get('content-type'), data: await res.json(), echoed: await post.json() };
};
