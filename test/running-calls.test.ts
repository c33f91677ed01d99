import t from 'tap';
import { RunningCalls } from '../engine/isolate/running-calls';

// The table of calls in flight on one instance: each call is answered once, and an answer that
// comes after its call was settled (a timeout) must never reach the call that reused its slot.

t.test('a call is found by its id until it is taken, once', async (t) => {
  const calls = new RunningCalls<string>();
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
  const calls = new RunningCalls<string>();
  const old = calls.add('timed out');
  calls.take(old);
  const next = calls.add('new call');
  t.not(next, old, 'the reused slot gets a new id');
  t.equal(calls.take(old), undefined, 'the stale id finds nothing');
  t.equal(calls.get(next), 'new call', 'and the new call is still running');
});

t.test('ids lists exactly the calls still running; ids stay exact integers', async (t) => {
  const calls = new RunningCalls<number>();
  const ids: number[] = [];
  const unsafe: number[] = [];
  for (let round = 0; round < 1000; round++) {
    const id = calls.add(round);
    if (!Number.isSafeInteger(id) || id < 0) unsafe.push(id);
    if (round % 3 === 0) ids.push(id);
    else calls.take(id);
  }
  t.same(unsafe, [], 'every id is a non-negative safe integer');
  t.same(calls.ids().sort((x, y) => x - y), ids.sort((x, y) => x - y));
  t.equal(calls.size, ids.length);
  for (const bogus of [NaN, -1, 1.5, 2 ** 60]) t.equal(calls.get(bogus), undefined, `id ${bogus} finds nothing`);
});
