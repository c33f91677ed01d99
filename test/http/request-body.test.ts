import { createHash, randomBytes } from 'node:crypto';
import { request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http';
import t from 'tap';
import { functionFolder } from '../helpers/functions';
import { eventually } from '../helpers/supervised';
import { startTestServer, type TestServer } from '../helpers/server';

// Request bodies as streams (issue 25, item 2): a body larger than 64 KiB, or chunked, starts its
// call at once and is read as it arrives (request.body, a server app's req) with backpressure, or
// whole once it is in (json(), text(), a seed handler's body, Python's req.body), each within the
// operator's limit of its kind.
const MiB = 1024 * 1024;
let s: TestServer;
/** A server with small limits: 1 MiB read whole, 4 MiB read as a stream. */
let small: TestServer;

const ECHO = `export default { fetch: (request) => new Response(request.body, { headers: { 'content-type': 'application/octet-stream' } }) };`;
/** An echo that says when its request's signal aborts (the host relays its body: see engine/capabilities/streams/relay.ts). */
const ECHO_WATCHED = `export default {
  fetch(request) {
    request.signal.addEventListener('abort', () => console.log('signal aborted: ' + request.signal.reason));
    return new Response(request.body, { headers: { 'content-type': 'application/octet-stream' } });
  },
};`;
/** Answers only once its request's signal aborts. */
const WAITS_FOR_ABORT = `export default {
  async fetch(request) {
    await new Promise((resolve) => request.signal.addEventListener('abort', resolve));
    console.log('aborted before the answer: ' + request.signal.reason);
    return new Response('too late');
  },
};`;
const FIRST_CHUNK = `export default {
  async fetch(request) {
    const { value } = await request.body.getReader().read();
    return new Response('first chunk read: ' + (value.byteLength > 0));
  },
};`;
const COUNTER = `export default {
  async fetch(request) {
    let bytes = 0;
    const reader = request.body.getReader();
    try {
      for (let next = await reader.read(); !next.done; next = await reader.read()) bytes += next.value.byteLength;
    } catch (err) {
      console.log('the read failed: ' + err.message);
      return new Response('failed after ' + bytes);
    }
    return new Response('read ' + bytes);
  },
};`;
const JSON_FETCH = `export default { async fetch(request) { const v = await request.json(); return Response.json({ items: v.items.length }); } };`;
const JSON_SEED = `exports.handler = (body) => ({ items: body.items.length });`;
const TEXT_FETCH = `export default { async fetch(request) { return new Response(await request.text()); } };`;
const NAMES_SEED = `exports.handler = (body) => ({ last: body.items[body.items.length - 1].name, items: body.items.length });`;
const JSON_PYTHON = `import json\ndef handler(body, req):\n    return {'items': len(body['items']), 'bytes': len(req.body)}\n`;

t.before(async () => {
  s = await startTestServer();
  small = await startTestServer({ limits: { requestBodyBytes: MiB, streamedRequestBodyBytes: 4 * MiB } });
  await s.deploy('echo', functionFolder(ECHO), 'default', { memoryMb: 128, timeoutMs: 60_000 });
  await s.deploy('echo_watched', functionFolder(ECHO_WATCHED), 'default', { timeoutMs: 60_000 });
  await s.deploy('echo_short', functionFolder(ECHO), 'default', { timeoutMs: 1500 });
  await s.deploy('echo_32', functionFolder(ECHO), 'default', { memoryMb: 32, timeoutMs: 60_000 });
  await s.deploy('waits_for_abort', functionFolder(WAITS_FOR_ABORT), 'default', { timeoutMs: 120_000 });
  await s.deploy('first', functionFolder(FIRST_CHUNK), 'default', { timeoutMs: 60_000 });
  await s.deploy('counter', functionFolder(COUNTER), 'default', { timeoutMs: 60_000 });
  await s.deploy('counter_short', functionFolder(COUNTER), 'default', { timeoutMs: 1500 });
  for (const server of [s, small]) {
    await server.deploy('json_fetch', functionFolder(JSON_FETCH), 'default');
    await server.deploy('json_seed', functionFolder(JSON_SEED), 'handler');
    await server.deploy('text_fetch', functionFolder(TEXT_FETCH), 'default');
    await server.deploy('names_seed', functionFolder(NAMES_SEED), 'handler');
    await server.deploy('counter', functionFolder(COUNTER), 'default', { timeoutMs: 60_000 });
  }
  await small.deployPython('json_python', functionFolder('', { 'function.py': JSON_PYTHON }), 'handler');
});
t.teardown(async () => {
  await s?.stop();
  await small?.stop();
});

/** A POST whose body the test writes itself (chunked without `length`), on a connection of its own. */
function post(server: TestServer, name: string, length?: number): ClientRequest {
  const headers: Record<string, string> = { 'X-Service-Api-Key': server.apiKey, 'Content-Type': 'application/octet-stream' };
  if (length !== undefined) headers['Content-Length'] = String(length);
  const req = httpRequest(`${server.url}/v2/run/${server.accountId}/${name}`, { method: 'POST', headers, agent: false });
  req.on('error', () => undefined);
  return req;
}

function responseOf(req: ClientRequest): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    req.once('response', resolve);
    req.once('error', reject);
  });
}

