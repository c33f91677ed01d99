import t from 'tap';
import { HostWorkPool } from '../../engine/host-work/pool';
import type { HostTask } from '../../engine/host-work/task';

// The host-work pool on its own: a task past its deadline is stopped and its thread replaced, an
// account holds at most its share of the threads, and accounts take turns.

/** A PBKDF2 derivation of `iterations` rounds as a node8 native call (the pool's real work). */
function pbkdf2(iterations: number): HostTask {
  const password = new TextEncoder().encode('password');
  const salt = new TextEncoder().encode('salt');
  const body = new Uint8Array([...password, ...salt]).buffer;
  return { kind: 'native', call: 'derive', payload: JSON.stringify({ kind: 'pbkdf2', iterations, length: 32, digest: 'sha256', n: [password.length, salt.length] }), body };
}

t.test('a task past its deadline fails with ERR_HOST_WORK_TIMEOUT, and its thread is replaced', async (t) => {
  const pool = new HostWorkPool({ threads: 1 });
  t.teardown(() => pool.close());
  await t.rejects(pool.run('a', pbkdf2(4_000_000), 500), { code: 'ERR_HOST_WORK_TIMEOUT', message: /did not finish within the function's timeout of 500 ms/ });
  t.equal(pool.stats().timedOut, 1);
  const answer = await pool.run('a', pbkdf2(1), 10_000);
  t.equal(answer.body?.byteLength, 32, 'the next task runs on a new thread');
});

t.test('an account holds at most its share of the threads; another account is served meanwhile', async (t) => {
  const pool = new HostWorkPool({ threads: 2 });
  t.teardown(() => pool.close());
  const order: string[] = [];
  const a = [1, 2, 3].map((i) => pool.run('a', pbkdf2(300_000), 30_000).then(() => order.push(`a${i}`)));
  // A holds one thread of two (its share); its other tasks wait.
  t.match(pool.stats(), { busy: 1, queued: 2 });
  const b = pool.run('b', pbkdf2(1), 30_000).then(() => order.push('b'));
  t.match(pool.stats(), { busy: 2, queued: 2 }, "b's task started at once, on the thread a may not take");
  await Promise.all([...a, b]);
  t.same(
    order.filter((name) => name !== 'b'),
    ['a1', 'a2', 'a3'],
    "a's tasks ran one after another",
  );
});

t.test('accounts with work waiting take turns', async (t) => {
  const pool = new HostWorkPool({ threads: 1 });
  t.teardown(() => pool.close());
  const order: string[] = [];
  const runs = [];
  for (let i = 0; i < 3; i++) runs.push(pool.run('a', pbkdf2(50_000), 30_000).then(() => order.push('a')));
  for (let i = 0; i < 3; i++) runs.push(pool.run('b', pbkdf2(50_000), 30_000).then(() => order.push('b')));
  await Promise.all(runs);
  // a's first task runs at once; then a's second (queued before b had any), then turns.
  t.same(order, ['a', 'a', 'b', 'a', 'b', 'b']);
});

t.test('an account with too many tasks waiting is refused at once', async (t) => {
  const pool = new HostWorkPool({ threads: 1, maxQueuedPerAccount: 2 });
  t.teardown(() => pool.close());
  const runs = [1, 2, 3].map(() => pool.run('a', pbkdf2(100_000), 30_000));
  await t.rejects(pool.run('a', pbkdf2(1), 30_000), { code: 'ERR_HOST_WORK_OVERLOADED' });
  await Promise.all(runs);
});

t.test('close fails waiting and running tasks', async (t) => {
  const pool = new HostWorkPool({ threads: 1 });
  const running = t.rejects(pool.run('a', pbkdf2(4_000_000), 30_000), { code: 'ERR_HOST_WORK_CLOSED' });
  const waiting = t.rejects(pool.run('a', pbkdf2(1), 30_000), { code: 'ERR_HOST_WORK_CLOSED' });
  await pool.close();
  await Promise.all([running, waiting]);
  await t.rejects(pool.run('a', pbkdf2(1), 30_000), { code: 'ERR_HOST_WORK_CLOSED' }, 'a closed pool takes no work');
});
