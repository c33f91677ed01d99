import { rmSync } from 'node:fs';
import * as path from 'node:path';
import t, { type Test } from 'tap';
import { fixture, reopenTestServer, serviceHeaders, startTestServer, type TestServer } from '../helpers/server';

// Every row of SPEC §2's error table, with its JSON shape and headers.
let s: TestServer;
const probes = fixture('probes-node8');

t.before(async () => {
  s = await startTestServer({ limits: { requestBodyBytes: 1024, maxInFlightPerFunction: 2, responseBodyBytes: 6 * 1024 * 1024 } });
  await s.deploy('ok', probes, 'ok');
  await s.deploy('slow', probes, 'slow');
  await s.deploy('throws', probes, 'throws');
  await s.deploy('library_throws', probes, 'libraryThrows');
  await s.deploy('spin', probes, 'spin', { timeoutMs: 300 });
  await s.deploy('buffer_alloc', probes, 'bufferAlloc');
  await s.deploy('bad_status', probes, 'badStatus');
  await s.deploy('bad_header', probes, 'badHeader');
  await s.deploy('header_injection', probes, 'headerInjection');
  await s.deploy('big_response', probes, 'bigResponse');
});
t.teardown(() => s.stop());

async function expectError(t: Test, res: Response, status: number, code: string): Promise<Record<string, unknown>> {
  t.equal(res.status, status, `status ${status}`);
  t.equal(res.headers.get('content-type'), 'application/json');
  const { requestId, duration } = serviceHeaders(res);
  t.match(requestId, /^[0-9a-f]{32}$/);
  t.match(duration, /^\d+\.\d{3}$/);
  const body = (await res.json()) as Record<string, unknown>;
  t.equal(body.errorCode, code);
  t.type(body.message, 'string');
  t.ok((body.message as string).length > 0, 'message says what happened');
  t.equal(body.requestId, requestId, 'requestId in the body matches the header');
  return body;
}

t.test('401 ERR_NO_KEY: secured function without a key', async (t) => {
  await expectError(t, await s.call('ok', { key: null }), 401, 'ERR_NO_KEY');
});

t.test('403 ERR_BAD_KEY: wrong key, or a key of another account', async (t) => {
  await expectError(t, await s.call('ok', { key: 'isk_wrong' }), 403, 'ERR_BAD_KEY');
  const other = await s.createAccount();
  await expectError(t, await s.call('ok', { key: other.apiKey }), 403, 'ERR_BAD_KEY');
  t.ok(s.internals.catalog.verifyKey(other.accountId, other.apiKey), 'the other key is valid for its own account (and now remembered)');
  await expectError(t, await s.call('ok', { key: other.apiKey }), 403, 'ERR_BAD_KEY');
  t.notOk(s.internals.catalog.verifyKey(s.accountId, other.apiKey), 'a remembered key still matches only its own account');
  // The auth order: a bad key is 403 even when the function does not exist.
  await expectError(t, await s.call('does_not_exist', { key: other.apiKey }), 403, 'ERR_BAD_KEY');
  await expectError(t, await s.call('does_not_exist', { key: null }), 401, 'ERR_NO_KEY');
});

t.test('404 ERR_NO_SUCH_FUNCTION: only after the key is accepted', async (t) => {
  await expectError(t, await s.call('does_not_exist'), 404, 'ERR_NO_SUCH_FUNCTION');
  await expectError(t, await s.call('public_nothing', { key: null }), 404, 'ERR_NO_SUCH_FUNCTION');
  await expectError(t, await s.call('bad..name'), 404, 'ERR_NO_SUCH_FUNCTION');
});

t.test('413 ERR_PAYLOAD_TOO_LARGE: body over the limit', async (t) => {
  await expectError(t, await s.call('ok', { body: 'x'.repeat(2048) }), 413, 'ERR_PAYLOAD_TOO_LARGE');
  const fine = await s.call('ok', { body: 'x'.repeat(1000) });
  t.equal(fine.status, 200, 'a body under the limit passes');
});

t.test('500 ERR_FUNCTION_FAILED: the user error with the user stack only', async (t) => {
  const body = await expectError(t, await s.call('throws'), 500, 'ERR_FUNCTION_FAILED');
  t.equal(body.message, 'TypeError: the handler failed on purpose', 'the message keeps the error name');
  t.match(body.stack, /TypeError: the handler failed on purpose\n\s+at exports\.throws \(\/function\.js:\d+:\d+\)/);
  t.notMatch(body.stack, /islet:runtime|dist\/engine|node:internal|isolated-vm/, 'no host frames');
});

