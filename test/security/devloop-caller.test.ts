import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import t, { type Test } from 'tap';
import { functionFolder } from '../helpers/functions';
import { startTestServer, type TestServer } from '../helpers/server';

// Issue 26, item 5: the caller's key never reaches a function's headers (header-logging
// middleware wrote it into logs others read); the function gets the key's name and scope instead.
let s: TestServer;
let invokeKey: string;

const SEED = 'exports.handler = (body, context) => context.request.headers;\n';
const FETCH = 'module.exports = { fetch: (request) => Response.json(Object.fromEntries(request.headers)) };\n';
const CALLER = `const sdk = require('sdk');
exports.handler = async () => JSON.parse((await sdk.invoke(process.env.SERVICE_ACCOUNT_ID, 'seed', process.env.SERVICE_API_KEY, '{}')).body);
`;

t.before(async () => {
  s = await startTestServer();
  const created = await fetch(`${s.url}/v2/accounts/${s.accountId}/keys`, {
    method: 'POST',
    headers: { 'X-Service-Api-Key': s.apiKey, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'hello-calls', scope: 'invoke' }),
  });
  invokeKey = ((await created.json()) as { apiKey: string }).apiKey;
  await s.deploy('seed', functionFolder(SEED), 'handler');
  await s.deploy('public_seed', functionFolder(SEED), 'handler');
  await s.deploy('fetchy', functionFolder(FETCH), 'default');
  await s.deploy('caller', functionFolder(CALLER), 'handler', { env: { SERVICE_API_KEY: invokeKey } });
  const py = mkdtempSync(path.join(tmpdir(), 'islet-caller-py-'));
  writeFileSync(path.join(py, 'function.py'), 'def handler(body, req):\n    return req.headers\n');
  await s.deployPython('py', py, 'handler');
});
t.teardown(() => s.stop());

async function headersSeen(t: Test, name: string, init: { key?: string | null; headers?: Record<string, string> } = {}): Promise<Record<string, string>> {
  const res = await s.call(name, { key: init.key, headers: init.headers });
  t.equal(res.status, 200, name);
  return (await res.json()) as Record<string, string>;
}

t.test('neither runtime nor style sees the key; each sees its name and scope', async (t) => {
  for (const name of ['seed', 'fetchy', 'py']) {
    const admin = await headersSeen(t, name);
    t.notOk('x-service-api-key' in admin, `${name}: no key header`);
    t.notOk(Object.values(admin).includes(s.apiKey), `${name}: the key is in no header`);
    t.equal(admin['x-service-key-name'], 'default', `${name}: the key's name`);
    t.equal(admin['x-service-key-scope'], 'admin', `${name}: its scope`);
    const invoker = await headersSeen(t, name, { key: invokeKey });
    t.notOk(Object.values(invoker).includes(invokeKey), `${name}: the invoke key is in no header`);
    t.equal(invoker['x-service-key-name'], 'hello-calls');
    t.equal(invoker['x-service-key-scope'], 'invoke');
  }
});

t.test("sdk.invoke from a function: the callee sees the caller key's name, not the key", async (t) => {
  const seen = await headersSeen(t, 'caller');
  t.notOk('x-service-api-key' in seen);
  t.notOk(Object.values(seen).includes(invokeKey));
  t.equal(seen['x-service-key-name'], 'hello-calls');
  t.equal(seen['x-service-key-scope'], 'invoke');
});

t.test('a public function called without a key is told of none, and cannot be told a false one', async (t) => {
  const none = await headersSeen(t, 'public_seed', { key: null, headers: { 'X-Service-Key-Name': 'default', 'X-Service-Key-Scope': 'admin' } });
  t.notOk('x-service-key-name' in none, 'a caller cannot name a key it did not send');
  t.notOk('x-service-key-scope' in none);
  const badKey = await headersSeen(t, 'public_seed', { key: 'isk_not_a_key' });
  t.notOk('x-service-api-key' in badKey, 'not even a key that is no key');
  t.notOk('x-service-key-name' in badKey);
  const withKey = await headersSeen(t, 'public_seed', { key: invokeKey, headers: { 'X-Service-Key-Name': 'default' } });
  t.equal(withKey['x-service-key-name'], 'hello-calls', "a valid key's own name, over the caller's header");
});

t.test("the console's invoke route hands the key on apart too", async (t) => {
  const res = await fetch(`${s.consoleUrl}/console/invoke`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ account: s.accountId, function: 'seed', method: 'GET', path: '', query: '', headers: { 'X-Service-Api-Key': invokeKey }, body: '' }),
  });
  const answer = (await res.json()) as { status: number; body: string };
  t.equal(answer.status, 200);
  const seen = JSON.parse(Buffer.from(answer.body, 'base64').toString('utf8')) as Record<string, string>;
  t.notOk('x-service-api-key' in seen);
  t.equal(seen['x-service-key-name'], 'hello-calls');
});