async function textOf(res: IncomingMessage): Promise<string> {
  let text = '';
  for await (const chunk of res) text += String(chunk);
  return text;
}

/** Writes `bytes` in 256 KiB pieces, waiting for 'drain' when write() says so. */
async function writeAll(req: ClientRequest, bytes: Buffer): Promise<void> {
  for (let at = 0; at < bytes.length; at += 256 * 1024) {
    if (!req.write(bytes.subarray(at, at + 256 * 1024))) await new Promise((resolve) => req.once('drain', resolve));
  }
}

/** Resolves with the value, or rejects when it has not come within `ms` (a failure, not a timing). */
function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  return Promise.race([promise, new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`${what}: nothing within ${ms} ms`)), ms).unref())]);
}

async function errorOf(res: Response): Promise<Record<string, unknown>> {
  return (await res.json()) as Record<string, unknown>;
}

const inflight = (server: TestServer, name: string) => server.internals.functionStats.of(server.engine.describe(server.accountId, name)!).inflight;

t.test('request.body is read as it arrives: the function answers while the client still holds the rest', async (t) => {
  const req = post(s, 'first');
  req.write(randomBytes(100 * 1024));
  // The upload is held open: a server that waits for the whole body before the call never answers.
  const res = await within(responseOf(req), 20_000, 'the answer to a body still arriving');
  t.equal(res.statusCode, 200);
  t.equal(res.headers.connection, 'close', 'answered before its body ended: the connection carries no other request');
  t.equal(await textOf(res), 'first chunk read: true');
  req.destroy();
});

t.test('a 20 MB upload streamed through a function of 128 MB and echoed back as it comes', async (t) => {
  const bytes = randomBytes(20 * MiB);
  const req = post(s, 'echo', bytes.length);
  const answered = responseOf(req).then(async (res) => {
    // A refusal comes while the upload is blocked: stop sending.
    if (res.statusCode !== 200) req.destroy();
    const hash = createHash('sha256');
    let size = 0;
    for await (const chunk of res) {
      hash.update(chunk as Buffer);
      size += (chunk as Buffer).length;
    }
    return { status: res.statusCode, size, digest: hash.digest('hex') };
  });
  void writeAll(req, bytes).then(() => req.end());
  const got = await within(answered, 120_000, 'the echo');
  t.equal(got.status, 200);
  t.equal(got.size, bytes.length, 'every byte came back');
  t.equal(got.digest, createHash('sha256').update(bytes).digest('hex'), 'in order');
  t.ok(await eventually(() => inflight(s, 'echo') === 0, 10_000), 'the call is over');
});

