import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import t from 'tap';
import { functionFolder } from '../helpers/functions';
import { ROOT, startTestServer, type TestServer } from '../helpers/server';

// Issue 26, item 9: the small frictions of the developer's loop, each as a user meets it.
let s: TestServer;

t.before(async () => {
  s = await startTestServer();
  await s.deploy('target', functionFolder('exports.handler = () => ({ from: "target" });\n'), 'handler');
  // Answers with the Response it fetched from another function of the same server, as it is.
  const relay = functionFolder(`module.exports = {
  async fetch(request, env) {
    return fetch(env.SELF + '/v2/run/' + env.ACCOUNT + '/target', { headers: { 'X-Service-Api-Key': env.KEY } });
  },
};
`);
  await s.deploy('relay', relay, 'default', { env: { SELF: s.url, ACCOUNT: s.accountId, KEY: s.apiKey } });
  await s.deploy('nothing_fetch', functionFolder('module.exports = { fetch: () => new Response(null, { status: 204 }) };\n'), 'default');
  await s.deploy('nothing_seed', functionFolder('exports.handler = (b, context) => new context.HTTPResponse({ statusCode: 204 });\n'), 'handler');
});
t.teardown(() => s.stop());

t.test('a function answering with a fetched Response sends the server headers once', async (t) => {
  const res = await s.call('relay');
  t.equal(res.status, 200);
  t.same(await res.json(), { from: 'target' });
  // fetch joins repeated headers with ", ": a second copy shows as "1, 1".
  t.equal(res.headers.get('x-service-version'), '1', "X-Service-Version once, the relay's");
  t.match(res.headers.get('x-service-request-id'), /^[0-9a-f]{32}$/, 'one request id');
  t.equal(res.headers.get('content-type'), 'application/json');
  t.equal(res.headers.get('uwebsockets'), null, 'no uWebSockets header');
});

t.test('no answer carries a uWebSockets header', async (t) => {
  for (const url of [`${s.url}/healthz`, `${s.url}/v2/run/${s.accountId}/target`, `${s.url}/nowhere`, `${s.consoleUrl}/console/`]) {
    const res = await fetch(url, { headers: { 'X-Service-Api-Key': s.apiKey } });
    await res.arrayBuffer();
    t.equal(res.headers.get('uwebsockets'), null, url);
  }
});

t.test('a 204 answer has no Content-Type (neither style)', async (t) => {
  for (const name of ['nothing_fetch', 'nothing_seed']) {
    const res = await s.call(name);
    t.equal(res.status, 204, name);
    t.equal(res.headers.get('content-type'), null, `${name}: no content-type`);
    t.equal(await res.text(), '');
  }
});

t.test('a run path without a function name says so, with no empty name in the message', async (t) => {
  for (const [suffix, key] of [
    ['', s.apiKey],
    ['/', s.apiKey],
    ['', null],
  ] as const) {
    const res = await fetch(`${s.url}/v2/run/${s.accountId}${suffix}`, { headers: key ? { 'X-Service-Api-Key': key } : {} });
    const body = (await res.json()) as { errorCode: string; message: string };
    t.equal(res.status, 404, `/v2/run/<account>${suffix}`);
    t.equal(body.errorCode, 'ERR_NO_SUCH_FUNCTION');
    t.equal(body.message, `the path names no function: call /v2/run/${s.accountId}/<function>`);
    t.notMatch(body.message, /  /, 'no double space');
  }
});

t.test('a key never used lists lastUsedAt as null (keys list --json)', async (t) => {
  const created = await fetch(`${s.url}/v2/accounts/${s.accountId}/keys`, {
    method: 'POST',
    headers: { 'X-Service-Api-Key': s.apiKey, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'unused', scope: 'invoke' }),
  });
  t.equal(created.status, 201);
  const { key } = (await created.json()) as { key: Record<string, unknown> };
  t.ok('lastUsedAt' in key, 'the new key has lastUsedAt');
  t.equal(key.lastUsedAt, null);
  const { keys } = (await (await fetch(`${s.url}/v2/accounts/${s.accountId}/keys`, { headers: { 'X-Service-Api-Key': s.apiKey } })).json()) as { keys: Record<string, unknown>[] };
  const unused = keys.find((k) => k.name === 'unused')!;
  t.ok('lastUsedAt' in unused, 'listed with lastUsedAt');
  t.equal(unused.lastUsedAt, null);
});

t.test('/healthz lists every runtime name served, python3 too', async (t) => {
  // An account's admin key reads the runtimes (anyone else gets the status alone, since the merge of main).
  const health = (await (await fetch(`${s.url}/healthz`, { headers: { 'X-Service-Api-Key': s.apiKey } })).json()) as { runtimes: string[] };
  t.same([...health.runtimes].sort(), ['node8', 'python2', 'python3']);
});

t.test("the README's verb table lists each verb once", async (t) => {
  const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const table = readme.slice(readme.indexOf('| verb | what it does |')).split('\n\n')[0]!;
  const verbs = [...table.matchAll(/^\| `([a-z]+(?: [a-z]+)?)[ `<]/gm)].map((m) => m[1]!);
  t.ok(verbs.includes('account limits'), 'account limits is in the table');
  const seen = new Set<string>();
  const twice = verbs.filter((v) => (seen.has(v) ? true : (seen.add(v), false)));
  t.same(twice, [], 'no verb twice');
});
