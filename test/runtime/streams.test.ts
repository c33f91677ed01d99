import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { request as undiciRequest } from 'undici';
import { eventually } from '../helpers/supervised';
import { fixture, startTestServer, type TestServer } from '../helpers/server';

// Answers whose bodies stream (issue 25, item 1), fetch style: each chunk as the function makes
// it, chunked, pulled as the client reads, cancelled when the client leaves, cut at the timeout.
let s: TestServer;
let gate: Server;
/** Resolved by the test to let the function's second event go. */
let openGate: () => void = () => undefined;
const gateOpened = new Promise<void>((resolve) => (openGate = resolve));
const MiB = 1024 * 1024;

t.before(async () => {
  gate = createServer((req, res) => void gateOpened.then(() => res.end('go')));
  await new Promise<void>((resolve) => gate.listen(0, '127.0.0.1', resolve));
  s = await startTestServer({ engine: { allowPrivateEgress: true } });
  await s.engine.deploy(s.accountId, { name: 'streams', runtime: 'node8', file: 'worker.mjs', entrypoint: 'default', env: {}, timeoutMs: 60_000 }, { dir: fixture('streams-node8') });
  await s.engine.deploy(s.accountId, { name: 'small', runtime: 'node8', file: 'worker.mjs', entrypoint: 'default', env: {}, memoryMb: 16 }, { dir: fixture('streams-node8') });
  await s.engine.deploy(s.accountId, { name: 'short', runtime: 'node8', file: 'worker.mjs', entrypoint: 'default', env: {}, timeoutMs: 800 }, { dir: fixture('streams-node8') });
});
t.teardown(async () => {
  openGate();
  gate.close();
  await s.stop();
});

function url(name: string, path: string, query = ''): string {
  return `${s.url}/v2/run/${s.accountId}/${name}${path}${query ? `?${query}` : ''}`;
}

async function logLines(name: string): Promise<{ level: string; message: string; code?: string }[]> {
  return s.engine.readLogs(s.accountId, name, {});
}

t.test('each chunk is sent as the function makes it: the first event arrives before the second is made', async (t) => {
  const gateUrl = `http://127.0.0.1:${(gate.address() as AddressInfo).port}/`;
  const res = await fetch(url('streams', '/events', `gate=${encodeURIComponent(gateUrl)}`), { headers: { 'X-Service-Api-Key': s.apiKey } });
  t.equal(res.status, 200);
  t.equal(res.headers.get('content-type'), 'text/event-stream');
  t.equal(res.headers.get('transfer-encoding'), 'chunked');
  t.equal(res.headers.get('content-length'), null);
  const reader = res.body!.getReader();
  const first = await reader.read();
  t.equal(new TextDecoder().decode(first.value), 'data: first\n\n', 'the first event came while the second waited for the gate');
  openGate();
  let rest = '';
  for (let next = await reader.read(); !next.done; next = await reader.read()) rest += new TextDecoder().decode(next.value);
  t.equal(rest, 'data: second\n\n');
});

/** The `_count` of a histogram of the streams function in a scrape of /metrics (0 when it has none yet). */
async function histogramCount(name: string): Promise<number> {
  const text = await (await fetch(`${s.url}/metrics`, { headers: { 'X-Service-Api-Key': s.apiKey } })).text();
  const m = new RegExp(`^${name}_count\\{account="${s.accountId}",function="streams"\\} (\\d+)$`, 'm').exec(text);
  return m ? Number(m[1]) : 0;
}