t.test('an echo whose client reads late: answer and upload wait for each other, and both finish', async (t) => {
  // uWS pauses a socket both ways: a body paused for backpressure while the answer waited for the
  // client to read it stopped both for good.
  const bytes = randomBytes(12 * MiB);
  const req = post(s, 'echo', bytes.length);
  let size = 0;
  const answered = responseOf(req).then(async (res) => {
    res.pause();
    // Not read until the upload has been held back a few times: the answer's writes back up meanwhile.
    await eventually(() => held >= 4, 20_000);
    res.resume();
    for await (const chunk of res) size += (chunk as Buffer).length;
    return res.statusCode;
  });
  let held = 0;
  void (async () => {
    for (let at = 0; at < bytes.length; at += 256 * 1024) {
      if (!req.write(bytes.subarray(at, at + 256 * 1024))) {
        held++;
        await new Promise((resolve) => req.once('drain', resolve));
      }
    }
    req.end();
  })();
  t.equal(await within(answered, 120_000, 'the echo read late'), 200);
  t.equal(size, bytes.length, 'every byte came back');
});

/** Sends `bytes` through an echo without reading its answer until the whole body is sent: the bytes back, or how it failed. */
async function echoReadAfterSending(name: string, bytes: Buffer): Promise<{ status?: number; size: number; error?: string }> {
  const req = post(s, name, bytes.length);
  // An answer not read is not taken off the socket: its head arrives, the rest backs up.
  const response = responseOf(req);
  response.catch(() => undefined);
  try {
    await writeAll(req, bytes);
    await new Promise<void>((resolve) => req.end(resolve));
    const res = await within(response, 60_000, 'the answer');
    let size = 0;
    for await (const chunk of res) size += (chunk as Buffer).length;
    return { status: res.statusCode, size };
  } catch (err) {
    return { size: 0, error: (err as Error).message };
  }
}

