import { get, type IncomingMessage } from 'node:http';
import t from 'tap';
import { envelopeLimit } from '../../http/console-invoke';
import type { ConsoleAnswer } from '../../engine/wire';
import { startServer } from '../../http/server';
import { functionFolder } from '../helpers/functions';
import { startTestServer, type TestServer } from '../helpers/server';

// The console's port is an origin of its own: it serves the console and what the console calls,
// never a function's answer as a response. (test/browser/console-origin.test.ts checks it in a browser.)

const SOURCE = `
exports.echo = (body, context) => new context.HTTPResponse({
  statusCode: 201,
  headers: { 'Content-Type': 'text/html', 'Set-Cookie': 'tenant=1; Path=/', 'X-Own': 'yes' },
  body: JSON.stringify({ method: context.request.method, path: context.request.path, query: context.request.query, headers: context.request.headers, body: context.request.body.toString() }),
});
exports.bytes = () => new Uint8Array([0, 1, 2, 255]);
exports.moved = (body, context) => new context.HTTPResponse({ statusCode: 302, headers: { Location: 'https://elsewhere.example/' } });
`;

let s: TestServer;
t.before(async () => {
  s = await startTestServer();
  const folder = functionFolder(SOURCE);
  await s.deploy('echo', folder, 'echo');
  await s.deploy('public_bytes', folder, 'bytes');
  await s.deploy('public_moved', folder, 'moved');
});
t.teardown(() => s?.stop());

function invoke(call: Record<string, unknown>, init: { contentType?: string; raw?: string } = {}): Promise<Response> {
  return fetch(`${s.consoleUrl}/console/invoke`, {
    method: 'POST',
    headers: { 'content-type': init.contentType ?? 'application/json' },
    body: init.raw ?? JSON.stringify({ account: s.accountId, method: 'GET', path: '', query: '', headers: {}, body: '', ...call }),
  });
}

/** Headers a client sees that the console's copy leaves out: uWS's own. */
const TRANSPORT = new Set(['date', 'uwebsockets']);

t.test('the invoke route answers what the function port answers, as data in JSON', async (t) => {
  const body = Buffer.from('{"name":"Ada"}');
  const request = {
    function: 'echo',
    method: 'POST',
    path: '/items/7',
    query: 'lang=en',
    headers: { 'X-Service-Api-Key': s.apiKey, 'Content-Type': 'application/json', 'X-Two': 'a' },
    body: body.toString('base64'),
  };
  const res = await invoke(request);
  t.equal(res.status, 200);
  t.equal(res.headers.get('content-type'), 'application/json');
  t.equal(res.headers.get('x-content-type-options'), 'nosniff');
  t.match(res.headers.get('content-security-policy'), /^sandbox/);
  t.equal(res.headers.get('set-cookie'), null, "the function's Set-Cookie does not act on the console's origin");
  t.equal(res.headers.get('x-own'), null, "nor any other header of the function's");
  const answer = (await res.json()) as ConsoleAnswer;
  t.equal(answer.status, 201);
  t.equal(answer.statusText, 'Created');
  const seen = JSON.parse(Buffer.from(answer.body, 'base64').toString()) as { method: string; path: string; query: unknown; headers: Record<string, string>; body: string };
  t.same(seen, {
    method: 'POST',
    path: '/items/7',
    query: { lang: 'en' },
    headers: { 'x-service-key-name': 'default', 'x-service-key-scope': 'admin', 'content-type': 'application/json', 'x-two': 'a', 'content-length': String(body.length) },
    body: '{"name":"Ada"}',
  });

  const direct = await fetch(`${s.url}/v2/run/${s.accountId}/echo/items/7?lang=en`, {
    method: 'POST',
    headers: { 'X-Service-Api-Key': s.apiKey, 'Content-Type': 'application/json', 'X-Two': 'a' },
    body,
  });
  await direct.text();
  const names = (list: [string, string][]) =>
    list
      .map(([k]) => k)
      .filter((k) => !TRANSPORT.has(k))
      .sort();
  t.same(names(answer.headers), names([...direct.headers.entries()]), 'the same header names as a client of the function port gets');
  const value = (name: string) => answer.headers.find(([k]) => k === name)?.[1];
  t.equal(value('set-cookie'), 'tenant=1; Path=/', "the function's headers are shown");
  t.equal(value('content-security-policy'), direct.headers.get('content-security-policy'));
  t.equal(value('content-length'), String(Buffer.from(answer.body, 'base64').length));
  t.match(value('x-service-request-id'), /^[0-9a-f]{32}$/);
});

t.test('binary bodies, HEAD, redirects and refusals come back as the function port gives them', async (t) => {
  const bytes = (await (await invoke({ function: 'public_bytes' })).json()) as ConsoleAnswer;
  t.same([...Buffer.from(bytes.body, 'base64')], [0, 1, 2, 255]);
  const head = (await (await invoke({ function: 'public_bytes', method: 'HEAD' })).json()) as ConsoleAnswer;
  t.equal(head.body, '', 'HEAD: no body');
  t.equal(head.headers.find(([k]) => k === 'content-length')?.[1], '4', "but the body's length");
  const moved = (await (await invoke({ function: 'public_moved' })).json()) as ConsoleAnswer;
  t.equal(moved.status, 302, 'a redirect is shown, not followed');
  t.equal(moved.headers.find(([k]) => k === 'location')?.[1], 'https://elsewhere.example/');
  const noKey = (await (await invoke({ function: 'echo' })).json()) as ConsoleAnswer;
  t.equal(noKey.status, 401);
  t.equal(JSON.parse(Buffer.from(noKey.body, 'base64').toString()).errorCode, 'ERR_NO_KEY');
  const other = await s.createAccount();
  const otherKey = (await (await invoke({ function: 'echo', headers: { 'X-Service-Api-Key': other.apiKey } })).json()) as ConsoleAnswer;
  t.equal(otherKey.status, 403, "another account's key is refused as on the function port");
});

