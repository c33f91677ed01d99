import { randomBytes } from 'node:crypto';
import { request, type IncomingHttpHeaders } from 'node:http';
import { connect as tcpConnect, type Socket } from 'node:net';
import t from 'tap';
import { WebSocket } from 'undici';
import { WEBSOCKET_LIMITS } from '../../engine/capabilities/websockets/limits';
import { eventually } from '../helpers/supervised';
import { fixture, startTestServer, type TestServer } from '../helpers/server';

// WebSockets of fetch-style functions (issue 25, item 3), the Workers API, at
// ws://…/v2/run/<account>/<fn>: echo, close codes both ways, refused upgrades, and the bounds.
// `s` keeps the default bounds but three connections per account and one warm version; `b` has
// tight ones (an idle timeout of 500 ms, 20 messages a second); `w` holds two WebSockets per
// instance, and its `dies` function has a timeout of 1 s.
let s: TestServer;
let b: TestServer;
let w: TestServer;

function deploy(server: TestServer, name: string): Promise<unknown> {
  return server.engine.deploy(server.accountId, { name, runtime: 'node8', file: 'worker.mjs', entrypoint: 'default', env: {} }, { dir: fixture('websockets-node8') });
}

t.before(async () => {
  s = await startTestServer({ limits: { maxInstancesPerVersion: 1, maxWarmInstances: 1, webSockets: { ...WEBSOCKET_LIMITS, connectionsPerAccount: 3 } } });
  await Promise.all([deploy(s, 'ws'), deploy(s, 'public_ws'), deploy(s, 'other')]);
  b = await startTestServer({ limits: { maxInstancesPerVersion: 1, webSockets: { ...WEBSOCKET_LIMITS, idleMs: 500, messagesPerSec: 20, messagesBurst: 20 } } });
  await deploy(b, 'ws');
  w = await startTestServer({ limits: { maxInstancesPerVersion: 1, webSockets: { ...WEBSOCKET_LIMITS, socketsPerInstance: 2 } } });
  await deploy(w, 'ws');
  await w.engine.deploy(w.accountId, { name: 'dies', runtime: 'node8', file: 'worker.mjs', entrypoint: 'default', env: {}, timeoutMs: 1000 }, { dir: fixture('websockets-node8') });
});
t.teardown(async () => {
  await s.stop();
  await b.stop();
  await w.stop();
});

type Message = string | Uint8Array;

interface Client {
  ws: WebSocket;
  /** The next message from the function (in order). */
  next(): Promise<Message>;
  /** The close the client saw. */
  closed: Promise<{ code: number; reason: string }>;
}

/** Opens a WebSocket to a function of `server`'s account; rejects when the upgrade fails. */
function connect(server: TestServer, name: string, path = '', key: string | null = server.apiKey): Promise<Client> {
  const url = `${server.url.replace(/^http/, 'ws')}/v2/run/${server.accountId}/${name}${path}`;
  const ws = new WebSocket(url, { headers: key === null ? {} : { 'X-Service-Api-Key': key } });
  ws.binaryType = 'arraybuffer';
  const queue: Message[] = [];
  const waiting: { resolve(m: Message): void; reject(err: Error): void }[] = [];
  let end: Error | undefined;
  ws.addEventListener('message', (event) => {
    const data = typeof event.data === 'string' ? event.data : new Uint8Array(event.data as ArrayBuffer);
    const reader = waiting.shift();
    if (reader) reader.resolve(data);
    else queue.push(data);
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    ws.addEventListener('close', (event) => {
      // A message awaited on a connection that closed fails the test at once.
      end = new Error(`the connection closed (${event.code} ${event.reason})`);
      for (const reader of waiting.splice(0)) reader.reject(end);
      resolve({ code: event.code, reason: event.reason });
    }),
  );
  const next = (): Promise<Message> => {
    if (queue.length > 0) return Promise.resolve(queue.shift()!);
    if (end) return Promise.reject(end);
    return new Promise((resolve, reject) => waiting.push({ resolve, reject }));
  };
  return new Promise((resolve, reject) => {
    ws.addEventListener('open', () => resolve({ ws, closed, next }));
    void closed.then(({ code }) => reject(new Error(`the upgrade failed (${code})`)));
  });
}

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  json: Record<string, unknown>;
  body: string;
}

