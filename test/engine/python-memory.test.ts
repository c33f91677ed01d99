import t from 'tap';
import { fixture, startTestServer } from '../helpers/server';

// What a warm Python instance weighs: the warm cache's count and the process's RSS per instance.
// Boot's leftovers (the snapshot copy, the wasm bytes) once made each 82 MB of RSS and 94 MB counted;
// the wasm bytes Pyodide keeps, 62 MB counted. Now about 53 MB counted, and 41-56 MB of RSS on a
// loaded 2-core machine, where the RSS varies more (the isolate threads' malloc arenas).
t.test('a warm Python instance weighs at most 60 MB counted and 72 MB in RSS', async (t) => {
  const s = await startTestServer({ limits: { pythonSpare: false } });
  t.teardown(() => s.stop());
  const count = 4;
  for (let i = 0; i <= count; i++) await s.deployPython(`weigh_${i}`, fixture('seed-python'), 'hello');
  await (await s.call('weigh_0')).text();
  const rss = (): number => {
    (globalThis as { gc?: () => void }).gc?.();
    return process.memoryUsage().rss / 1048576;
  };
  const before = rss();
  for (let i = 1; i <= count; i++) for (let k = 0; k < 10; k++) await (await s.call(`weigh_${i}`, { query: 'name=abc' })).text();
  const perInstance = (rss() - before) / count;
  const stats = s.engine.stats();
  t.equal(stats.warm, count + 1);
  t.ok(stats.warmMb / stats.warm <= 60, `the warm cache counts ${(stats.warmMb / stats.warm).toFixed(1)} MB per instance`);
  t.ok(perInstance <= 72, `${perInstance.toFixed(1)} MB of RSS per warm instance`);
});