t.test("the call's log line and /metrics record a streamed answer's time to its first byte and to its end", async (t) => {
  const events: { requestId: string; firstByteUs?: number; streamEndUs?: number }[] = [];
  const listen = (event: unknown) => events.push(event as (typeof events)[number]);
  subscribe('islet:call:end', listen);
  t.teardown(() => unsubscribe('islet:call:end', listen));
  const firstBefore = await histogramCount('islet_function_stream_first_byte_seconds');
  const endBefore = await histogramCount('islet_function_stream_end_seconds');
  const res = await fetch(url('streams', '/paced', 'first=300&end=600'), { headers: { 'X-Service-Api-Key': s.apiKey } });
  t.equal(await res.text(), 'first, last');
  const requestId = res.headers.get('x-service-request-id');
  let line: string | undefined;
  t.ok(
    await eventually(async () => {
      line = (await s.engine.readLogs(s.accountId, 'streams', {})).find((e) => e.level === 'call' && e.requestId === requestId)?.message;
      return line !== undefined;
    }, 10_000),
    'the call is logged',
  );
  const m = /^GET 200 [\d.]+ ms handler, [\d.]+ ms total, first byte ([\d.]+) ms, end ([\d.]+) ms$/.exec(line ?? '');
  t.ok(m, `the line has both times: ${line}`);
  // Lower bounds only: a loaded machine makes any call slower, never faster.
  t.ok(Number(m?.[1]) >= 300, `the first byte came after the function's 300 ms (${m?.[1]} ms)`);
  t.ok(Number(m?.[2]) >= 600, `the end after its 600 ms (${m?.[2]} ms)`);
  t.ok(Number(m?.[2]) > Number(m?.[1]), 'the end after the first byte');
  const event = events.find((e) => e.requestId === requestId);
  t.ok(event !== undefined && event.firstByteUs! >= 300_000 && event.streamEndUs! >= 600_000, `islet:call:end carries both (${event?.firstByteUs} µs, ${event?.streamEndUs} µs)`);
  t.ok(await eventually(async () => (await histogramCount('islet_function_stream_first_byte_seconds')) === firstBefore + 1, 10_000), "the first byte's histogram counted it");
  t.ok(await eventually(async () => (await histogramCount('islet_function_stream_end_seconds')) === endBefore + 1, 10_000), "the end's histogram counted it");
});

t.test('a slow client holds the stream back: nothing is pulled while the socket is full', async (t) => {
  const res = await undiciRequest(url('streams', '/endless'), { headers: { 'X-Service-Api-Key': s.apiKey } });
  t.equal(res.statusCode, 200);
  // Read nothing for a while: the kernel's buffers fill, then the server stops pulling.
  await sleep(1500);
  const pullsRes = await fetch(url('streams', '/pulls'), { headers: { 'X-Service-Api-Key': s.apiKey } });
  const pulls = (await pullsRes.json()) as number;
  // Unbounded, a source of 64 KiB chunks makes thousands a second; held, what the sockets hold.
  t.ok(pulls > 0 && pulls < 400, `the function was pulled ${pulls} times (${((pulls * 64) / 1024).toFixed(1)} MiB) while the client read nothing`);
  await sleep(500);
  const again = (await (await fetch(url('streams', '/pulls'), { headers: { 'X-Service-Api-Key': s.apiKey } })).json()) as number;
  t.ok(again - pulls < 20, `and no more meanwhile (${again - pulls})`);
  res.body.on('error', () => undefined).destroy();
});

t.test('a client that goes away cancels the stream; the call is logged as ERR_CLIENT_GONE', async (t) => {
  const res = await undiciRequest(url('streams', '/endless'), { headers: { 'X-Service-Api-Key': s.apiKey } });
  for await (const chunk of res.body) {
    t.ok((chunk as Buffer).byteLength > 0, 'a chunk came');
    break;
  }
  t.ok(await eventually(async () => (await logLines('streams')).some((e) => /^cancelled after \d+ pulls: the client closed the connection$/.test(e.message)), 10_000), "the function's cancel() ran");
  t.ok(await eventually(async () => (await logLines('streams')).some((e) => e.level === 'call' && / 499 .*ERR_CLIENT_GONE$/.test(e.message)), 10_000), 'the call line says the client went away');
});

t.test("a client that goes away aborts the request's signal", async (t) => {
  const res = await undiciRequest(url('streams', '/signal'), { headers: { 'X-Service-Api-Key': s.apiKey } });
  for await (const chunk of res.body) {
    t.ok((chunk as Buffer).byteLength > 0, 'a chunk came');
    break;
  }
  t.ok(
    await eventually(async () => (await logLines('streams')).some((e) => /^signal aborted: true .*the client closed the connection/.test(e.message)), 10_000),
    "the function's abort listener ran, with the signal aborted and the reason",
  );
});

