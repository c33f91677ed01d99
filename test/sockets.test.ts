import { createHash, randomBytes } from 'node:crypto';
import { createServer, type Server, type Socket } from 'node:net';
import t from 'tap';
import { InstanceConnections } from '../engine/capabilities/sockets/connections';
import { socketService } from '../engine/capabilities/sockets/egress';
import { SOCKET_LIMITS } from '../engine/capabilities/sockets/limits';
import { Egress } from '../engine/capabilities/fetch/egress';
import { HostMemory } from '../engine/isolate/host-memory';
import { functionFolder } from './helpers/functions';
import { copyPackage } from './helpers/package-closure';
import { postgresMissing, startPostgres, type PrivatePostgres } from './helpers/postgres';
import { startRedis, redisMissing, type PrivateRedis } from './helpers/redis';
import { ROOT, startTestServer, type TestServer } from './helpers/server';

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

/** Waits until `condition` holds (a generous deadline: the machine may be loaded). */
async function until(condition: () => boolean, what: string, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
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

t.before(async () => {
  s = await startTestServer({ engine: { allowPrivateEgress: true }, limits: { maxInstancesPerVersion: 1, sockets: { ...SOCKET_LIMITS, socketsPerInstance: 4 } } });
  strict = await startTestServer();
  const echo = functionFolder(ECHO);
  await s.deploy('echo', echo, 'echo');
  await s.deploy('refused', echo, 'refused');
  await s.deploy('hold', echo, 'hold');
  await strict.deploy('refused', echo, 'refused');
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
  t.match(opened.find((o) => o !== 'open'), /already holds 4 sockets, its limit/);
  await until(() => connections.length === 4 && connections.every((c) => c.closed || c.readableEnded), 'the call ended and its sockets closed');
  // The next call can open as many again.
  const again = (await s.invokeJson('hold', { port, count: 4 })) as unknown as string[];
  t.same(again, ['open', 'open', 'open', 'open']);
});
