import t from 'tap';
import { fixture, serviceHeaders, startTestServer, type TestServer } from '../helpers/server';

// The seed description's node8 functions (its section 4.1 table), deployed from fixtures.
let s: TestServer;
const seed = fixture('seed-node8');

t.before(async () => {
  s = await startTestServer();
  await s.deploy('public_html', seed, 'html');
  await s.deploy('cors', seed, 'cors');
  await s.deploy('public_redirect', seed, 'redirect');
  await s.deploy('hello', seed, 'hello');
  await s.deploy('public_echo', seed, 'echoBody');
  await s.deploy('caller', seed, 'callerFetch', { env: { SERVICE_URL: s.url, SERVICE_API_KEY: s.apiKey } });
  await s.deploy('caller_sdk', seed, 'callerSdk', { env: { SERVICE_API_KEY: s.apiKey } });
  await s.deploy('caller_sdk_details', seed, 'callerSdkDetails', { env: { SERVICE_API_KEY: s.apiKey } });
});
t.teardown(() => s.stop());

t.test('HTML greeting: public, 200 text/html with the name', async (t) => {
  const res = await s.call('public_html', { key: null, query: 'name=Ada' });
  t.equal(res.status, 200);
  t.match(res.headers.get('content-type'), /^text\/html/);
  t.match(await res.text(), /<h1>Hello Ada!<\/h1>/);
});

t.test('CORS: secured, header present', async (t) => {
  const noKey = await s.call('cors', { key: null });
  t.equal(noKey.status, 401, 'needs the key');
  const res = await s.call('cors');
  t.equal(res.status, 200);
  t.equal(res.headers.get('access-control-allow-origin'), 'https://example.com');
  t.equal(await res.text(), 'This response can be read from https://example.com');
});

t.test('redirect: 302 with Location from query, then body, then default', async (t) => {
  const fromQuery = await s.call('public_redirect', { key: null, query: 'target=https%3A%2F%2Fq.example%2F', body: '{"target":"https://b.example/"}', method: 'POST' });
  t.equal(fromQuery.status, 302);
  t.equal(fromQuery.headers.get('location'), 'https://q.example/');
  const fromBody = await fetch(`${s.url}/v2/run/${s.accountId}/public_redirect`, { method: 'POST', body: '{"target":"https://b.example/"}', redirect: 'manual' });
  t.equal(fromBody.status, 302);
  t.equal(fromBody.headers.get('location'), 'https://b.example/');
  const byDefault = await fetch(`${s.url}/v2/run/${s.accountId}/public_redirect`, { redirect: 'manual' });
  t.equal(byDefault.headers.get('location'), 'https://example.com/');
});

t.test('upper-casing greeting: a JSON-encoded string', async (t) => {
  const res = await s.call('hello', { query: 'name=abc' });
  t.equal(res.status, 200);
  t.equal(res.headers.get('content-type'), 'application/json');
  t.equal(await res.text(), '"Hello ABC!"');
});

t.test('name lookup order: query, then body, then World', async (t) => {
  t.equal(await (await s.call('hello', { query: 'name=q', body: '{"name":"b"}' })).text(), '"Hello Q!"');
  t.equal(await (await s.call('hello', { body: '{"name":"b"}' })).text(), '"Hello B!"');
  t.equal(await (await s.call('hello')).text(), '"Hello WORLD!"');
});

t.test('an empty call reaches the handler with {}; a non-JSON body with undefined', async (t) => {
  t.same(await (await s.call('public_echo', { key: null })).json(), { received: {} });
  t.same(await (await s.call('public_echo', { key: null, body: '' })).json(), { received: {} });
  t.same(await (await s.call('public_echo', { key: null, body: 'not json' })).json(), { received: 'undefined' });
  t.same(await (await s.call('public_echo', { key: null, body: '[1,2]' })).json(), { received: [1, 2] });
});

t.test('caller via fetch with SERVICE_API_KEY: the callee body, encoded again', async (t) => {
  const res = await s.call('caller', { query: 'name=abc' });
  t.equal(res.status, 200);
  t.equal(await res.text(), JSON.stringify('"Hello ABC!"'));
});

t.test('caller via require("sdk"): the callee body, encoded again', async (t) => {
  const res = await s.call('caller_sdk', { query: 'name=abc' });
  t.equal(res.status, 200);
  t.equal(await res.text(), JSON.stringify('"Hello ABC!"'));
});

t.test('sdk.invoke inside a function behaves as HTTP: headers, auth and errors', async (t) => {
  const out = (await (await s.call('caller_sdk_details')).json()) as {
    ok: { statusCode: number; headers: Record<string, string>; body: string };
    noKey: { statusCode: number; body: { errorCode: string } };
    missing: { statusCode: number; body: { errorCode: string } };
  };
  t.equal(out.ok.statusCode, 200);
  t.equal(out.ok.body, '"Hello X!"');
  t.match(out.ok.headers['x-service-request-id'], /^[0-9a-f]{32}$/);
  t.match(out.ok.headers['x-service-duration-usecs'], /^\d+\.\d{3}$/);
  t.equal(out.ok.headers['content-type'], 'application/json');
  t.equal(out.noKey.statusCode, 401);
  t.equal(out.noKey.body.errorCode, 'ERR_NO_KEY');
  t.equal(out.missing.statusCode, 404);
  t.equal(out.missing.body.errorCode, 'ERR_NO_SUCH_FUNCTION');
});

t.test('HEAD runs the handler and returns status and headers without a body', async (t) => {
  const res = await s.call('public_html', { key: null, method: 'HEAD', query: 'name=Ada' });
  t.equal(res.status, 200);
  t.match(res.headers.get('content-type'), /^text\/html/);
  t.ok(Number(res.headers.get('content-length')) > 0, 'Content-Length of the body that was not sent');
  t.equal(await res.text(), '');
});

t.test('every method reaches the handler', async (t) => {
  for (const method of ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']) {
    const res = await s.call('hello', { method, query: 'name=m' });
    t.equal(res.status, 200, method);
    t.equal(await res.text(), '"Hello M!"', method);
  }
});

t.test('every response carries X-Service-Request-ID and X-Service-Duration-Usecs', async (t) => {
  const ids = new Set<string>();
  for (const res of [await s.call('hello'), await s.call('hello', { key: null }), await s.call('missing')]) {
    const { requestId, duration } = serviceHeaders(res);
    t.match(requestId, /^[0-9a-f]{32}$/);
    t.match(duration, /^\d+\.\d{3}$/);
    ids.add(requestId!);
    await res.arrayBuffer();
  }
  t.equal(ids.size, 3, 'request ids are unique');
});