/** A WebSocket upgrade request by hand: its answer, whether 101 or a refusal. */
function upgrade(server: TestServer, target: string, headers: Record<string, string>, withoutKey = false): Promise<Answer> {
  const { hostname, port } = new URL(server.url);
  const own: Record<string, string> = { connection: 'Upgrade', upgrade: 'websocket', 'sec-websocket-version': '13' };
  if (!withoutKey) own['sec-websocket-key'] = randomBytes(16).toString('base64');
  return new Promise((resolve, reject) => {
    const req = request({ host: hostname, port, path: `/v2/run/${target}`, agent: false, headers: { ...own, ...headers } });
    req.on('upgrade', (res, socket) => {
      socket.destroy();
      resolve({ status: res.statusCode ?? 0, headers: res.headers, json: {}, body: '' });
    });
    req.on('response', (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => {
        let json: Record<string, unknown> = {};
        try {
          json = JSON.parse(body) as Record<string, unknown>;
        } catch {
          // not JSON: the function's own answer
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, json, body });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

/** Whether a line matching `pattern` reaches the function's logs (its close listener logs each close). */
function logged(server: TestServer, name: string, pattern: RegExp): Promise<boolean> {
  return eventually(async () => (await server.engine.readLogs(server.accountId, name, {})).some((e) => pattern.test(e.message)), 15_000);
}

t.test('text and bytes are echoed; what the function sent before the client connected comes first', async (t) => {
  const c = await connect(s, 'ws', '/greet');
  t.equal(await c.next(), 'hello before the client connected');
  c.ws.send('hi');
  t.equal(await c.next(), 'echo:hi');
  c.ws.send(new Uint8Array([1, 2, 3, 250]));
  t.same(await c.next(), new Uint8Array([250, 3, 2, 1]), 'bytes come back as bytes (reversed by the function)');
  const long = 'é'.repeat(100_000);
  c.ws.send(long);
  t.equal(await c.next(), `echo:${long}`, 'a long text crosses whole');
  c.ws.close(1000);
  t.equal((await c.closed).code, 1000);
});

t.test('the client closes with 4000 and a reason: the function sees both', async (t) => {
  const c = await connect(s, 'ws');
  c.ws.send('one');
  await c.next();
  c.ws.close(4000, 'client says bye');
  t.same(await c.closed, { code: 4000, reason: 'client says bye' });
  t.ok(await logged(s, 'ws', /^closed 4000 client says bye clean/), "the function's close event had the code and reason");
});

t.test('the function closes with 4001 and a reason: the client sees both', async (t) => {
  const c = await connect(s, 'ws');
  c.ws.send('close:4001:function says bye');
  t.same(await c.closed, { code: 4001, reason: 'function says bye' });
  t.ok(await logged(s, 'ws', /^closed 4001 function says bye clean/));
});

t.test('an upgrade answers 101 with the call headers; refused ones answer as /v2/run does, without switching protocols', async (t) => {
  const accepted = await upgrade(s, `${s.accountId}/ws`, { 'X-Service-Api-Key': s.apiKey });
  t.equal(accepted.status, 101);
  t.match(accepted.headers['x-service-request-id'], /^[0-9a-f]{32}$/);
  t.equal(accepted.headers['x-made-by'], 'websockets', "the function's own headers");

  const noKey = await upgrade(s, `${s.accountId}/ws`, {});
  t.equal(noKey.status, 401);
  t.equal(noKey.json.errorCode, 'ERR_NO_KEY');
  const badKey = await upgrade(s, `${s.accountId}/ws`, { 'X-Service-Api-Key': 'not-a-key' });
  t.equal(badKey.status, 403);
  t.equal(badKey.json.errorCode, 'ERR_BAD_KEY');
  const other = await s.createAccount();
  await s.engine.deploy(other.accountId, { name: 'theirs', runtime: 'node8', file: 'worker.mjs', entrypoint: 'default', env: {} }, { dir: fixture('websockets-node8') });
  const theirs = await upgrade(s, `${other.accountId}/theirs`, { 'X-Service-Api-Key': s.apiKey });
  t.equal(theirs.status, 403, "another account's function, with this account's key");
  t.equal(theirs.json.errorCode, 'ERR_BAD_KEY');
  const unknown = await upgrade(s, `${s.accountId}/nothing_here`, { 'X-Service-Api-Key': s.apiKey });
  t.equal(unknown.status, 404);
  t.equal(unknown.json.errorCode, 'ERR_NO_SUCH_FUNCTION');
  t.equal((await upgrade(s, `${s.accountId}/public_ws`, {})).status, 101, 'a public_ function needs no key');

  const plain = await upgrade(s, `${s.accountId}/ws/no-socket`, { 'X-Service-Api-Key': s.apiKey });
  t.equal(plain.status, 400, 'a function that answers an upgrade without a WebSocket: its answer as it is');
  t.equal(plain.body, 'no socket here');
  const notUpgrade = await upgrade(s, `${s.accountId}/ws`, { 'X-Service-Api-Key': s.apiKey }, true);
  t.equal(notUpgrade.status, 502, 'a WebSocket given to a request that is no upgrade (no Sec-WebSocket-Key)');
  t.equal(notUpgrade.json.errorCode, 'ERR_BAD_RESPONSE');
  const fake = await upgrade(s, `${s.accountId}/ws/fake-101`, { 'X-Service-Api-Key': s.apiKey });
  t.equal(fake.status, 502, 'a 101 that gives no WebSocket is refused, not sent');
  t.match(fake.json.message, /status 101 answers only with a WebSocket/);
});

t.test('Python functions give no WebSocket: an upgrade is answered over HTTP, without switching protocols', async (t) => {
  await s.deployPython('py', fixture('seed-python'), 'hello');
  const answer = await upgrade(s, `${s.accountId}/py?name=Ada`, { 'X-Service-Api-Key': s.apiKey });
  t.equal(answer.status, 200);
  t.equal(answer.json as unknown, 'Hello adA!');
});

t.test('the instance is neither frozen nor evicted while it holds a WebSocket', async (t) => {
  const c = await connect(s, 'ws', '/tick');
  t.equal(await c.next(), 'tick', 'a timer of the function ran with no call in flight');
  // One warm version at most: calling another function evicts this one's instance from the cache.
  t.equal((await s.call('other', { path: '/no-socket' })).status, 400);
  c.ws.send('still there');
  t.equal(await c.next(), 'echo:still there', 'the evicted instance still answers on its socket');
  c.ws.close(1000);
  await c.closed;
});

t.test('connections per account are bounded; an upgrade past it is 429', async (t) => {
  t.ok(await eventually(() => s.internals.connections.of(s.accountId) === 0, 15_000), 'the earlier tests closed theirs');
  const open = [await connect(s, 'ws'), await connect(s, 'public_ws', '', null), await connect(s, 'ws')];
  const refused = await upgrade(s, `${s.accountId}/public_ws`, {});
  t.equal(refused.status, 429);
  t.equal(refused.json.errorCode, 'ERR_RATE_LIMITED');
  t.match(refused.json.message, /3 WebSocket connections open, its limit/);
  open[0]!.ws.close(1000);
  await open[0]!.closed;
  t.ok(await eventually(() => s.internals.connections.of(s.accountId) === 2, 15_000), 'a closed connection is given back');
  const again = await connect(s, 'ws');
  for (const c of [open[1]!, open[2]!, again]) {
    c.ws.close(1000);
    await c.closed;
  }
});

t.test("a redeploy closes the function's WebSockets with 1001", async (t) => {
  const c = await connect(s, 'ws');
  c.ws.send('ping');
  t.equal(await c.next(), 'echo:ping');
  await deploy(s, 'ws');
  const closed = await c.closed;
  t.equal(closed.code, 1001);
  t.match(closed.reason, /replaced or removed/);
  t.ok(await logged(s, 'ws', /^closed 1001 this version of the function was replaced or removed clean/), "the old version's close listener ran");
  const fresh = await connect(s, 'ws');
  fresh.ws.send('pong');
  t.equal(await fresh.next(), 'echo:pong', 'the new version takes connections');
  fresh.ws.close(1000);
  await fresh.closed;
});

t.test('a flood of messages is bounded: past the rate the connection closes with 1008', async (t) => {
  const c = await connect(b, 'ws', '/count');
  const sent = 500;
  for (let i = 0; i < sent; i++) c.ws.send(`m${i}`);
  const closed = await c.closed;
  t.equal(closed.code, 1008);
  t.equal(closed.reason, 'over the limit of 20 messages a second');
  const received = (await (await b.call('ws', { path: '/received' })).json()) as number;
  t.ok(received >= 20 && received < sent, `the function took ${received} of the ${sent} messages`);
  t.ok(await logged(b, 'ws', /^WebSocket closed with 1008: over the limit of 20 messages a second$/), "the function's logs say why");
});

t.test('a connection idle past the idle timeout closes with 1001', async (t) => {
  const c = await connect(b, 'ws');
  const closed = await c.closed;
  t.same(closed, { code: 1001, reason: 'idle for 0.5 s' });
  t.ok(await logged(b, 'ws', /^closed 1001 idle for 0\.5 s clean/));
});

t.test("the server's drain closes the WebSockets with 1001", async (t) => {
  const c = await connect(b, 'ws');
  const drained = b.server.drain();
  t.same(await c.closed, { code: 1001, reason: 'the server is going away' });
  await drained;
});

/** A WebSocket opened over a bare TCP socket, up to its 101 (for what a WebSocket client will not do: drop without a close frame). */
function rawUpgrade(server: TestServer, name: string): Promise<Socket> {
  const { hostname, port } = new URL(server.url);
  return new Promise((resolve, reject) => {
    const socket = tcpConnect(Number(port), hostname, () => {
      socket.write(
        `GET /v2/run/${server.accountId}/${name} HTTP/1.1\r\nHost: ${hostname}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n` +
          `Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: ${randomBytes(16).toString('base64')}\r\nX-Service-Api-Key: ${server.apiKey}\r\n\r\n`,
      );
    });
    let head = '';
    socket.on('data', (chunk: Buffer) => {
      head += chunk.toString('latin1');
      if (head.includes('\r\n\r\n')) {
        if (head.startsWith('HTTP/1.1 101')) resolve(socket);
        else reject(new Error(`no upgrade: ${head.split('\r\n')[0]}`));
      }
    });
    socket.on('error', reject);
  });
}

t.test('a message from the client over 1 MiB closes the connection with 1009', async (t) => {
  const c = await connect(w, 'ws');
  c.ws.send(new Uint8Array(WEBSOCKET_LIMITS.messageBytes + 1));
  t.same(await c.closed, { code: 1009, reason: `the client sent a message of ${WEBSOCKET_LIMITS.messageBytes + 1} bytes, over the limit of ${WEBSOCKET_LIMITS.messageBytes}` });
  t.ok(await logged(w, 'ws', /^closed 1009 the client sent a message of 1048577 bytes/), 'the function hears 1009 and why');
  const fine = await connect(w, 'ws');
  fine.ws.send(new Uint8Array(WEBSOCKET_LIMITS.messageBytes).fill(7));
  t.equal(((await fine.next()) as Uint8Array).byteLength, WEBSOCKET_LIMITS.messageBytes, 'a message of 1 MiB exactly crosses both ways');
  fine.ws.close(1000);
  await fine.closed;
});

t.test('over 1 MiB waiting unsent closes the connection with 1008, either way', async (t) => {
  const early = await upgrade(w, `${w.accountId}/ws/presend`, { 'X-Service-Api-Key': w.apiKey });
  t.equal(early.status, 502, `1.1 MiB sent before the client connected: no upgrade (${early.status} ${early.body})`);
  t.ok(await logged(w, 'ws', /^closed 1008 the function sent over 1048576 bytes before the client was connected/), 'the function hears 1008 and why');

  const busy = await connect(w, 'ws');
  busy.ws.send('block');
  // 1.2 MiB while the function is busy: it waits on the host, past what a connection may hold.
  for (let i = 0; i < 12; i++) busy.ws.send(new Uint8Array(100 * 1024));
  const refused = await busy.closed;
  t.equal(refused.code, 1008);
  t.match(refused.reason, /messages arrive faster than the function takes them \(over 1048576 bytes waiting\)/);
});

t.test('an instance holds at most socketsPerInstance WebSockets; the next is closed with 1013', async (t) => {
  t.ok(await eventually(() => w.internals.connections.of(w.accountId) === 0, 15_000), 'the earlier tests closed theirs');
  const held = [await connect(w, 'ws'), await connect(w, 'ws')];
  const third = await upgrade(w, `${w.accountId}/ws`, { 'X-Service-Api-Key': w.apiKey });
  t.equal(third.status, 502, `the third is not upgraded (${third.status} ${third.body})`);
  t.ok(await logged(w, 'ws', /^WebSocket refused: the function instance holds 2 WebSockets, its limit$/), "the function's logs say why");
  t.ok(await logged(w, 'ws', /^closed 1013 the function instance holds 2 WebSockets, its limit/), 'its server end hears 1013');
  for (const c of held) {
    c.ws.send('still');
    t.equal(await c.next(), 'echo:still', 'the two held are untouched');
    c.ws.close(1000);
    await c.closed;
  }
});

t.test('a client that drops without a close frame: the function gets an error event and a close of 1006', async (t) => {
  const socket = await rawUpgrade(w, 'ws');
  socket.destroy();
  t.ok(await logged(w, 'ws', /^error event: /), 'the error event ran');
  t.ok(await logged(w, 'ws', /^closed 1006 .*unclean/), 'then the close, 1006, not clean');
});

t.test('an instance that dies closes its WebSockets with 1011', async (t) => {
  const c = await connect(w, 'dies');
  c.ws.send('loop');
  const closed = await c.closed;
  t.equal(closed.code, 1011);
  t.match(closed.reason, /timeout|stopped/);
});
