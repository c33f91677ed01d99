import { createServer, type Server } from 'node:http';
import type { Socket } from 'node:net';
import t from 'tap';
import { MAX_OPEN_BODIES } from '../../engine/capabilities/fetch/bodies';
import { functionFolder } from '../helpers/functions';
import { startTestServer, type TestServer } from '../helpers/server';

// A hostile tenant's fetches that never read their bodies (issue 25): each streamed body holds an
// upstream connection open on the host. An instance holds at most MAX_OPEN_BODIES of them, and
// they are closed when the egress request's timeout passes (here the server's maxTimeoutMs, 15 s).
// The function's own timeout is as long: 200 fetches took over 2 s at a load of 15 on 2 cores.
let s: TestServer;
let upstream: Server;
let up = '';
const sockets: Socket[] = [];

const SOURCE = `
export default {
  async fetch(request) {
    const url = new URL(request.url);
    const target = url.searchParams.get('up');
    const times = Number(url.searchParams.get('times'));
    let ok = 0;
    const refusals = [];
    for (let i = 0; i < times; i++) {
      try {
        const res = await fetch(target);
        if (res.status === 200) ok++;
      } catch (err) {
        refusals.push(err.message);
      }
    }
    return Response.json({ ok, refused: refusals.length, refusal: refusals[0] });
  },
};
`;

t.before(async () => {
  // Answers with a body of unknown length: one chunk, then nothing (it streams, and never ends).
  upstream = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/octet-stream' });
    res.write('x'.repeat(1024));
  });
  upstream.on('connection', (socket: Socket) => sockets.push(socket));
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  up = `http://127.0.0.1:${(upstream.address() as { port: number }).port}/`;
  s = await startTestServer({ engine: { allowPrivateEgress: true }, limits: { maxTimeoutMs: 15_000, maxInstancesPerVersion: 1 } });
  await s.engine.deploy(s.accountId, { name: 'leak', runtime: 'node8', file: 'worker.mjs', entrypoint: 'default', env: {}, timeoutMs: 15_000 }, { dir: functionFolder('', { 'worker.mjs': SOURCE }) });
});
t.teardown(async () => {
  upstream.closeAllConnections();
  upstream.close();
  await s.stop();
});

async function leak(times: number): Promise<{ ok: number; refused: number; refusal?: string }> {
  const res = await s.call('leak', { query: `up=${encodeURIComponent(up)}&times=${times}` });
  return (await res.json()) as { ok: number; refused: number; refusal?: string };
}

const open = () => sockets.filter((socket) => !socket.destroyed).length;

async function until(condition: () => boolean, ms: number): Promise<boolean> {
  for (const deadline = Date.now() + ms; Date.now() < deadline; await new Promise((resolve) => setTimeout(resolve, 50))) if (condition()) return true;
  return condition();
}

t.test('200 fetches never read: 64 bodies are held, the rest refused by name, and every upstream connection is closed by the timeout', async (t) => {
  const first = await leak(200);
  t.equal(first.ok, MAX_OPEN_BODIES, 'the instance holds 64 unread bodies');
  t.equal(first.refused, 200 - MAX_OPEN_BODIES);
  t.match(first.refusal, /already has 64 response bodies open; read or cancel them first/);
  t.ok(await until(() => open() === 0, 60_000), `the egress timeout closed them all (${open()} open)`);
});

t.test('once its bodies were closed by the timeout, the instance can fetch again (it was held at the limit for good)', async (t) => {
  const again = await leak(1);
  t.same(again, { ok: 1, refused: 0 }, `a new fetch after the leaked ones timed out: ${JSON.stringify(again)}`);
  // The body of that fetch is still open: 63 more fit.
  t.same(
    await leak(200),
    { ok: MAX_OPEN_BODIES - 1, refused: 201 - MAX_OPEN_BODIES, refusal: 'fetch: this function instance already has 64 response bodies open; read or cancel them first' },
    'and the limit holds again',
  );
});