t.test('the timeout bounds the whole call: the body is cut and the connection closed, and the log says so', async (t) => {
  const res = await fetch(url('short', '/forever'), { headers: { 'X-Service-Api-Key': s.apiKey } });
  t.equal(res.status, 200);
  const reader = res.body!.getReader();
  const first = await reader.read();
  t.equal(new TextDecoder().decode(first.value), 'one chunk, then nothing');
  await t.rejects(reader.read(), 'the body is cut, not ended');
  t.ok(await eventually(async () => (await logLines('short')).some((e) => e.level === 'error' && e.code === 'ERR_TIMEOUT'), 10_000), 'the log says it timed out');
});

t.test('a stream that fails mid-way cuts the body; the log names the error', async (t) => {
  const res = await fetch(url('streams', '/fails'), { headers: { 'X-Service-Api-Key': s.apiKey } });
  t.equal(res.status, 200);
  await t.rejects(res.text(), 'the body is cut');
  t.ok(await eventually(async () => (await logLines('streams')).some((e) => e.level === 'error' && /TypeError: the source broke/.test(e.message)), 10_000));
});

t.test('100 MiB stream through a function of 128 MB, whole, with host memory to spare', async (t) => {
  const res = await undiciRequest(url('streams', '/bytes', `size=${100 * MiB}`), { headers: { 'X-Service-Api-Key': s.apiKey } });
  t.equal(res.statusCode, 200);
  let total = 0;
  let wrong = 0;
  for await (const chunk of res.body) {
    total += (chunk as Buffer).byteLength;
    if ((chunk as Buffer).some((b) => b !== 98)) wrong++;
  }
  t.equal(total, 100 * MiB, 'every byte arrived');
  t.equal(wrong, 0, 'as the function made them');
});

t.test("a stream is bounded by its function's memory, not by a size: a chunk over it cuts the body; 40 MiB in small chunks pass a 16 MB function", async (t) => {
  // The host refuses to hold a chunk past the instance's memory (ERR_RESOURCE_LIMIT, streams/host.ts),
  // but one chunk that large cannot be made inside the isolate first: the function's own
  // allocation fails, and the body is cut the same way.
  const res = await fetch(url('small', '/one-chunk', `size=${20 * MiB}`), { headers: { 'X-Service-Api-Key': s.apiKey } });
  t.equal(res.status, 200, 'the answer had started');
  await t.rejects(res.text(), 'the body is cut');
  t.ok(
    await eventually(
      async () => (await logLines('small')).some((e) => e.level === 'error' && /^(RangeError: Array buffer allocation failed|.*response stream's chunk.*memory limit of 16 MB)/.test(e.message)),
      10_000,
    ),
    'the log says the chunk did not fit the memory limit',
  );
  const whole = await undiciRequest(url('small', '/bytes', `size=${40 * MiB}`), { headers: { 'X-Service-Api-Key': s.apiKey } });
  let total = 0;
  for await (const chunk of whole.body) total += (chunk as Buffer).byteLength;
  t.equal(total, 40 * MiB, 'while 40 MiB in chunks of 64 KiB stream through the same 16 MB function, over the 6 MiB of a whole body');
});

t.test('a fetched body is relayed as it arrives: new Response(up.body, up) passes the first chunk on before the upstream sends the rest', async (t) => {
  let release: () => void = () => undefined;
  const released = new Promise<void>((resolve) => (release = resolve));
  let upstreamClosed: () => void = () => undefined;
  const closedEarly = new Promise<void>((resolve) => (upstreamClosed = resolve));
  const upstream = createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'x-upstream': 'yes' });
    res.write('data: first\n\n');
    if (req.url === '/hold') {
      res.on('close', () => upstreamClosed());
      return;
    }
    void released.then(() => res.end('data: second\n\n'));
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    upstream.closeAllConnections();
    upstream.close();
  });
  const base = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
  const res = await fetch(url('streams', '/relay', `up=${encodeURIComponent(`${base}/events`)}`), { headers: { 'X-Service-Api-Key': s.apiKey } });
  t.equal(res.status, 200);
  t.equal(res.headers.get('x-upstream'), 'yes', "the upstream's headers");
  t.equal(res.headers.get('content-type'), 'text/event-stream');
  const reader = res.body!.getReader();
  const first = await reader.read();
  t.equal(new TextDecoder().decode(first.value), 'data: first\n\n', 'the first event came while the upstream held the second');
  release();
  let rest = '';
  for (let next = await reader.read(); !next.done; next = await reader.read()) rest += new TextDecoder().decode(next.value);
  t.equal(rest, 'data: second\n\n');

  // A client that leaves a relay closes the upstream connection.
  const held = await undiciRequest(url('streams', '/relay', `up=${encodeURIComponent(`${base}/hold`)}`), { headers: { 'X-Service-Api-Key': s.apiKey } });
  for await (const chunk of held.body) {
    t.ok((chunk as Buffer).byteLength > 0, 'the held relay sent its first chunk');
    break;
  }
  await closedEarly;
  t.pass('the upstream saw its connection closed after the client left');
});

