import t from 'tap';
import type { IsolateInstance } from '../../engine/isolate/instance';
import { functionFolder } from '../helpers/functions';
import { startTestServer, type TestServer } from '../helpers/server';

// What isolated-vm counts against a function's memory limit must be what the function keeps.
let s: TestServer;
const echoSize = functionFolder(`exports.handler = (body) => ({ items: body.items.length });\n`);
// Spins a little per call so that the isolate, not the host, is the busy side.
const slowEcho = functionFolder(`exports.handler = (body) => { let x = 0; for (let i = 0; i < 200000; i++) x += i; return { items: body.items.length, x }; };\n`);
const body = Buffer.from(JSON.stringify({ items: Array.from({ length: 400 }, (_, i) => ({ i, name: `item-${i}` })) }));

t.before(async () => {
  // One instance per version: these loads are about what one isolate holds.
  s = await startTestServer({ limits: { maxInstancesPerVersion: 1 } });
  await s.deploy('bodies', echoSize, 'handler');
  await s.deploy('steady', slowEcho, 'handler', { memoryMb: 32 });
});
t.teardown(() => s.stop());

const call = (functionName: string) => s.invoke(functionName, { headers: { 'content-type': 'application/json' }, body });

function instanceOf(name: string): IsolateInstance {
  const cache = (s.internals as unknown as { pool: { cache: Map<string, { instances: IsolateInstance[] }> } }).pool.cache;
  for (const [key, group] of cache) if (key.includes(`/${name}/`) && group.instances[0]) return group.instances[0];
  throw new Error(`no warm instance of ${name}`);
}

t.test('10 KB bodies under concurrency do not pile up against the memory limit', async (t) => {
  t.ok(body.length > 10_000);
  let failed = 0;
  // 64 at a time, as under load: bodies stay alive across young-generation collections.
  for (let round = 0; round < 60; round++) {
    const answers = await Promise.all(Array.from({ length: 64 }, () => call('bodies')));
    failed += answers.filter((a) => a.status !== 200).length;
  }
  t.equal(failed, 0, 'every call answered');
  const external = instanceOf('bodies').isolate.getHeapStatisticsSync().externally_allocated_size;
  // Long texts used to arrive as external strings that only a full collection frees: after these
  // 3,840 calls they held tens of MB of the function's 128 MB.
  t.ok(external < 4 * 1024 * 1024, `external memory counted against the limit: ${(external / 1048576).toFixed(1)} MB`);
});

t.test('a function kept busy without a pause keeps only what it holds', async (t) => {
  // isolated-vm frees what an entry handed to an isolate (its arguments) only when the isolate's
  // thread runs out of queued entries. Two groups of 32 calls take turns so that one group's batch
  // always waits while the other's runs: 4,000 bodies of 10 KB are 40 MB, over this function's 32 MB.
  t.equal((await call('steady')).status, 200, 'warm before the load');
  let failed = 0;
  let firstError = '';
  const group = async (yieldFirst: boolean) => {
    for (let round = 0; round < 63; round++) {
      // A turn of the event loop apart, so the groups never share a batch.
      if (yieldFirst) await new Promise((resolve) => setImmediate(resolve));
      for (const answer of await Promise.all(Array.from({ length: 32 }, () => call('steady')))) {
        if (answer.status === 200) continue;
        failed++;
        firstError ||= JSON.stringify(answer.body).slice(0, 200);
      }
    }
  };
  await Promise.all([group(false), group(true)]);
  t.equal(failed, 0, `every call answered${firstError ? `; first failure: ${firstError}` : ''}`);
});
