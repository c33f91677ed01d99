import { connect } from 'node:net';
import t from 'tap';
import { invoke } from '../../sdk';
import { fixture, startTestServer, type TestServer } from '../helpers/server';

// The HTTP layer: aborted requests, chunked bodies, large responses, the host sdk.
let s: TestServer;
const probes = fixture('probes-node8');
const seed = fixture('seed-node8');

t.before(async () => {
  s = await startTestServer({ limits: { responseBodyBytes: 8 * 1024 * 1024 } });
  await s.deploy('context', probes, 'context');
  await s.deploy('big', probes, 'bigResponse');
  await s.deploy('hello', seed, 'hello');
  await s.deploy('public_slow', probes, 'slow');
});
t.teardown(() => s.stop());

function rawRequest(text: string, { closeAfterMs }: { closeAfterMs?: number } = {}): Promise<string> {
  const { port } = new URL(s.url);
  return new Promise((resolve) => {
    const socket = connect(Number(port), '127.0.0.1', () => socket.write(text));
    let data = '';
    socket.on('data', (chunk) => (data += chunk.toString()));
    socket.on('close', () => resolve(data));
    socket.on('error', () => resolve(data));
    if (closeAfterMs !== undefined) setTimeout(() => socket.destroy(), closeAfterMs);
  });
}

t.test('a client that disconnects mid-body or mid-call leaves the server serving', async (t) => {
  const path = `/v2/run/${s.accountId}/context`;
  await rawRequest(`POST ${path} HTTP/1.1\r\nHost: x\r\nX-Service-Api-Key: ${s.apiKey}\r\nContent-Length: 1000\r\n\r\n{"partial":`, { closeAfterMs: 50 });
  await rawRequest(`POST /v2/run/${s.accountId}/public_slow HTTP/1.1\r\nHost: x\r\nContent-Length: 11\r\n\r\n{"ms":200}\n`, { closeAfterMs: 30 });
  await new Promise((r) => setTimeout(r, 300));
  const res = await s.call('hello', { query: 'name=after' });
  t.equal(res.status, 200);
  t.equal(await res.text(), '"Hello AFTER!"');
});

t.test('a chunked request body reaches the handler whole', async (t) => {
  const reply = await rawRequest(
    `POST /v2/run/${s.accountId}/context HTTP/1.1\r\nHost: x\r\nX-Service-Api-Key: ${s.apiKey}\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n5\r\n{"a":\r\n3\r\n42}\r\n0\r\n\r\n`,
  );
  t.match(reply, /^HTTP\/1\.1 200/);
  t.match(reply, /"body":\{"a":42\}/);
});

t.test('a 7 MB response arrives whole (sent with backpressure)', async (t) => {
  const res = await s.call('big');
  t.equal(res.status, 200);
  const body = await res.text();
  t.equal(body.length, 7 * 1024 * 1024 + 2, 'the JSON string of 7 MiB characters');
});

t.test('the host sdk: invoke(accountId, functionName, apiKey, body) over HTTP', async (t) => {
  const ok = await invoke(s.accountId, 'hello', s.apiKey, JSON.stringify({ name: 'sdk' }), { url: s.url });
  t.equal(ok.statusCode, 200);
  t.equal(ok.body, '"Hello SDK!"');
  t.match(ok.headers['x-service-request-id'], /^[0-9a-f]{32}$/);
  const denied = await invoke(s.accountId, 'hello', 'isk_wrong', '{}', { url: s.url });
  t.equal(denied.statusCode, 403);
  t.equal((JSON.parse(denied.body) as { errorCode: string }).errorCode, 'ERR_BAD_KEY');
});

t.test('percent-encoded account and function names in the URL are decoded', async (t) => {
  const encoded = [...s.accountId].map((c) => `%${c.charCodeAt(0).toString(16).padStart(2, '0')}`).join('');
  const res = await fetch(`${s.url}/v2/run/${encoded}/hell%6F?name=abc`, { headers: { 'X-Service-Api-Key': s.apiKey } });
  t.equal(res.status, 200);
  const plain = await fetch(`${s.url}/v2/run/${s.accountId}/hello?name=abc`, { headers: { 'X-Service-Api-Key': s.apiKey } });
  t.equal(await res.text(), await plain.text());
  const bad = await fetch(`${s.url}/v2/run/${s.accountId}/hell%FF`, { headers: { 'X-Service-Api-Key': s.apiKey } });
  t.equal(bad.status, 404, 'a name that does not decode is looked up as it is, and not found');
});
