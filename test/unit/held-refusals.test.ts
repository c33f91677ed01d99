import t from 'tap';
import { HeldRefusals } from '../../engine/held-refusals';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

t.test('refusals are answered after the hold, in order, with one timer for all', async (t) => {
  // Load can only stretch the waits, so the checks are lower bounds and order, never upper bounds.
  const held = new HeldRefusals(60, 100);
  const answered: { name: string; waited: number }[] = [];
  const hold = (account: string, name: string) => {
    const at = performance.now();
    held.hold(account, () => answered.push({ name, waited: performance.now() - at }));
  };
  hold('a', 'a1');
  await sleep(20);
  hold('b', 'b1');
  hold('a', 'a2');
  t.equal(held.size, 3);
  t.same(answered, [], 'nothing is answered before its hold is over');
  while (answered.length < 3) await sleep(10);
  t.same(
    answered.map((a) => a.name),
    ['a1', 'b1', 'a2'],
    'in the order they came',
  );
  for (const { name, waited } of answered) t.ok(waited >= 59, `${name} was held its 60 ms (${waited.toFixed(1)} ms)`);
  t.equal(held.size, 0);
});

t.test("past an account's most held, its refusals are answered at once; others still hold", async (t) => {
  const held = new HeldRefusals(1000, 2);
  const answered: string[] = [];
  for (let i = 0; i < 4; i++) held.hold('a', () => answered.push(`a${i}`));
  held.hold('b', () => answered.push('b0'));
  t.same(answered, ['a2', 'a3'], 'the third and fourth of a');
  t.equal(held.size, 3);
  held.release(true);
  t.same(answered, ['a2', 'a3', 'a0', 'a1', 'b0'], 'closing answers every held one');
  held.hold('a', () => answered.push('again'));
  t.equal(held.size, 1, 'a counts from zero again');
  held.release(true);
});

t.test('a hold of 0 answers at once', async (t) => {
  const held = new HeldRefusals(0, 10);
  let answered = false;
  held.hold('a', () => (answered = true));
  t.ok(answered);
  t.equal(held.size, 0);
});
