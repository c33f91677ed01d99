import { createServer, type Server } from 'node:http';
import type { Socket } from 'node:net';
import t from 'tap';
import { MAX_OPEN_BODIES } from '../../engine/capabilities/fetch/bodies';
import { functionFolder } from '../helpers/functions';
import { startTestServer, type TestServer } from '../helpers/server';

// A hostile tenant's fetches that never read their bodies (issue 25): each streamed body holds an
// upstream connection open on the host. An instance holds at most MAX_OPEN_BODIES of them, and a
// body belongs to the call that fetched it: those it left unread are closed when it is over (its
// answer, or its waitUntil work), long before the egress request's timeout (here the server's
// maxTimeoutMs, 120 s) would close them.
let s: TestServer;
let upstream: Server;
let up = '';
const sockets: Socket[] = [];

const SOURCE = `
export default {
  async fetch(request, env, ctx) {
    const url = new URL(request.url);
    const target = url.searchParams.get('up');
    if (url.searchParams.has('keep')) {
      // Kept for the next call, which reads it after the call that fetched it ended.
      globalThis.kept = await fetch(target);
      return new Response('kept');
    }
    if (url.searchParams.has('read-kept')) {
      try {
        return new Response(await globalThis.kept.text());
      } catch (err) {
        return new Response(err.name + ': ' + err.message);
      }
    }
    if (url.searchParams.has('after')) {
      // Read by the call's waitUntil work, after its answer: the body lasts until that work ends.
      const res = await fetch(target);
      ctx.waitUntil(res.text().then((text) => { globalThis.afterAnswer = text.length; }, (err) => { globalThis.afterAnswer = err.message; }));
      return new Response('answered');
    }
    if (url.searchParams.has('after-result')) return Response.json(globalThis.afterAnswer ?? null);
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
  // Answers with a body of unknown length: one chunk, then nothing (it streams, and never ends);
  // at /ends, the rest a second later.
  upstream = createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'application/octet-stream' });
    res.write('x'.repeat(1024));
    if (req.url === '/ends') setTimeout(() => res.end('y'.repeat(1024)), 1000);
  });
  upstream.on('connection', (socket: Socket) => sockets.push(socket));
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  up = `http://127.0.0.1:${(upstream.address() as { port: number }).port}/`;
  s = await startTestServer({ engine: { allowPrivateEgress: true }, limits: { maxTimeoutMs: 120_000, maxInstancesPerVersion: 1 } });
  await s.engine.deploy(s.accountId, { name: 'leak', runtime: 'node8', file: 'worker.mjs', entrypoint: 'default', env: {}, timeoutMs: 120_000 }, { dir: functionFolder('', { 'worker.mjs': SOURCE }) });
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

async function ask(query: string, target = up): Promise<string> {
  return (await s.call('leak', { query: `up=${encodeURIComponent(target)}&${query}` })).text();
}

const open = () => sockets.filter((socket) => !socket.destroyed).length;

async function until(condition: () => boolean, ms: number): Promise<boolean> {
  for (const deadline = Date.now() + ms; Date.now() < deadline; await new Promise((resolve) => setTimeout(resolve, 50))) if (condition()) return true;
  return condition();
}

t.test('200 fetches never read: 64 bodies are held, the rest refused by name, and every upstream connection closes when the call ends', async (t) => {
  const first = await leak(200);
  t.equal(first.ok, MAX_OPEN_BODIES, 'the instance holds 64 unread bodies');
  t.equal(first.refused, 200 - MAX_OPEN_BODIES);
  t.match(first.refusal, /already has 64 response bodies open; read or cancel them first/);
  // The egress timeout is 120 s: only the call's end closes them this soon.
  t.ok(await until(() => open() === 0, 20_000), `the call's end closed them all (${open()} open)`);
});

t.test("the next call has the instance's 64 bodies again: what a call leaves unread is not held at the limit", async (t) => {
  t.same(await leak(200), { ok: MAX_OPEN_BODIES, refused: 200 - MAX_OPEN_BODIES, refusal: 'fetch: this function instance already has 64 response bodies open; read or cancel them first' });
  t.ok(await until(() => open() === 0, 20_000), `closed again (${open()} open)`);
});

t.test('a body kept past its call fails when read, saying why', async (t) => {
  t.equal(await ask('keep=1'), 'kept');
  t.ok(await until(() => open() === 0, 20_000), 'its connection closed with the call');
  t.equal(await ask('read-kept=1'), 'TypeError: fetch: the response body was closed unread because the call that fetched it ended: read a body within its call (or its waitUntil work)');
});

t.test("a body read by the call's waitUntil work after the answer lasts until that work is done", async (t) => {
  t.equal(await ask('after=1', `${up}ends`), 'answered');
  let seen: unknown = null;
  for (const deadline = Date.now() + 30_000; Date.now() < deadline && seen === null; await new Promise((resolve) => setTimeout(resolve, 200))) {
    seen = JSON.parse(await ask('after-result=1'));
  }
  t.equal(seen, 2048, 'the work read the whole body, 1 s after the answer');
});
