import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import t from 'tap';
import { functionFolder } from '../helpers/functions';
import { startTestServer, type TestServer } from '../helpers/server';

// Warm instances: bounded, shared, retired safely on redeploy.
let s: TestServer;
const cacheDir = mkdtempSync(path.join(tmpdir(), 'islet-cache-'));
const counter = functionFolder(`let calls = 0;\nexports.handler = () => ++calls;\n`);
const slow = (label: string) => functionFolder(`exports.handler = async (body) => {\n  if (body.wait) await new Promise((r) => setTimeout(r, body.wait));\n  return ${JSON.stringify(label)};\n};\n`);

t.before(async () => {
  s = await startTestServer({ limits: { maxWarmInstances: 2 }, engine: { cacheDir } });
  for (const name of ['a', 'b', 'c']) await s.deploy(name, counter, 'handler');
});
t.teardown(() => s.stop());

async function calls(name: string): Promise<number> {
  return (await (await s.call(name)).json()) as number;
}

t.test('the warm cache is bounded by count and evicted instances are disposed', async (t) => {
  t.equal(await calls('a'), 1);
  t.equal(await calls('a'), 2, 'warm: module state kept');
  t.equal(await calls('b'), 1);
  t.equal(await calls('c'), 1);
  t.ok(s.engine.stats().warm <= 2, `at most 2 warm (${s.engine.stats().warm})`);
  const before = s.engine.stats().coldStarts;
  t.equal(await calls('a'), 1, 'a was evicted: its next call starts a fresh instance');
  t.equal(s.engine.stats().coldStarts, before + 1);
});

t.test("the first call after a deploy runs in the instance the deploy's check loaded: no cold start", async (t) => {
  const loads = functionFolder(`globalThis.loads = (globalThis.loads ?? 0) + 1;\nlet calls = 0;\nexports.handler = () => [globalThis.loads, ++calls];\n`);
  await s.deploy('prewarmed', loads, 'handler');
  const before = s.engine.stats().coldStarts;
  t.same(await (await s.call('prewarmed')).json(), [1, 1], 'its module code ran once, at the deploy');
  t.same(await (await s.call('prewarmed')).json(), [1, 2]);
  t.equal(s.engine.stats().coldStarts, before, 'no cold start');
});

t.test("the deploy's instance reads the version's files where the store keeps them, not where the deploy unpacked them", async (t) => {
  const node = functionFolder(`const fs = require('fs');\nexports.handler = () => fs.readFileSync(__dirname + '/data.txt', 'utf8');\n`, { 'data.txt': 'node8 data' });
  const before = s.engine.stats().coldStarts;
  await s.deploy('reads_files', node, 'handler');
  t.equal(await (await s.call('reads_files')).json(), 'node8 data');
  const py = mkdtempSync(path.join(tmpdir(), 'islet-py-files-'));
  writeFileSync(path.join(py, 'function.py'), "def handler(body, req):\n    with open('data.txt') as f:\n        return f.read()\n");
  writeFileSync(path.join(py, 'data.txt'), 'python data');
  await s.deployPython('reads_files_py', py, 'handler');
  t.equal(await (await s.call('reads_files_py')).json(), 'python data');
  t.equal(s.engine.stats().coldStarts, before, "both calls ran in the deploys' instances");
});

t.test('concurrent first calls of a version share one cold start', async (t) => {
  await s.deploy('fresh', counter, 'handler');
  // Two other versions called: the deploy's warm instance of this one is evicted (two warm at most).
  await calls('a');
  await calls('b');
  const before = s.engine.stats().coldStarts;
  const results = await Promise.all(Array.from({ length: 10 }, () => calls('fresh')));
  t.same(
    [...results].sort((x, y) => x - y),
    [1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
    'all ten ran in one instance',
  );
  t.equal(s.engine.stats().coldStarts, before + 1);
});

t.test('a redeploy lets in-flight calls finish on the old version; the next call runs the new one', async (t) => {
  await s.deploy('versioned', slow('v1'), 'handler');
  const inFlight = s.call('versioned', { body: JSON.stringify({ wait: 300 }) });
  await new Promise((r) => setTimeout(r, 50));
  await s.deploy('versioned', slow('v2'), 'handler');
  const old = await inFlight;
  t.equal(old.status, 200, 'the running call was not cut off');
  t.equal(await old.json(), 'v1');
  t.equal(await (await s.call('versioned')).json(), 'v2');
});

t.test('V8 code cache is written per deployed code in the cache folder', async (t) => {
  const files = readdirSync(path.join(cacheDir, 'node8'));
  t.ok(
    files.some((f) => f.endsWith('.v8cache')),
    `cache files: ${files.length}`,
  );
});

t.test('40 distinct functions through a warm cache of 2: it evicts, stays bounded, and every call answers', async (t) => {
  const names = Array.from({ length: 40 }, (_, i) => `many_${i}`);
  for (const name of names) await s.deploy(name, counter, 'handler');
  const statuses = new Set<number>();
  for (const name of names) {
    const res = await s.call(name);
    statuses.add(res.status);
    await res.text();
  }
  t.same([...statuses], [200]);
  t.ok(s.engine.stats().warm <= 2, `warm instances stay within the bound (${s.engine.stats().warm})`);
});

t.test('an instance that grows with use is measured again, so the warm cache counts what it holds', async (t) => {
  const hoard = functionFolder(`const kept = [];\nexports.handler = () => { kept.push(new Array(12500).fill(kept.length)); return kept.length; };\n`);
  await s.deploy('hoard', hoard, 'handler');
  const before = s.engine.stats().warmMb;
  for (let i = 0; i < 300; i++) await (await s.call('hoard')).text();
  let grown = 0;
  for (let wait = 0; wait < 40 && grown < 20; wait++) {
    grown = s.engine.stats().warmMb - before;
    if (grown < 20) await new Promise((r) => setTimeout(r, 50));
  }
  t.ok(grown >= 20, `the warm cache counts the ~30 MB it keeps (grew by ${grown} MB)`);
});
