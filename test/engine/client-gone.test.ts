import t from 'tap';
import type { ClientGone } from '../../engine/api';
import { functionFolder } from '../helpers/functions';
import { startTestServer, type TestServer } from '../helpers/server';

// A client that leaves while its call waits behind a busy instance (issue 25). An isolate takes at
// most 8 MB of calls' bodies between two idle moments of its thread (a sixteenth of its memory
// limit): while one call holds it, calls of 1 MiB each wait on the host past the eighth. Those
// whose clients leave never run; the rest run once it is free.
let s: TestServer;

const SOURCE = `
let ran = 0;
export default {
  async fetch(request) {
    const url = new URL(request.url);
    if (url.searchParams.has('count')) return new Response(String(ran));
    ran++;
    if (url.searchParams.has('busy')) {
      const until = Date.now() + Number(url.searchParams.get('busy'));
      while (Date.now() < until);
    }
    return new Response('ran');
  },
};
`;

t.before(async () => {
  s = await startTestServer({ limits: { maxInstancesPerVersion: 1 } });
  await s.engine.deploy(s.accountId, { name: 'queue', runtime: 'node8', file: 'worker.mjs', entrypoint: 'default', env: {}, timeoutMs: 60_000 }, { dir: functionFolder('', { 'worker.mjs': SOURCE }) });
});
t.teardown(() => s.stop());

t.test('calls whose clients leave while they wait behind a busy instance never run; the others do', async (t) => {
  const busy = s.invoke('queue', { query: 'busy=3000' });
  let busyAnswered = false;
  void busy.then(() => {
    busyAnswered = true;
  });
  // Let the busy call go in first.
  await new Promise((resolve) => setTimeout(resolve, 200));
  const lines: ClientGone[] = [];
  const body = 'x'.repeat(1024 * 1024);
  const waiting = Array.from({ length: 16 }, () => {
    const clientGone: ClientGone = {};
    lines.push(clientGone);
    return s.invoke('queue', { body, clientGone });
  });
  // Each line is set once its call reached the instance.
  while (lines.some((line) => line.onGone === undefined)) await new Promise((resolve) => setTimeout(resolve, 10));
  const leaving = [12, 13, 15];
  for (const i of leaving) lines[i]!.onGone?.();
  const left = await Promise.all(leaving.map((i) => waiting[i]!));
  t.notOk(busyAnswered, 'they were answered while the busy call still ran');
  for (const res of left) {
    t.equal(res.status, 499);
    t.match(JSON.parse(String(res.body)), { errorCode: 'ERR_CLIENT_GONE', message: 'the client closed the connection before the call started: the handler did not run' });
  }
  t.equal((await busy).status, 200);
  const rest = await Promise.all(waiting.filter((_, i) => !leaving.includes(i)));
  t.same(new Set(rest.map((r) => r.status)), new Set([200]), 'the calls whose clients stayed ran');
  t.equal(
    String((await s.invoke('queue', { query: 'count=1' })).body),
    String(1 + 16 - leaving.length),
    'the handler ran for the busy call and for each call whose client stayed, never for those that left',
  );
});
