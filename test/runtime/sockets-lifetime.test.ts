import { createServer, type Server, type Socket } from 'node:net';
import t from 'tap';
import { SOCKET_LIMITS } from '../../engine/capabilities/sockets/limits';
import { functionFolder } from '../helpers/functions';
import { startTestServer, type TestServer } from '../helpers/server';

// Outbound TCP sockets (issue 25, item 5) at the end of their life: the idle timeout closes a
// socket nobody uses, and an instance that dies takes its sockets with it. `s` has an idle timeout
// of 300 ms (an operator's setting: Limits.sockets.idleMs) and allows loopback; `d` keeps the
// default idle timeout (60 s), so that only the instance's end can close a socket there.
let s: TestServer;
let d: TestServer;
let server: Server;
let port = 0;
const connections: Socket[] = [];

const SOURCE = `
const net = require('node:net');
const { once } = require('node:events');
exports.idle = async ({ port }) => {
  // Connects, then neither writes nor is written to. Timed from before the connect: the host's
  // idle clock starts when the connection is made, which the function hears later (on a loaded
  // machine, 54 ms later once).
  const started = Date.now();
  const socket = net.connect(port, '127.0.0.1');
  await once(socket, 'connect');
  const error = await new Promise((resolve) => socket.on('error', resolve));
  return { code: error.code, message: error.message, afterMs: Date.now() - started, destroyed: socket.destroyed };
};
exports.dies = async ({ port }) => {
  // Connects, then spins past the call's timeout: the instance is stopped with its socket open.
  const socket = net.connect(port, '127.0.0.1');
  await once(socket, 'connect');
  for (;;);
};
`;

t.before(async () => {
  server = createServer((socket) => {
    connections.push(socket);
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as { port: number }).port;
  s = await startTestServer({ engine: { allowPrivateEgress: true }, limits: { sockets: { ...SOCKET_LIMITS, idleMs: 300 } } });
  const folder = functionFolder(SOURCE);
  await s.deploy('idle', folder, 'idle', { timeoutMs: 30_000 });
  d = await startTestServer({ engine: { allowPrivateEgress: true } });
  await d.deploy('dies', folder, 'dies', { timeoutMs: 1_000 });
});
t.teardown(async () => {
  server.close();
  await s.stop();
  await d.stop();
});

/** Whether the peer's end of `socket` closed within a generous deadline. */
async function closedByPeer(socket: Socket): Promise<boolean> {
  for (const deadline = Date.now() + 15_000; Date.now() < deadline; await new Promise((resolve) => setTimeout(resolve, 20))) {
    if (socket.closed || socket.readableEnded) return true;
  }
  return false;
}

t.test('a socket idle past the idle timeout is closed, with ETIMEDOUT naming the limit', async (t) => {
  const before = connections.length;
  const result = (await s.invokeJson('idle', { port })) as { code: string; message: string; afterMs: number; destroyed: boolean };
  t.equal(result.code, 'ETIMEDOUT');
  t.equal(result.message, 'the socket was idle for 0.3 s and was closed');
  t.ok(result.afterMs >= 250, `not before its time (${result.afterMs} ms)`);
  t.equal(result.destroyed, true);
  t.equal(connections.length, before + 1);
  t.ok(await closedByPeer(connections[before]!), 'the server saw the connection closed');
});

t.test('a call stopped at its timeout, its instance with it, closes its sockets', async (t) => {
  const before = connections.length;
  const res = await d.invoke('dies', { method: 'POST', body: JSON.stringify({ port }) });
  t.equal(res.status, 504);
  t.equal(connections.length, before + 1, 'the function had connected');
  t.ok(await closedByPeer(connections[before]!), 'the server saw the connection closed');
});
