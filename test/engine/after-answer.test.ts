import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { eventually } from '../helpers/supervised';
import { fixture, startTestServer, type TestServer } from '../helpers/server';

// Nothing of a function runs after its answer unless it asked (issue 22, finding 8): its timers
// and finished operations wait for its next call (as a Lambda function is frozen between calls),
// `waitUntil` work runs on for at most the function's timeout, and code still running a timeout
// after its answer stops the instance.
let s: TestServer;
const folder = fixture('after-answer-node8');
// Long enough for a call's own work on a loaded machine (400 ms was not, beside four busy loops and four test files).
const TIMEOUT = 1500;

t.before(async () => {
  s = await startTestServer();
  await s.deploy('interval', folder, 'interval');
  await s.deploy('spin_after_answer', folder, 'spinAfterAnswer', { timeoutMs: TIMEOUT });
  for (const [name, file, timeoutMs] of [
    ['worker', 'worker.mjs', TIMEOUT],
    ['top_level_timer', 'top-level-timer.mjs', 10_000],
  ] as const) {
    await s.engine.deploy(s.accountId, { name, runtime: 'node8', file, entrypoint: 'default', env: {}, timeoutMs }, { dir: folder });
  }
  // A warm instance first: on a loaded machine (four busy loops beside the suite) the cold start
  // alone passed a 400 ms timeout and the first test's call answered ERR_TIMEOUT.
  if (!(await eventually(async () => (await s.call('worker', { path: '/?from=0&to=0' })).status === 200, 30_000))) throw new Error('worker never answered');
});
t.teardown(() => s.stop());

async function logLines(name: string): Promise<string[]> {
  return (await s.engine.readLogs(s.accountId, name, {})).map((e) => e.message);
}

t.test('an interval left running does not run between calls; what came due runs with the next call', async (t) => {
  const started = (await s.invokeJson('interval', { op: 'start' })) as unknown as number;
  await sleep(1000);
  const idleUntil = Date.now();
  const ranWhileIdle = (await s.invokeJson('interval', { op: 'ticks', from: started + 50, to: idleUntil - 50 })) as unknown as number;
  // Before, it ran about every 10 ms: some 90 times in this second, a third of a core.
  t.equal(ranWhileIdle, 0, 'it did not run while no call was in flight');
  const ranSince = (await s.invokeJson('interval', { op: 'ticks', from: idleUntil - 50, to: Date.now() })) as unknown as number;
  t.ok(ranSince >= 1, `its due run came with the next call (${ranSince})`);
});

t.test('waitUntil work runs after the answer, with no call in flight', async (t) => {
  const res = await s.call('worker', { path: '/later' });
  t.equal(await res.text(), 'answered');
  t.ok(await eventually(async () => (await logLines('worker')).includes('waitUntil finished'), 5000), 'its timer ran and it finished');
});

t.test('waitUntil work runs for at most the timeout', async (t) => {
  const started = (await (await s.call('worker', { path: '/forever' })).json()) as { started: number };
  await sleep(TIMEOUT + 1200);
  const from = started.started + TIMEOUT + 500;
  const to = Date.now() - 50;
  const ticks = (await (await s.call('worker', { path: '/count', query: `from=${from}&to=${to}` })).json()) as number;
  t.equal(ticks, 0, 'its interval stopped once the window closed');
});

t.test('code still running a timeout after its answer stops the instance', async (t) => {
  const res = await s.call('spin_after_answer');
  t.equal(res.status, 200);
  t.equal(await res.json(), 'answered');
  t.ok(await eventually(async () => (await logLines('spin_after_answer')).some((line) => line.includes(`kept running ${TIMEOUT} ms after its answer and was stopped`)), 10_000), 'the log says so');
  const again = await s.call('spin_after_answer');
  t.equal(again.status, 200, 'the next call gets a fresh instance');
});

t.test('a module that awaits a timer at its top level loads', async (t) => {
  const res = await s.call('top_level_timer');
  t.equal(await res.text(), 'loaded after a timer');
});