t.test("500 ERR_FUNCTION_FAILED: an error thrown inside islet's Buffer or URL shows the user's frames only", async (t) => {
  for (const lib of ['buffer', 'url']) {
    const body = await expectError(t, await s.call('library_throws', { query: `lib=${lib}` }), 500, 'ERR_FUNCTION_FAILED');
    t.match(body.stack, /^(Type|Range)Error: .*\n\s+at exports\.libraryThrows \(\/function\.js:\d+:\d+\)/, `${lib}: the stack starts at the user's call`);
    t.notMatch(body.stack, /islet:/, `${lib}: no frames of islet's libraries or runtime`);
  }
});

t.test('500 ERR_FUNCTION_FAILED: module code that fails on a cold start answers its own error, every time', async (t) => {
  // Deployed twice (and validated) while it still loads; its first call comes after it stopped
  // loading, once a rollback serves version 1 again, whose deploy's instance is gone: a cold start.
  // A loaded machine may take longer than the window to validate: then a wider one is tried.
  let failAfter = 0;
  for (const windowMs of [600, 6_000, 40_000]) {
    failAfter = Date.now() + windowMs;
    try {
      for (let i = 0; i < 2; i++) await s.deploy('late_failure', fixture('late-failure-node8'), 'hello', { env: { FAIL_AFTER: String(failAfter) } });
      break;
    } catch (err) {
      if (windowMs === 20_000 || !/module code failed on a later cold start/.test(String((err as Error).message))) throw err;
    }
  }
  await new Promise((r) => setTimeout(r, Math.max(0, failAfter - Date.now()) + 20));
  const rollback = await fetch(`${s.url}/v2/accounts/${s.accountId}/functions/late_failure/rollback`, {
    method: 'POST',
    headers: { 'X-Service-Api-Key': s.apiKey, 'content-type': 'application/json' },
    body: '{}',
  });
  t.equal(rollback.status, 200, await rollback.clone().text());
  const answers = await Promise.all([s.call('late_failure'), s.call('late_failure')]);
  for (const res of [...answers, await s.call('late_failure')]) {
    const body = await expectError(t, res, 500, 'ERR_FUNCTION_FAILED');
    t.match(body.message, /module code failed on a later cold start/, 'the error thrown by the module, not a missing handler');
    t.match(body.stack, /RangeError: module code failed on a later cold start\n\s+at .*\/function\.js:4/);
  }
  t.equal((await s.call('ok')).status, 200, 'other functions are untouched');
});

t.test('500 ERR_RESOURCE_LIMIT: over the memory limit', async (t) => {
  await expectError(t, await s.call('buffer_alloc'), 500, 'ERR_RESOURCE_LIMIT');
});

t.test('502 ERR_BAD_RESPONSE: invalid explicit responses, naming the problem', async (t) => {
  const status = await expectError(t, await s.call('bad_status'), 502, 'ERR_BAD_RESPONSE');
  t.match(status.message, /statusCode.*700/);
  const header = await expectError(t, await s.call('bad_header'), 502, 'ERR_BAD_RESPONSE');
  t.match(header.message, /X-Count.*string.*number/);
  const injection = await expectError(t, await s.call('header_injection'), 502, 'ERR_BAD_RESPONSE');
  t.match(injection.message, /X-A/);
  const big = await expectError(t, await s.call('big_response'), 502, 'ERR_BAD_RESPONSE');
  t.match(big.message, /over the limit/);
});

t.test('503 ERR_OVERLOADED: more calls in flight than the function allows', async (t) => {
  const calls = [0, 1, 2, 3].map(() => s.call('slow', { body: '{"ms":300}' }));
  const responses = await Promise.all(calls);
  const statuses = responses.map((r) => r.status).sort();
  t.same(statuses, [200, 200, 503, 503]);
  const overloaded = responses.find((r) => r.status === 503)!;
  await expectError(t, overloaded, 503, 'ERR_OVERLOADED');
  for (const r of responses) if (!r.bodyUsed) await r.arrayBuffer();
});

t.test('504 ERR_TIMEOUT: the handler ran past its timeout', async (t) => {
  await expectError(t, await s.call('spin'), 504, 'ERR_TIMEOUT');
});

t.test('500 ERR_INTERNAL: a broken store answers an error and the server keeps running', async (t) => {
  const manifest = s.engine.describe(s.accountId, 'ok')!;
  const { dataDir, accountId, apiKey } = s;
  await s.stop();
  rmSync(path.join(dataDir, 'functions', accountId, 'ok', 'versions', String(manifest.version), 'code'), { recursive: true });
  s = await reopenTestServer(dataDir, accountId, apiKey, { requestBodyBytes: 1024, maxInFlightPerFunction: 2 });
  await expectError(t, await s.call('ok'), 500, 'ERR_INTERNAL');
  const health = await fetch(`${s.url}/healthz`);
  t.equal(health.status, 200, 'server still up');
  t.equal((await s.call('throws')).status, 500, 'other functions still served');
});

t.test('unknown routes are JSON 404s with the service headers', async (t) => {
  const res = await fetch(`${s.url}/nope`);
  await expectError(t, res, 404, 'ERR_NOT_FOUND');
});
