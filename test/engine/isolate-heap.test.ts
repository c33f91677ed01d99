import ivm from 'isolated-vm';
import t from 'tap';
import { newIsolate, semiSpaceMb } from '../../engine/isolate/heap';
import { functionFolder } from '../helpers/functions';
import { startTestServer, type TestServer } from '../helpers/server';

// An isolate's young generation is Node's own (16 MB semi-spaces) at 128 MB and up, within the
// function's memory limit: the heap as a whole is held to it.
const MB = 1024 * 1024;

t.test('semi-spaces are an eighth of the limit, a power of two from 1 to 16 MB', async (t) => {
  t.same(
    [16, 32, 64, 100, 128, 512, 2048].map((mb) => semiSpaceMb(mb)),
    [2, 4, 8, 8, 16, 16, 16],
  );
});

t.test("an isolate's heap limit is the function's memory limit, young generation included", async (t) => {
  for (const memoryMb of [16, 64, 128, 512]) {
    const isolate = newIsolate(memoryMb);
    // V8's heap limit is the old generation's plus the young generation's (three semi-spaces).
    t.equal(isolate.getHeapStatisticsSync().heap_size_limit, memoryMb * MB, `${memoryMb} MB`);
    isolate.dispose();
  }
  // The semi-space flag is set only while an isolate is made: others keep isolated-vm's sizes.
  const plain = new ivm.Isolate({ memoryLimit: 128 });
  const limit = plain.getHeapStatisticsSync().heap_size_limit;
  plain.dispose();
  t.ok(limit > 128 * MB && limit < 132 * MB, `an isolate made afterwards without it: ${(limit / MB).toFixed(1)} MB`);
});

let s: TestServer;
// Holds `mb` arrays of 1 MB each (old space), then parses a 5 MB JSON document three times
// (young space): what a function keeps and what it churns, against its limit.
const holder = functionFolder(`
const keep = [];
exports.handler = (body, context) => {
  const mb = Number(context.request.query.mb);
  for (let i = keep.length; i < mb; i++) keep.push(new Array(131072).fill(i));
  const doc = JSON.stringify({ items: Array.from({ length: 70000 }, (_, i) => ({ id: i, name: 'item ' + i, tags: ['a', 'b'] })) });
  let items = 0;
  for (let round = 0; round < 3; round++) items += JSON.parse(doc).items.length;
  return { held: keep.length, items };
};
`);

t.test('a 128 MB function', async (t) => {
  s = await startTestServer();
  t.teardown(() => s.stop());
  await s.deploy('holder', holder, 'handler', { timeoutMs: 60_000 });
  await s.deploy('over', holder, 'handler', { timeoutMs: 60_000 });

  const held = await s.call('holder', { query: 'mb=96' });
  t.equal(held.status, 200, 'keeps 96 MB and parses beside it');
  t.same(await held.json(), { held: 96, items: 210_000 });

  const over = await s.call('over', { query: 'mb=136' });
  t.equal(over.status, 500, 'is stopped keeping 136 MB: the young generation adds nothing to the limit');
  t.equal(((await over.json()) as { errorCode: string }).errorCode, 'ERR_RESOURCE_LIMIT');
});
