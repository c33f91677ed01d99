import t from 'tap';
import type { FunctionManifest } from '../engine/manifest';
import { WarmPool } from '../engine/pool';
import type { Instance, InstanceState } from '../engine/runtime';

// The warm pool on its own, with instances that behave like real ones when retired.
class FakeInstance implements Instance {
  state: InstanceState = 'ready';
  inflight = 0;
  sizeMb = 1;
  disposed = false;
  constructor(private readonly onDeath: (i: FakeInstance) => void) {}
  call(): void {
    throw new Error('not used');
  }
  retire(): void {
    if (this.state !== 'ready') return;
    this.state = 'retired';
    if (this.inflight === 0) this.dispose();
  }
  dispose(): void {
    if (this.state === 'dead') return;
    this.state = 'dead';
    this.disposed = true;
    // A real instance tells the engine, which calls pool.forget(), from inside this call.
    this.onDeath(this);
  }
}

const manifest = (name: string, version = 'v1') => ({ account: 'a', name, version }) as FunctionManifest;

async function fill(pool: WarmPool, names: string[], made: FakeInstance[]): Promise<void> {
  for (const name of names) {
    await pool.acquire(manifest(name), async () => {
      const instance = new FakeInstance((i) => pool.forget(i));
      made.push(instance);
      return instance;
    }, () => true);
  }
}

t.test('eviction, replacement and removal dispose idle instances, even when they report their death re-entrantly', async (t) => {
  const pool = new WarmPool(2, 1000);
  const made: FakeInstance[] = [];
  await fill(pool, ['a', 'b', 'c', 'd'], made);
  t.equal(pool.stats().warm, 2);
  t.same(made.map((i) => i.disposed), [true, true, false, false], 'the two least recently used were disposed');
  pool.retire(manifest('c'));
  t.equal(made[2]!.disposed, true, 'a retired idle instance is disposed');
  t.equal(pool.stats().warm, 1);
  pool.forget(made[3]!);
  t.equal(pool.stats().warm, 0, 'forget removes it');
  await fill(pool, ['e', 'f'], made);
  pool.clear();
  t.same(made.slice(4).map((i) => i.disposed), [true, true], 'clear disposes everything');
});

t.test('a busy instance is retired, not cut off, and disposed when its calls end', async (t) => {
  const pool = new WarmPool(1, 1000);
  const made: FakeInstance[] = [];
  await fill(pool, ['busy'], made);
  made[0]!.inflight = 1;
  await fill(pool, ['other'], made);
  t.equal(made[0]!.state, 'retired');
  t.equal(made[0]!.disposed, false, 'still running its call');
  made[0]!.inflight = 0;
  made[0]!.dispose();
  t.equal(made[0]!.disposed, true);
});

t.test('the cache is also bounded by the instances\' size', async (t) => {
  const pool = new WarmPool(100, 3);
  const made: FakeInstance[] = [];
  await fill(pool, ['a', 'b', 'c', 'd', 'e'], made);
  t.ok(pool.stats().warmMb <= 3, `${pool.stats().warmMb} MB`);
  t.equal(made.filter((i) => !i.disposed).length, pool.stats().warm);
});

t.test('a size known only after loading is counted without retiring the instance, and evicts others to fit', async (t) => {
  const pool = new WarmPool(100, 4);
  const made: FakeInstance[] = [];
  await fill(pool, ['a', 'b', 'c'], made);
  t.equal(pool.stats().warmMb, 3);
  made[2]!.sizeMb = 3;
  pool.resize(made[2]!);
  t.equal(made[2]!.state, 'ready', 'the resized instance keeps serving');
  t.equal(pool.stats().warmMb, 4, 'its new size is counted');
  t.same(made.map((i) => i.disposed), [true, false, false], 'the least recently used made room');
  pool.resize(made[0]!);
  t.equal(pool.stats().warm, 2, 'resizing an instance no longer cached changes nothing');
});
