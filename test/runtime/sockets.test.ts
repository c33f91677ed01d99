import { createHash, randomBytes } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { createServer as createTlsServer, TLSSocket } from 'node:tls';
import t from 'tap';
import { InstanceConnections } from '../../engine/capabilities/sockets/connections';
import { socketService } from '../../engine/capabilities/sockets/egress';
import { SOCKET_LIMITS } from '../../engine/capabilities/sockets/limits';
import { Egress } from '../../engine/capabilities/fetch/egress';
import { HostMemory } from '../../engine/isolate/host-memory';
import { functionFolder } from '../helpers/functions';
import { copyPackage } from '../helpers/package-closure';
import { postgresMissing, startPostgres, type PrivatePostgres } from '../helpers/postgres';
import { startRedis, redisMissing, type PrivateRedis } from '../helpers/redis';
import { ROOT, startTestServer, type TestServer } from '../helpers/server';

// Outbound TCP (issue 25, item 5): node:net, node:tls and cloudflare:sockets through the egress
// rules, as database and cache clients use them (pg against a private PostgreSQL, ioredis against a
// private redis-server), and the bounds: sockets belong to their call, a flood is bounded, bytes
// wait on the host only as far as the function reads, another instance cannot use a socket's id.
// `s` allows private egress (the servers here are on loopback), with 4 sockets per instance;
// `strict` keeps the default rule.
let s: TestServer;
let strict: TestServer;

/** Local TCP servers of this file, closed at the end. */
const servers: Server[] = [];
function listen(onConnection: (socket: Socket) => void): Promise<{ port: number; connections: Socket[] }> {
  const connections: Socket[] = [];
  const server = createServer((socket) => {
    connections.push(socket);
    socket.on('error', () => undefined);
    onConnection(socket);
  });
  servers.push(server);
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ port: (server.address() as { port: number }).port, connections })));
}

