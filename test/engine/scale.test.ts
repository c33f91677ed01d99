import t from 'tap';
import { functionFolder } from '../helpers/functions';
import { startTestServer, type TestServer } from '../helpers/server';

// Several instances per busy function version: a version whose calls keep its instance busy
// running code gets another one (up to the bound), and the extra one goes when it stays idle. A
// handler that awaits I/O keeps sharing one instance.
let s: TestServer;
const spin = (ms: number) => `let calls = 0;\nexports.handler = () => { const end = Date.now() + ${ms}; while (Date.now() < end); return ++calls; };\n`;

t.before(async () => {
  s = await startTestServer({ limits: { maxInstancesPerVersion: 2, instanceIdleMs: 400 } });
});
t.teardown(() => s.stop());

/** Keeps `concurrency` calls of `name` in flight for `ms`. */
async function load(name: string, concurrency: number, ms: number): Promise<number[]> {
  const until = Date.now() + ms;
  const statuses: number[] = [];
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (Date.now() < until) statuses.push((await s.invoke(name)).status);
    }),
  );
  return statuses;
}

async function waitUntil(done: () => boolean, ms: number): Promise<boolean> {
  const until = Date.now() + ms;
  while (!done() && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
  return done();
}

t.test('a CPU-bound node8 function gets a second instance under concurrent load, and loses it when idle', async (t) => {
  await s.deploy('busy', functionFolder(spin(4)), 'handler');
  const before = s.engine.stats();
  const statuses = await load('busy', 6, 1500);
  const during = s.engine.stats();
  t.same([...new Set(statuses)], [200], `${statuses.length} calls, all answered`);
  t.equal(during.scaleOuts - before.scaleOuts, 1, 'one more instance was started');
  t.equal(during.warm, 2, 'two warm instances of the one version');
  t.ok(await waitUntil(() => s.engine.stats().warm === 1, 3000), 'the extra instance is retired once idle');
  t.equal(s.engine.stats().trims - before.trims, 1);
  // Module-level state is per instance: the counter restarts in a new instance (documented).
});

t.test('a handler that awaits I/O keeps sharing one instance however many calls are in flight', async (t) => {
  await s.deploy('waits', functionFolder('exports.handler = async () => { await new Promise((r) => setTimeout(r, 30)); return 1; };\n'), 'handler');
  const before = s.engine.stats();
  const statuses = await load('waits', 32, 1000);
  t.same([...new Set(statuses)], [200]);
  t.equal(s.engine.stats().scaleOuts, before.scaleOuts, 'no instance was added');
});

t.test('a CPU-bound Python function scales out too', async (t) => {
  await s.deployPython(
    'pybusy',
    functionFolder('', {
      'function.py': 'import time\ncalls = 0\ndef handler(body, req):\n    global calls\n    end = time.time() + 0.004\n    while time.time() < end:\n        pass\n    calls += 1\n    return calls\n',
    }),
    'handler',
  );
  await s.invoke('pybusy');
  const before = s.engine.stats();
  const statuses = await load('pybusy', 6, 2000);
  t.same([...new Set(statuses)], [200]);
  t.equal(s.engine.stats().scaleOuts - before.scaleOuts, 1, 'one more Python instance was started');
});