t.test('a malformed request is refused with a message naming the problem', async (t) => {
  const cases: [string, Response | Promise<Response>, RegExp][] = [
    ['not JSON', invoke({}, { raw: '{"account":' }), /not valid JSON/],
    ['a form', invoke({}, { contentType: 'text/plain', raw: '{}' }), /takes a JSON request/],
    ['an array', invoke({}, { raw: '[]' }), /JSON object/],
    ['no function', invoke({}), /function must be a string/],
    ['a bad method', invoke({ function: 'echo', method: 'GET /x' }), /not an HTTP method/],
    ['a path without /', invoke({ function: 'echo', path: 'items' }), /path "items" must start with \//],
    ['a path with a query', invoke({ function: 'echo', path: '/a?b=1' }), /no \? or #/],
    ['a space', invoke({ function: 'echo', path: '/a b' }), /visible ASCII/],
    ['a header with CR LF', invoke({ function: 'echo', headers: { 'x-a': 'b\r\nx-injected: 1' } }), /without CR, LF or NUL/],
    ['a header name', invoke({ function: 'echo', headers: { 'x a': 'b' } }), /not a valid HTTP header name/],
    ['a body not base64', invoke({ function: 'echo', body: 'not base64!' }), /base64/],
  ];
  for (const [what, pending, message] of cases) {
    const res = await pending;
    t.equal(res.status, 400, what);
    const error = (await res.json()) as { errorCode: string; message: string };
    t.equal(error.errorCode, 'ERR_BAD_REQUEST', what);
    t.match(error.message, message, what);
  }
  const huge = await fetch(`${s.consoleUrl}/console/invoke`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: 'x'.repeat(envelopeLimit(s.engine.limits.requestBodyBytes) + 1),
  });
  t.equal(huge.status, 413);
  t.equal(((await huge.json()) as { errorCode: string }).errorCode, 'ERR_PAYLOAD_TOO_LARGE');
  const overBody = Buffer.alloc(s.engine.limits.requestBodyBytes + 1).toString('base64');
  const over = (await (await invoke({ function: 'echo', method: 'POST', headers: { 'X-Service-Api-Key': s.apiKey }, body: overBody })).json()) as ConsoleAnswer;
  t.equal(over.status, 413, "a body over the function's limit is refused as on the function port");
});

t.test("the console's port never answers a function, and the function port does not serve the console", async (t) => {
  for (const method of ['GET', 'POST', 'HEAD']) {
    const res = await fetch(`${s.consoleUrl}/v2/run/${s.accountId}/public_bytes`, { method });
    t.equal(res.status, 404, `${method} /v2/run on the console's port`);
    t.equal(res.headers.get('content-type'), 'application/json');
    t.equal(res.headers.get('x-content-type-options'), 'nosniff');
    if (method !== 'HEAD') t.match(((await res.json()) as { message: string }).message, `call them on the function port, ${s.url}/v2/run/`);
  }
  const root = await fetch(`${s.consoleUrl}/`, { redirect: 'manual' });
  t.equal(root.status, 302);
  t.equal(root.headers.get('location'), '/console/');
  for (const path of ['/console', '/console/', '/console/app.js']) {
    const res = await fetch(`${s.url}${path}`, { redirect: 'manual' });
    t.equal(res.status, 302, `${path} on the function port`);
    t.equal(res.headers.get('location'), `${s.consoleUrl}/console/`, 'leads to the console on its own port');
  }
  const named = await new Promise<IncomingMessage>((resolve, reject) => get(`${s.url}/console/`, { headers: { host: `localhost:${s.server.port}` } }, resolve).on('error', reject));
  named.resume();
  t.equal(named.headers.location, `http://localhost:${s.server.consolePort}/console/`, 'under the host name the browser used');
  const whoami = await fetch(`${s.consoleUrl}/v2/whoami`, { headers: { 'X-Service-Api-Key': s.apiKey } });
  t.match(await whoami.json(), { accountId: s.accountId }, "the management API is on the console's port");
  const list = await fetch(`${s.consoleUrl}/v2/accounts/${s.accountId}/functions`, { headers: { 'X-Service-Api-Key': s.apiKey } });
  t.equal(list.status, 200);
});

t.test('an operator-set console origin, and no console at all', async (t) => {
  const behindProxy = await startServer({ engine: s.engine, host: '127.0.0.1', port: 0, consolePort: 0, consoleOrigin: 'https://console.example.com' });
  t.teardown(() => behindProxy.close());
  const res = await fetch(`${behindProxy.url}/console/`, { redirect: 'manual' });
  t.equal(res.headers.get('location'), 'https://console.example.com/console/');
  const none = await startServer({ engine: s.engine, host: '127.0.0.1', port: 0 });
  t.teardown(() => none.close());
  t.equal(none.consoleUrl, undefined);
  const off = await fetch(`${none.url}/console/`, { redirect: 'manual' });
  t.equal(off.status, 404);
  t.match(((await off.json()) as { message: string }).message, /serves no console/);
});
