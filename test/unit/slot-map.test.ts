import t from 'tap';
import { SlotMap, SlotMirror } from '../../engine/slot-map';

// The tables of calls in flight and timers: each entry is taken once, and an answer that comes
// after its entry was settled (a timeout) must never reach the entry that reused its slot.

t.test('a call is found by its id until it is taken, once', async (t) => {
  const calls = new SlotMap<string>();
  const a = calls.add('a');
  const b = calls.add('b');
  t.not(a, b);
  t.equal(calls.size, 2);
  t.equal(calls.get(a), 'a');
  t.equal(calls.take(a), 'a');
  t.equal(calls.take(a), undefined, 'a second answer for the same id is ignored');
  t.equal(calls.get(a), undefined);
  t.equal(calls.get(b), 'b');
  t.equal(calls.size, 1);
});

t.test('a late answer for a settled call does not reach the call that took its slot', async (t) => {
  const calls = new SlotMap<string>();
  const old = calls.add('timed out');
  calls.take(old);
  const next = calls.add('new call');
  t.not(next, old, 'the reused slot gets a new id');
  t.equal(calls.take(old), undefined, 'the stale id finds nothing');
  t.equal(calls.get(next), 'new call', 'and the new call is still running');
});

t.test('ids lists exactly the calls still running; ids stay exact integers', async (t) => {
  const calls = new SlotMap<number>();
  const ids: number[] = [];
  const unsafe: number[] = [];
  for (let round = 0; round < 1000; round++) {
    const id = calls.add(round);
    if (!Number.isSafeInteger(id) || id < 0) unsafe.push(id);
    if (round % 3 === 0) ids.push(id);
    else calls.take(id);
  }
  t.same(unsafe, [], 'every id is a non-negative safe integer');
  t.same(
    calls.ids().sort((x, y) => x - y),
    ids.sort((x, y) => x - y),
  );
  t.equal(calls.size, ids.length);
  for (const bogus of [NaN, -1, 1.5, 2 ** 60]) t.equal(calls.get(bogus), undefined, `id ${bogus} finds nothing`);
});

t.test('a mirror finds host entries by the exact ids a sandbox map made', async (t) => {
  const sandbox = new SlotMap<string>();
  const host = new SlotMirror<string>(16);
  const a = sandbox.add('a');
  t.ok(host.set(a, 'host a'));
  sandbox.take(a);
  t.equal(host.take(a), 'host a');
  const b = sandbox.add('b');
  t.ok(host.set(b, 'host b'), 'the reused slot is stored again under the new id');
  t.equal(host.take(a), undefined, 'the old id finds nothing in the reused slot');
  t.equal(host.take(b), 'host b');
});

t.test('a mirror refuses ids outside its slots and gives everything back once', async (t) => {
  const host = new SlotMirror<number>(4);
  for (const bogus of [NaN, -1, 1.5, 4, 2 ** 60]) t.equal(host.set(bogus, 1), false, `id ${bogus} is refused`);
  const sandbox = new SlotMap<number>();
  const ids = [sandbox.add(0), sandbox.add(1), sandbox.add(2)];
  ids.forEach((id, i) => host.set(id, i));
  t.same(host.takeAll().sort(), [0, 1, 2]);
  t.same(host.takeAll(), [], 'nothing is left');
  t.equal(host.take(ids[0]!), undefined);
});
