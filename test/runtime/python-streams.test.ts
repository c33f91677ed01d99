import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { request as undiciRequest } from 'undici';
import { eventually } from '../helpers/supervised';
import { fixture, startTestServer, type TestServer } from '../helpers/server';

// Python's streamed answers (issue 25, item 1) at their edges: a client that leaves closes the
// generator (its `finally` runs), a client that reads nothing holds it back, the timeout cuts it.
let s: TestServer;

t.before(async () => {
  s = await startTestServer();
  await s.deployPython('endless', fixture('streams-python'), 'endless', { timeoutMs: 60_000 });
  await s.deployPython('stalls', fixture('streams-python'), 'stalls', { timeoutMs: 1_500 });
});
t.teardown(() => s.stop());

function url(name: string): string {
  return `${s.url}/v2/run/${s.accountId}/${name}`;
}

async function messages(name: string): Promise<{ level: string; message: string; code?: string }[]> {
  return s.engine.readLogs(s.accountId, name, {});
}

/** The most chunks the `endless` generator has said it yielded. */
async function yielded(): Promise<number> {
  let most = 0;
  for (const e of await messages('endless')) {
    const m = /^yielded (\d+)$/.exec(e.message);
    if (m) most = Math.max(most, Number(m[1]));
  }
  return most;
}

t.test('a slow client holds the generator back: nothing is pulled while the socket is full', async (t) => {
  const res = await undiciRequest(url('endless'), { headers: { 'X-Service-Api-Key': s.apiKey } });
  t.equal(res.statusCode, 200);
  // Read nothing for a while: the kernel's buffers fill, then the server stops pulling.
  await sleep(2000);
  const held = await yielded();
  // Unbounded, a generator of 64 KiB chunks makes thousands a second; held, what the sockets hold.
  t.ok(held >= 8 && held < 400, `the generator yielded about ${held} chunks (${((held * 64) / 1024).toFixed(1)} MiB) while the client read nothing`);
  await sleep(1000);
  const again = await yielded();
  t.ok(again - held <= 16, `and no more meanwhile (${again - held})`);

  // The client leaves: the generator is closed, its finally runs.
  res.body.on('error', () => undefined).destroy();
  t.ok(await eventually(async () => (await messages('endless')).some((e) => /^closed after \d+ chunks$/.test(e.message)), 10_000), "the generator's finally ran");
  t.ok(await eventually(async () => (await messages('endless')).some((e) => e.level === 'call' && / 499 .*ERR_CLIENT_GONE$/.test(e.message)), 10_000), 'the call line says the client went away');
});

t.test('the timeout ends a generator mid-stream: the body is cut and the log says so', async (t) => {
  const res = await fetch(url('stalls'), { headers: { 'X-Service-Api-Key': s.apiKey } });
  t.equal(res.status, 200);
  const reader = res.body!.getReader();
  const first = await reader.read();
  t.equal(new TextDecoder().decode(first.value), 'one chunk, then nothing');
  await t.rejects(reader.read(), 'the body is cut, not ended');
  t.ok(await eventually(async () => (await messages('stalls')).some((e) => e.level === 'error' && e.code === 'ERR_TIMEOUT'), 10_000), 'the log says it timed out');
  t.ok(await eventually(async () => (await messages('stalls')).some((e) => e.level === 'call' && /ERR_TIMEOUT$/.test(e.message)), 10_000), 'and the call line');
});
