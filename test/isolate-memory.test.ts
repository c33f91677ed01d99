import t from 'tap';
import type { IsolateInstance } from '../engine/isolate/instance';
import { functionFolder } from './helpers/functions';
import { startTestServer, type TestServer } from './helpers/server';

// What isolated-vm counts against a function's memory limit must be what the function keeps.
let s: TestServer;
const echoSize = functionFolder(`exports.handler = (body) => ({ items: body.items.length });\n`);

t.before(async () => {
  s = await startTestServer();
  await s.deploy('bodies', echoSize, 'handler');
});
t.teardown(() => s.stop());

t.test('10 KB bodies under concurrency do not pile up against the memory limit', async (t) => {
  const body = Buffer.from(JSON.stringify({ items: Array.from({ length: 400 }, (_, i) => ({ i, name: `item-${i}` })) }));
  t.ok(body.length > 10_000);
  const call = () => s.engine.invoke({ accountId: s.accountId, functionName: 'bodies', apiKey: s.apiKey, method: 'POST', path: '/', rawQuery: '', headers: { 'content-type': 'application/json' }, body });
  let failed = 0;
  // 64 at a time, as under load: bodies stay alive across young-generation collections.
  for (let round = 0; round < 60; round++) {
    const answers = await Promise.all(Array.from({ length: 64 }, call));
    failed += answers.filter((a) => a.status !== 200).length;
  }
  t.equal(failed, 0, 'every call answered');
  const instance = [...(s.engine as unknown as { pool: { cache: Map<string, IsolateInstance> } }).pool.cache.values()][0]!;
  const external = instance.isolate.getHeapStatisticsSync().externally_allocated_size;
  // Long texts used to arrive as external strings that only a full collection frees: after these
  // 3,840 calls they held tens of MB of the function's 128 MB.
  t.ok(external < 4 * 1024 * 1024, `external memory counted against the limit: ${(external / 1048576).toFixed(1)} MB`);
});
