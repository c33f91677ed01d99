import got from 'got';

// got loads http2-wrapper, which builds on tls.TLSSocket as it loads; calls here are HTTP/1.1.
export async function handler() {
  const base = process.env.COMPAT_URL;
  const data = await got(`${base}/json?z=3`, { headers: { 'x-test': 'got' } }).json();
  const echoed = await got.post(`${base}/echo`, { json: { hello: 'got' } }).json();
  const text = await got(`${base}/text`).text();
  let notFound;
  try {
    await got(`${base}/missing`, { retry: { limit: 0 } });
  } catch (err) {
    notFound = { name: err.name, status: err.response.statusCode };
  }
  return { data, echoed, text, notFound };
}