/** Waits until `condition` holds (a generous deadline: the machine may be loaded), calling `refresh` before each look. */
async function until(condition: () => boolean, what: string, ms = 20_000, refresh?: () => Promise<void>): Promise<void> {
  const deadline = Date.now() + ms;
  for (await refresh?.(); !condition(); await refresh?.()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const ECHO = `
const net = require('node:net');
exports.echo = async ({ port, text }) => {
  const socket = net.connect(port, '127.0.0.1');
  const events = [];
  socket.on('connect', () => events.push('connect'));
  socket.on('end', () => events.push('end'));
  const closed = new Promise((resolve) => socket.on('close', () => { events.push('close'); resolve(); }));
  const chunks = [];
  socket.on('data', (chunk) => chunks.push(chunk));
  socket.setNoDelay(true).setKeepAlive(true);
  socket.write(text);
  socket.end();
  await closed;
  return { text: Buffer.concat(chunks).toString(), events, remotePort: socket.remotePort, bytesWritten: socket.bytesWritten, bytesRead: socket.bytesRead };
};
exports.refused = async ({ host, port }) => {
  const socket = net.connect({ host, port });
  const error = await new Promise((resolve) => socket.on('error', resolve));
  return { code: error.code, message: error.message, destroyed: socket.destroyed };
};
let held;
exports.hold = async ({ port, count }) => {
  // Opens sockets and leaves them open when the call ends; the next call finds them closed.
  const results = [];
  for (let i = 0; i < count; i++) {
    results.push(new Promise((resolve) => {
      const socket = net.connect(port, '127.0.0.1', () => resolve('open'));
      socket.on('error', (err) => resolve(err.code + ': ' + err.message));
    }));
  }
  const opened = await Promise.all(results);
  held = { errors: [] };
  return opened;
};
exports.probe = async () => held;
`;

const SLOW = `
const net = require('node:net');
const crypto = require('node:crypto');
exports.slow = async ({ port, mb }) => {
  // One large write to an echo server that reads slowly, read back as it comes.
  const socket = net.connect(port, '127.0.0.1');
  const big = Buffer.alloc(mb * 1024 * 1024);
  for (let i = 0; i < big.length; i++) big[i] = (i * 7 + (i >> 12)) & 0xff;
  let drains = 0;
  socket.on('drain', () => drains++);
  const received = crypto.createHash('sha256');
  let count = 0;
  socket.on('data', (chunk) => { received.update(chunk); count += chunk.length; });
  const closed = new Promise((resolve, reject) => { socket.on('close', resolve); socket.on('error', reject); });
  const accepted = socket.write(big);
  if (!accepted) await new Promise((resolve) => socket.once('drain', resolve));
  socket.end();
  await closed;
  return { accepted, drains, count, sent: crypto.createHash('sha256').update(big).digest('hex'), received: received.digest('hex') };
};
`;

const LOAD = `
const net = require('node:net');
// A socket opened while the module loads closes with the load: the first call finds it closed.
const early = net.connect(Number(process.env.PORT), '127.0.0.1');
const ended = new Promise((resolve) => {
  early.on('error', (err) => resolve({ code: err.code, message: err.message }));
  early.on('close', () => resolve({ closed: true }));
});
exports.handler = async () => ({ ...(await ended), destroyed: early.destroyed });
`;

const PG = `
const { Client, Pool } = require('pg');
exports.client = async ({ url }) => {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    const sum = await client.query('SELECT $1::int + $2::int AS sum, $3::text AS name', [2, 3, 'islet']);
    let error;
    try {
      await client.query('SELECT * FROM no_such_table');
    } catch (err) {
      error = { code: err.code, message: err.message };
    }
    const after = await client.query('SELECT 1 AS one');
    return { sum: sum.rows[0].sum, name: sum.rows[0].name, error, one: after.rows[0].one };
  } finally {
    await client.end();
  }
};
// A pool kept between calls, as most apps keep one: its idle connection closes with the call that
// opened it, and the next call's query takes a new one.
let pool;
exports.pool = async ({ url }) => {
  pool ??= new Pool({ connectionString: url, max: 2 });
  const { rows } = await pool.query('SELECT $1::text AS hello, pg_backend_pid() AS pid', ['pool']);
  return { hello: rows[0].hello, pid: rows[0].pid, total: pool.totalCount };
};
`;

const REDIS = `
const Redis = require('ioredis');
exports.redis = async ({ port }) => {
  const redis = new Redis({ host: '127.0.0.1', port, lazyConnect: true, maxRetriesPerRequest: 1 });
  await redis.connect();
  await redis.set('greeting', 'hello redis');
  const value = await redis.get('greeting');
  const pipeline = await redis.pipeline().del('n').incr('n').incrby('n', 41).get('n').exec();
  await redis.quit();
  return { value, pipeline: pipeline.map(([err, v]) => (err ? err.message : v)) };
};
`;

const TLS = `
const net = require('node:net');
const tls = require('node:tls');
const once = (emitter, event) => new Promise((resolve, reject) => { emitter.once(event, resolve); if (event !== 'error') emitter.once('error', reject); });
exports.tls = async ({ port, ca, servername, rejectUnauthorized, starttls }) => {
  const options = { servername, ...(ca ? { ca } : {}), ...(rejectUnauthorized === false ? { rejectUnauthorized: false } : {}) };
  let socket;
  if (starttls) {
    // As pg's SSLRequest: a plain socket first, then TLS over it.
    const raw = net.connect(port, '127.0.0.1');
    await once(raw, 'connect');
    raw.write('STARTTLS');
    const answer = await once(raw, 'data');
    if (String(answer) !== 'OK') return { error: 'no OK: ' + answer };
    socket = tls.connect({ ...options, socket: raw });
  } else {
    socket = tls.connect({ ...options, host: '127.0.0.1', port });
  }
  try {
    await once(socket, 'secureConnect');
  } catch (err) {
    return { error: err.code, message: err.message };
  }
  socket.write('ping');
  const data = await once(socket, 'data');
  socket.end();
  return { authorized: socket.authorized, encrypted: socket.encrypted, echoed: String(data) };
};
`;

const CLOUDFLARE = `
import { connect } from 'cloudflare:sockets';
export default {
  async fetch(request) {
    const { port, text } = await request.json();
    const socket = connect({ hostname: '127.0.0.1', port });
    const info = await socket.opened;
    const writer = socket.writable.getWriter();
    await writer.write(new TextEncoder().encode(text));
    await writer.close();
    let echoed = '';
    const decoder = new TextDecoder();
    for await (const chunk of socket.readable) echoed += decoder.decode(chunk, { stream: true });
    await socket.closed;
    return Response.json({ echoed, remote: info.remoteAddress });
  },
};
`;

const BACKGROUND = `
import net from 'node:net';
const once = (emitter, event) => new Promise((resolve, reject) => { emitter.once(event, resolve); if (event !== 'error') emitter.once('error', reject); });
const records = {};
export default {
  async fetch(request, env, ctx) {
    const { step, port, key } = await request.json();
    if (step === 'record') return Response.json(records[key] ?? null);
    const record = (records[key] = { events: [] });
    ctx.waitUntil((async () => {
      // After the answer went out: a socket of the waitUntil work's own.
      await new Promise((resolve) => setTimeout(resolve, 20));
      const socket = net.connect(port, '127.0.0.1');
      socket.on('error', (err) => record.events.push('error ' + err.code));
      socket.on('close', () => record.events.push('close'));
      await once(socket, 'connect');
      socket.write('ping');
      record.events.push('got ' + (await once(socket, 'data')));
      // Holds on (until its timeout, for 'hang'), or until the server's word long after the answer.
      if (step === 'hang') await new Promise(() => undefined);
      record.events.push('got ' + (await once(socket, 'data')));
      socket.write('done');
      // Ends with the socket still open: the host closes it as the work ends.
    })());
    return new Response('answered');
  },
};
`;

t.before(async () => {
  s = await startTestServer({ engine: { allowPrivateEgress: true }, limits: { maxInstancesPerVersion: 1, sockets: { ...SOCKET_LIMITS, socketsPerInstance: 4 } } });
  strict = await startTestServer();
  const echo = functionFolder(ECHO);
  await s.deploy('echo', echo, 'echo');
  await s.deploy('refused', echo, 'refused');
  await s.deploy('hold', echo, 'hold');
  await strict.deploy('refused', echo, 'refused');
  await s.deploy('slow', functionFolder(SLOW), 'slow', { timeoutMs: 60_000 });
  await s.deploy('tls', functionFolder(TLS), 'tls');
  await s.deploy('background', functionFolder(BACKGROUND), 'default', { timeoutMs: 30_000 });
  await s.deploy('background_short', functionFolder(BACKGROUND), 'default', { timeoutMs: 2_000 });
  await s.engine.deploy(s.accountId, { name: 'cf', runtime: 'node8', file: 'worker.mjs', entrypoint: 'default', env: {} }, { dir: functionFolder('', { 'worker.mjs': CLOUDFLARE }) });
});
t.teardown(async () => {
  for (const server of servers) server.close();
  await s.stop();
  await strict.stop();
});

t.test('net: a socket connects, writes, reads and closes, with the events Node gives', async (t) => {
  const { port } = await listen((socket) => socket.pipe(socket));
  const out = await s.invokeJson('echo', { port, text: 'hello over tcp' });
  t.equal(out.text, 'hello over tcp');
  t.same(out.events, ['connect', 'end', 'close']);
  t.equal(out.remotePort, port);
  t.equal(out.bytesWritten, 14);
  t.equal(out.bytesRead, 14);
});

t.test('cloudflare:sockets: connect() echoes through its readable and writable streams', async (t) => {
  const { port } = await listen((socket) => socket.pipe(socket));
  const res = await s.invoke('cf', { method: 'POST', body: JSON.stringify({ port, text: 'hello, workers' }) });
  t.equal(res.status, 200, String(res.body));
  const out = JSON.parse(String(res.body)) as { echoed: string; remote: string };
  t.equal(out.echoed, 'hello, workers');
  t.equal(out.remote, `127.0.0.1:${port}`);
});

t.test('a private address is refused without the operator setting, naming the address and the rule', async (t) => {
  let reached = false;
  const { port } = await listen(() => {
    reached = true;
  });
  const out = await strict.invokeJson('refused', { host: '127.0.0.1', port });
  t.equal(out.code, 'ERR_EGRESS_BLOCKED');
  t.match(out.message, `127.0.0.1:${port}`);
  t.match(out.message, /private, loopback, link-local and metadata addresses are refused/);
  t.match(out.message, /--allow-private-egress/);
  t.equal(out.destroyed, true);
  // A name that resolves to loopback is refused the same way, and so is the metadata address.
  const named = await strict.invokeJson('refused', { host: 'localhost', port });
  t.equal(named.code, 'ERR_EGRESS_BLOCKED');
  const metadata = await strict.invokeJson('refused', { host: '169.254.169.254', port: 80 });
  t.equal(metadata.code, 'ERR_EGRESS_BLOCKED');
  t.match(metadata.message, '169.254.169.254');
  t.notOk(reached, 'no connection reached the server');
  // With the operator's setting, a refused port is Node's ECONNREFUSED.
  const server = createServer();
  const closedPort = await new Promise<number>((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port)));
  server.close();
  const refused = await s.invokeJson('refused', { host: '127.0.0.1', port: closedPort });
  t.equal(refused.code, 'ECONNREFUSED');
  t.match(refused.message, `connect ECONNREFUSED 127.0.0.1:${closedPort}`);
});

t.test('sockets belong to their call: closed when it ends; a flood is bounded per instance', async (t) => {
  const { port, connections } = await listen(() => undefined);
  const opened = (await s.invokeJson('hold', { port, count: 6 })) as unknown as string[];
  t.equal(opened.filter((o) => o === 'open').length, 4, 'four sockets, the instance limit');
  t.equal(opened.filter((o) => o.startsWith('ERR_SOCKET_LIMIT')).length, 2);
  t.match(
    opened.find((o) => o !== 'open'),
    /already holds 4 sockets, its limit/,
  );
  await until(() => connections.length === 4 && connections.every((c) => c.closed || c.readableEnded), 'the call ended and its sockets closed');
  // The next call can open as many again.
  const again = (await s.invokeJson('hold', { port, count: 4 })) as unknown as string[];
  t.same(again, ['open', 'open', 'open', 'open']);
});

t.test('ctx.waitUntil: a socket opened by the work after the answer works until the work ends, and is closed then', async (t) => {
  const { port, connections } = await listen((socket) => socket.once('data', () => socket.write('pong')));
  const call = (name: string, body: Record<string, unknown>) => s.invoke(name, { method: 'POST', body: JSON.stringify({ port, ...body }) });
  const record = async (name: string, key: string) => JSON.parse(String((await call(name, { step: 'record', key })).body)) as { events: string[] } | null;
  const answer = await call('background', { step: 'talk', key: 'talk' });
  t.equal(String(answer.body), 'answered', 'the call answered before its work opened the socket');
  await until(() => connections.length === 1, 'the waitUntil work connected');
  const server = connections[0]!;
  const received: string[] = [];
  server.on('data', (chunk: Buffer) => received.push(String(chunk)));
  let events: string[] = [];
  await until(
    () => events.includes('got pong'),
    'the work read the answer to its ping',
    20_000,
    async () => {
      events = (await record('background', 'talk'))?.events ?? [];
    },
  );
  t.notOk(server.closed || server.readableEnded, 'the socket is still open: the work goes on');
  // Long after the answer, the server speaks; the work answers and ends.
  server.write('later');
  await until(() => received.includes('done'), "the work's last write reached the server");
  await until(() => server.closed || server.readableEnded, 'the host closed the socket as the work ended');
  await until(
    () => events.includes('close'),
    'the function saw its socket close',
    20_000,
    async () => {
      events = (await record('background', 'talk'))?.events ?? [];
    },
  );
  t.same(events.slice(0, 2), ['got pong', 'got later'], 'both reads, the second long after the answer');
  t.match(events.find((e) => e.startsWith('error')) ?? '', /ERR_SOCKET_CALL_ENDED/, 'closed because the work that opened it ended');

  // Work that never ends holds its socket until the function's timeout (2 s here), no longer.
  const hung = await call('background_short', { step: 'hang', key: 'hang' });
  t.equal(String(hung.body), 'answered');
  await until(() => connections.length === 2, 'the hanging work connected');
  const held = connections[1]!;
  await until(() => held.closed || held.readableEnded, "the host closed the hanging work's socket at its timeout");
  const hangEvents = (await record('background_short', 'hang'))?.events ?? [];
  t.same(hangEvents.slice(0, 1), ['got pong'], 'the socket worked while the work went on');
});

t.test('backpressure: one large write to a server that reads slowly arrives whole, in order, as write() and drain say', async (t) => {
  const { port } = await listen((socket) => {
    // Echoes 16 KiB at a time, with a pause after each.
    socket.on('readable', function pump() {
      const chunk = socket.read(16 * 1024) ?? socket.read();
      if (chunk === null) return;
      socket.pause();
      socket.removeListener('readable', pump);
      socket.write(chunk, () =>
        setTimeout(() => {
          socket.on('readable', pump);
          pump();
        }, 1),
      );
    });
    socket.on('end', () => socket.end());
  });
  const out = await s.invokeJson('slow', { port, mb: 4 });
  t.equal(out.accepted, false, 'write() of 4 MiB returns false');
  t.equal(out.drains, 1, "'drain' follows once it is all sent");
  t.equal(out.count, 4 * 1024 * 1024, 'every byte came back');
  t.equal(out.received, out.sent, 'in order');
});

t.test('a socket opened while the module loads is closed with the load, and says so on the first call', async (t) => {
  const { port, connections } = await listen(() => undefined);
  await s.deploy('load', functionFolder(LOAD), 'handler', { env: { PORT: String(port) } });
  const out = await s.invokeJson('load');
  // Closed as the load ended, or refused if the connect reached the host after it ended (the
  // isolate's callbacks cross asynchronously).
  t.match(out.code, /^ERR_SOCKET_(CALL_ENDED|OUTSIDE_CALL)$/);
  t.match(out.message, /belongs to/);
  t.equal(out.destroyed, true);
  await until(() => connections.every((c) => c.closed || c.readableEnded), 'the server saw it close');
});

t.test('pg: Client and Pool against a private PostgreSQL', async (t) => {
  const missing = postgresMissing();
  if (missing) {
    t.plan(0, `skip: ${missing}`);
    return;
  }
  const pg: PrivatePostgres = await startPostgres();
  t.teardown(() => pg.destroy());
  const dir = functionFolder(PG);
  copyPackage(ROOT, 'pg', dir);
  await s.deploy('pg_client', dir, 'client', { timeoutMs: 30_000 });
  await s.deploy('pg_pool', dir, 'pool', { timeoutMs: 30_000 });
  for (const round of [1, 2]) {
    const out = await s.invokeJson('pg_client', { url: pg.url });
    t.equal(out.sum, 5, `round ${round}: a query with parameters`);
    t.equal(out.name, 'islet');
    t.same(out.error, { code: '42P01', message: 'relation "no_such_table" does not exist' }, "the server's error, with its code");
    t.equal(out.one, 1, 'the connection goes on after an error');
  }
  const first = await s.invokeJson('pg_pool', { url: pg.url });
  t.equal(first.hello, 'pool');
  const second = await s.invokeJson('pg_pool', { url: pg.url });
  t.equal(second.hello, 'pool', "the pool's next call works: its idle connection was closed with the first call");
  t.not(second.pid, first.pid, 'on a new connection');
  t.equal(second.total, 1, 'the closed one left the pool');
});

t.test('ioredis against a private redis-server: set/get and a pipeline', async (t) => {
  const missing = redisMissing();
  if (missing) {
    if (process.env.CI) t.fail(`${missing} (CI must run this test: .ci/run installs it)`);
    else t.plan(0, `skip: ${missing} (.ci/run installs it)`);
    return;
  }
  const redis: PrivateRedis = await startRedis();
  t.teardown(() => redis.stop());
  const dir = functionFolder(REDIS);
  copyPackage(ROOT, 'ioredis', dir);
  await s.deploy('redis', dir, 'redis', { timeoutMs: 30_000 });
  const out = await s.invokeJson('redis', { port: redis.port });
  t.equal(out.value, 'hello redis');
  t.same(out.pipeline, [0, 1, 42, '42']);
  const again = await s.invokeJson('redis', { port: redis.port });
  t.equal(again.value, 'hello redis', 'and again, on a new connection');
});

t.test('host half: ids are per instance (a forged id reaches nothing), and bytes waiting to be sent are bounded and counted', async (t) => {
  const egress = new Egress({ allowPrivate: true, selfPorts: () => [], maxResponseBytes: 1024, timeoutMs: 10_000 });
  t.teardown(() => egress.close());
  const service = socketService(egress, 'acct');
  const { port } = await listen((socket) => socket.pipe(socket));
  const memoryA = new HostMemory(128 * 1024 * 1024);
  const a = new InstanceConnections({ limits: SOCKET_LIMITS, hostMemory: memoryA, live: () => true });
  const b = new InstanceConnections({ limits: SOCKET_LIMITS, hostMemory: new HostMemory(128 * 1024 * 1024), live: () => true });
  const opened = await a.connect('owner', '127.0.0.1', port, undefined, service);
  t.equal(opened.id, 1);
  // Another instance (another function, another account) names the same id: nothing is there.
  await t.rejects(b.write(opened.id, Buffer.from('forged'), service), { code: 'ERR_SOCKET_CLOSED', message: /never opened by this function instance/ });
  await t.rejects(b.read(opened.id, service), { code: 'ERR_SOCKET_CLOSED' });
  b.close(opened.id);
  t.equal(a.size, 1, "closing the forged id did not close this instance's socket");
  await a.write(opened.id, Buffer.from('still mine'), service);
  const echoed = (await a.read(opened.id, service)) as Buffer;
  t.equal(echoed.toString(), 'still mine');
  // Writes wait on the host until the kernel takes them: past bufferedBytes waiting, a write is refused.
  const piece = Buffer.alloc(64 * 1024);
  const pending: Promise<void>[] = [];
  let refused: unknown;
  for (let i = 0; i < 10 && refused === undefined; i++) {
    try {
      pending.push(a.write(opened.id, piece, service));
    } catch (err) {
      refused = err;
    }
  }
  const results = await Promise.allSettled(pending);
  t.equal(results.filter((r) => r.status === 'fulfilled').length, SOCKET_LIMITS.bufferedBytes / piece.length, 'as many writes as bufferedBytes holds');
  t.match(
    results.find((r) => r.status === 'rejected'),
    { reason: { code: 'ERR_SOCKET_BUFFER_FULL' } },
  );
  t.equal(memoryA.held, 0, 'the host memory they held is given back');
  // A write the instance's memory cannot hold is refused.
  const small = new InstanceConnections({ limits: SOCKET_LIMITS, hostMemory: new HostMemory(1024), live: () => true });
  const other = await small.connect('owner', '127.0.0.1', port, undefined, service);
  await t.rejects(small.write(other.id, piece, service), { code: 'ERR_SOCKET_MEMORY', message: /memory limit/ });
  a.closeAll('done');
  small.closeAll('done');
  t.equal(a.size + small.size, 0);
});

t.test('tls: the host does TLS, checks the certificate against the servername, and honours ca and rejectUnauthorized', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'islet-tls-'));
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      path.join(dir, 'key.pem'),
      '-out',
      path.join(dir, 'cert.pem'),
      '-days',
      '2',
      '-subj',
      '/CN=islet.test',
      '-addext',
      'subjectAltName=DNS:islet.test',
    ],
    { stdio: 'ignore' },
  );
  const key = readFileSync(path.join(dir, 'key.pem'));
  const cert = readFileSync(path.join(dir, 'cert.pem'));
  const ca = cert.toString();
  const direct = createTlsServer({ key, cert }, (socket) => socket.pipe(socket));
  servers.push(direct as unknown as Server);
  const directPort = await new Promise<number>((resolve) => direct.listen(0, '127.0.0.1', () => resolve((direct.address() as { port: number }).port)));
  const { port: startPort } = await listen((socket) => {
    socket.once('data', () => {
      socket.write('OK');
      const secure = new TLSSocket(socket, { isServer: true, key, cert });
      secure.on('error', () => undefined);
      secure.pipe(secure);
    });
  });
  const trusted = await s.invokeJson('tls', { port: directPort, ca, servername: 'islet.test' });
  t.same(trusted, { authorized: true, encrypted: true, echoed: 'ping' }, 'verified against the ca the function names');
  const upgraded = await s.invokeJson('tls', { port: startPort, ca, servername: 'islet.test', starttls: true });
  t.same(upgraded, { authorized: true, encrypted: true, echoed: 'ping' }, 'TLS over an open socket (STARTTLS)');
  const untrusted = await s.invokeJson('tls', { port: directPort, servername: 'islet.test' });
  t.equal(untrusted.error, 'DEPTH_ZERO_SELF_SIGNED_CERT', "the host's CA list by default: a self-signed certificate is refused");
  const wrongName = await s.invokeJson('tls', { port: directPort, ca, servername: 'other.test' });
  t.equal(wrongName.error, 'ERR_TLS_CERT_ALTNAME_INVALID', 'the certificate must name the servername');
  const unchecked = await s.invokeJson('tls', { port: directPort, servername: 'islet.test', rejectUnauthorized: false });
  t.same(unchecked, { authorized: false, encrypted: true, echoed: 'ping' }, "rejectUnauthorized: false is the function's own choice for its connection");
});