t.test("a body may run ahead of an echo's answer by the function's memory limit, and no more", async (t) => {
  // A client that reads as it sends still runs ahead on a fast machine (58 MB of a 100 MB relay on
  // loopback): with a fixed 32 MiB bound more than half of such relays were reset.
  const bytes = randomBytes(48 * MiB);
  const held = await echoReadAfterSending('echo', bytes);
  t.same(held, { status: 200, size: bytes.length }, 'a function of 128 MB: 48 MiB sent before a byte of the answer is read, all of it comes back');
  const over = await echoReadAfterSending('echo_32', bytes);
  t.not(over.size, bytes.length, `a function of 32 MB: the body fails (${over.error ?? `${over.size} bytes back`})`);
  const logged = await eventually(
    async () =>
      (await s.engine.readLogs(s.accountId, 'echo_32', {})).some((e) =>
        /33554432 bytes of the request body \(the function's memory limit, and at least 33554432\) arrived ahead of its reading/.test(e.message),
      ),
    20_000,
  );
  t.ok(logged, 'its log names the bound');
});

t.test("a client that goes away mid-echo: the relay stops, the request's signal aborts, the call is logged ERR_CLIENT_GONE", async (t) => {
  const req = post(s, 'echo_watched', 10 * MiB);
  req.write(randomBytes(MiB));
  const res = await within(responseOf(req), 20_000, 'the echo');
  for await (const chunk of res) {
    t.ok((chunk as Buffer).byteLength > 0, 'the echo began');
    break;
  }
  req.destroy();
  const lines = async () => s.engine.readLogs(s.accountId, 'echo_watched', {});
  t.ok(await eventually(async () => (await lines()).some((e) => /^signal aborted: .*the client closed the connection/.test(e.message)), 20_000), "the function's abort listener ran, with the reason");
  t.ok(await eventually(async () => (await lines()).some((e) => e.level === 'call' && / 499 .*ERR_CLIENT_GONE$/.test(e.message)), 20_000), 'the call line says the client went away');
  t.ok(await eventually(() => inflight(s, 'echo_watched') === 0 && s.server.active === 0, 10_000), 'no call and no request is left in flight');
  const next = await s.call('echo_watched', { body: 'again' });
  t.equal(await next.text(), 'again', 'the instance relays the next body');
});

t.test("a client that goes away before the answer: the request's signal aborts, and the handler ends long before its timeout", async (t) => {
  const req = httpRequest(`${s.url}/v2/run/${s.accountId}/waits_for_abort`, { headers: { 'X-Service-Api-Key': s.apiKey }, agent: false });
  req.on('error', () => undefined);
  req.end();
  t.ok(await eventually(() => inflight(s, 'waits_for_abort') === 1, 20_000), 'the handler runs, waiting');
  req.destroy();
  const lines = async () => s.engine.readLogs(s.accountId, 'waits_for_abort', {});
  t.ok(
    await eventually(async () => (await lines()).some((e) => /^aborted before the answer: AbortError: the client closed the connection before the answer$/.test(e.message)), 20_000),
    'its abort listener ran, with the reason',
  );
  t.ok(await eventually(() => inflight(s, 'waits_for_abort') === 0 && s.server.active === 0, 20_000), 'the call is over (its timeout is 120 s), no request is left in flight');
});

t.test('an echo whose client stops sending: the timeout ends the call and cuts the answer', async (t) => {
  const req = post(s, 'echo_short', 10 * MiB);
  req.write(randomBytes(MiB));
  const res = await within(responseOf(req), 20_000, 'the echo');
  t.equal(res.statusCode, 200, 'the echo began');
  let size = 0;
  const cut = await within(
    new Promise<string>((resolve) => {
      res.on('data', (chunk: Buffer) => (size += chunk.length));
      res.on('end', () => resolve('ended'));
      res.on('error', () => resolve('cut'));
      res.on('aborted', () => resolve('cut'));
      res.on('close', () => resolve(res.complete ? 'ended' : 'cut'));
    }),
    30_000,
    'the end of the echo',
  );
  t.equal(cut, 'cut', 'the answer is cut, not ended: the client can tell');
  t.ok(size <= MiB, `at most what was sent came back (${size} bytes)`);
  req.destroy();
  t.ok(
    await eventually(async () => (await s.engine.readLogs(s.accountId, 'echo_short', {})).some((e) => e.level === 'call' && /ERR_TIMEOUT/.test(e.message)), 20_000),
    'the call line says it timed out',
  );
  t.ok(await eventually(() => inflight(s, 'echo_short') === 0, 10_000), 'the call is over');
});

t.test('a client that goes away mid-body: the read fails, the call ends, nothing is left behind', async (t) => {
  const req = post(s, 'counter', 10 * MiB);
  req.write(randomBytes(MiB));
  t.ok(await eventually(() => inflight(s, 'counter') === 1, 20_000), 'the call started with the body still arriving');
  req.destroy();
  const logged = await eventually(
    async () => (await s.engine.readLogs(s.accountId, 'counter', {})).some((e) => e.message === 'the read failed: the client went away before the whole request body arrived'),
    20_000,
  );
  t.ok(logged, "the function's read failed, saying why");
  t.ok(await eventually(() => inflight(s, 'counter') === 0 && s.server.active === 0, 10_000), 'no call and no request is left in flight');
  const next = await s.call('counter', { body: 'after' });
  t.equal(await next.text(), 'read 5', 'the instance serves on');
});

t.test('a client that stops sending and stays: the call ends at its timeout', async (t) => {
  const req = post(s, 'counter_short', 10 * MiB);
  req.write(randomBytes(MiB));
  const res = await within(responseOf(req), 30_000, 'the timeout answer');
  t.equal(res.statusCode, 504);
  t.equal(res.headers.connection, 'close');
  t.match(await textOf(res), /ERR_TIMEOUT/);
  req.destroy();
  t.ok(await eventually(() => inflight(s, 'counter_short') === 0, 10_000), 'the call is over');
});

t.test('a body read whole takes one copy: request.json() and a seed handler of a 3 MB body', async (t) => {
  const items = Array.from({ length: 40_000 }, (_, i) => ({ id: i, name: `item ${i}` }));
  const body = JSON.stringify({ items });
  t.ok(body.length > 64 * 1024, 'a body that streams');
  for (const name of ['json_fetch', 'json_seed']) {
    const res = await s.call(name, { body, headers: { 'content-type': 'application/json' } });
    t.same(await res.json(), { items: items.length }, name);
  }
});

t.test('text read whole arrives as it was sent: ASCII, and UTF-8 of two, three and four bytes a character', async (t) => {
  // ASCII is read as Latin-1 on the host (the same text, without UTF-8's decoding): both kinds,
  // small (they come with the call) and large (read whole once in).
  for (const [what, unit] of [
    ['ASCII', 'plain text, '],
    ['UTF-8', 'é ü ñ — € 😀 '],
  ]) {
    for (const size of [100, 3 * MiB]) {
      const text = unit.repeat(Math.ceil(size / unit.length));
      const res = await s.call('text_fetch', { body: text, headers: { 'content-type': 'text/plain; charset=utf-8' } });
      const echoed = await res.text();
      t.ok(echoed === text, `${what}, ${size} characters: the same ${text.length} characters back (${echoed.length})`);
    }
  }
  const items = Array.from({ length: 40_000 }, (_, i) => ({ id: i, name: `élément ${i} ✓` }));
  const res = await s.call('names_seed', { body: JSON.stringify({ items }), headers: { 'content-type': 'application/json' } });
  t.same(await res.json(), { last: 'élément 39999 ✓', items: items.length }, "a seed handler's UTF-8 JSON body");
});

t.test('413 past the limit of a body read whole, naming the limit, in each style', async (t) => {
  const body = JSON.stringify({ items: [], pad: 'x'.repeat(2 * MiB) });
  for (const name of ['json_fetch', 'json_seed', 'json_python']) {
    const res = await small.call(name, { body, headers: { 'content-type': 'application/json' } });
    t.equal(res.status, 413, name);
    const error = await errorOf(res);
    t.equal(error.errorCode, 'ERR_PAYLOAD_TOO_LARGE', name);
    t.equal(error.limit, '--max-body-mb', `${name}: the error names the limit`);
    t.match(error.message, /over the limit of 1048576 bytes for a body read whole/, name);
  }
  const under = JSON.stringify({ items: [1, 2, 3], pad: 'x'.repeat(200 * 1024) });
  const py = await small.call('json_python', { body: under, headers: { 'content-type': 'application/json' } });
  t.same(await py.json(), { items: 3, bytes: under.length }, 'Python gets a body under the limit whole');
});

t.test('413 past the streamed limit: declared at once, or as the chunks pass it', async (t) => {
  const declared = await small.call('counter', { body: randomBytes(5 * MiB) });
  t.equal(declared.status, 413);
  t.equal((await errorOf(declared)).limit, '--max-stream-body-mb');
  const req = post(small, 'counter');
  const answered = responseOf(req);
  // Chunked: no length to refuse at once; the body passes 4 MiB as it comes.
  await writeAll(req, randomBytes(5 * MiB)).catch(() => undefined);
  req.end();
  const res = await within(answered, 30_000, 'the refusal');
  t.equal(res.statusCode, 413, "the function's answer after its failed read is the 413");
  const error = JSON.parse(await textOf(res)) as Record<string, unknown>;
  t.equal(error.limit, '--max-stream-body-mb');
  t.ok(
    await eventually(
      async () => (await small.engine.readLogs(small.accountId, 'counter', {})).some((e) => /the read failed: the request body is over the limit of 4194304 bytes/.test(e.message)),
      10_000,
    ),
    "the function's read failed, saying why",
  );
  req.destroy();
});