t.test('a fetched body of unknown length, larger than what comes whole, is read whole by arrayBuffer()', async (t) => {
  const size = 6 * MiB + 123;
  const upstream = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/octet-stream' });
    const chunk = Buffer.alloc(256 * 1024, 98);
    let sent = 0;
    const more = () => {
      while (sent < size) {
        const piece = chunk.subarray(0, Math.min(chunk.length, size - sent));
        sent += piece.length;
        if (!res.write(piece)) return void res.once('drain', more);
      }
      res.end();
    };
    more();
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  t.teardown(() => upstream.close());
  const up = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/`;
  const res = await fetch(url('streams', '/relay-length', `up=${encodeURIComponent(up)}`), { headers: { 'X-Service-Api-Key': s.apiKey } });
  t.same(await res.json(), { length: size, allB: true });
});

t.test('in-process callers (sdk.invoke) get a streamed body whole', async (t) => {
  const res = await s.invoke('streams', { path: '/bytes', query: `size=${200 * 1024}` });
  t.equal(res.status, 200);
  t.equal((res.body as Uint8Array).byteLength, 200 * 1024);
});

t.test('seed style: an HTTPResponse body may be an async generator, a Node Readable or a web ReadableStream', async (t) => {
  for (const [entry, expected] of [
    ['generator', 'line 0\nline 1\nline 2\n'],
    ['readable', 'abc'],
    ['web', 'web stream'],
  ] as const) {
    await s.deploy(`seed_${entry}`, fixture('streams-node8'), entry);
    const res = await s.call(`seed_${entry}`);
    t.equal(res.status, 200, entry);
    t.equal(res.headers.get('transfer-encoding'), 'chunked', `${entry} is sent chunked`);
    t.equal(await res.text(), expected, entry);
  }
  await s.deploy('seed_bad_chunk', fixture('streams-node8'), 'badChunk');
  const bad = await s.call('seed_bad_chunk');
  await t.rejects(bad.text(), 'a chunk that is not text or bytes cuts the body');
  t.ok(await eventually(async () => (await logLines('seed_bad_chunk')).some((e) => e.level === 'error' && /may only give strings and bytes/.test(e.message)), 10_000), 'and the log says why');
});

t.test('Python: an HTTPResponse body may be a generator or an async generator of str or bytes', async (t) => {
  for (const [entry, expected] of [
    ['generator', 'line 0\nline 1\nline 2\nbytes too\n'],
    ['agenerator', 'tick 0\ntick 1\ntick 2\n'],
  ] as const) {
    await s.deployPython(`py_${entry}`, fixture('streams-python'), entry);
    const res = await s.call(`py_${entry}`);
    t.equal(res.status, 200, entry);
    t.equal(res.headers.get('transfer-encoding'), 'chunked', `${entry} is sent chunked`);
    t.equal(await res.text(), expected, entry);
  }
  await s.deployPython('py_bad_chunk', fixture('streams-python'), 'bad_chunk');
  const bad = await s.call('py_bad_chunk');
  await t.rejects(bad.text(), 'a chunk that is not str or bytes cuts the body');
  t.ok(await eventually(async () => (await logLines('py_bad_chunk')).some((e) => e.level === 'error' && /may only yield str or bytes, got dict/.test(e.message)), 10_000), 'and the log says why');
});
