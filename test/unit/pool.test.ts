import t from 'tap';
import type { FunctionManifest } from '../../engine/manifest';
import { WarmPool } from '../../engine/pool';
import type { Instance, InstanceState } from '../../engine/runtime';
import { until } from '../helpers/wait';

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

const manifest = (name: string, version = 1) => ({ account: 'a', name, version }) as FunctionManifest;

async function fill(pool: WarmPool, names: string[], made: FakeInstance[]): Promise<void> {
  for (const name of names) {
    await pool.acquire(
      manifest(name),
      async () => {
        const instance = new FakeInstance((i) => pool.forget(i));
        made.push(instance);
        return instance;
      },
      () => true,
    );
  }
}

t.test('eviction, replacement and removal dispose idle instances, even when they report their death re-entrantly', async (t) => {
  const pool = new WarmPool(2, 1000);
  const made: FakeInstance[] = [];
  await fill(pool, ['a', 'b', 'c', 'd'], made);
  t.equal(pool.stats().warm, 2);
  t.same(
    made.map((i) => i.disposed),
    [true, true, false, false],
    'the two least recently used were disposed',
  );
  pool.retire(manifest('c'));
  t.equal(made[2]!.disposed, true, 'a retired idle instance is disposed');
  t.equal(pool.stats().warm, 1);
  pool.forget(made[3]!);
  t.equal(pool.stats().warm, 0, 'forget removes it');
  await fill(pool, ['e', 'f'], made);
  pool.clear();
  t.same(
    made.slice(4).map((i) => i.disposed),
    [true, true],
    'clear disposes everything',
  );
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

t.test("the cache is also bounded by the instances' size", async (t) => {
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
  t.same(
    made.map((i) => i.disposed),
    [true, false, false],
    'the least recently used made room',
  );
  pool.resize(made[0]!);
  t.equal(pool.stats().warm, 2, 'resizing an instance no longer cached changes nothing');
});

/** An instance whose CPU time the test drives: `busy` makes it run code all the time. */
class BusyInstance extends FakeInstance {
  busy = false;
  /** How many times the pool's sampler has looked at it. */
  looks = 0;
  private cpu = 0;
  private at = performance.now();
  cpuTimeMs(): number {
    this.looks++;
    const now = performance.now();
    if (this.busy) this.cpu += now - this.at;
    this.at = now;
    return this.cpu;
  }
}

t.test('scale-out: a version whose instances all run code with calls waiting gets one more, up to the bound; idle extras go', async (t) => {
  const pool = new WarmPool(100, 1000, { maxPerVersion: 2, idleMs: 150, sampleMs: 20 });
  const made: BusyInstance[] = [];
  const create = async () => {
    const instance = new BusyInstance((i) => pool.forget(i));
    made.push(instance);
    return instance;
  };
  const m = manifest('cpu');
  const first = (await pool.acquire(m, create, () => true)) as BusyInstance;
  pool.acquire(m, create, () => true);
  first.inflight = 4;
  first.busy = true;
  // Saturation takes two of the sampler's looks at a busy instance (20 ms apart, or later under
  // load): calls keep coming meanwhile, and go to the warm instance until one more is ready.
  const answeredBy = new Set<unknown>();
  await until(() => {
    answeredBy.add(pool.acquire(m, create, () => true));
    return made.length === 2;
  }, 'a second instance was started');
  t.same([...answeredBy], [first], 'the calls still went to the warm instance');
  await until(() => pool.stats().warm === 2, 'the second instance is warm');
  t.equal(
    pool.acquire(m, create, () => true),
    made[1],
    'calls go to the least loaded instance',
  );
  made[1]!.inflight = 4;
  made[1]!.busy = true;
  // Both saturated for three looks of the sampler, with a call coming at each: no third.
  const looked = made.map((instance) => instance.looks);
  await until(() => {
    pool.acquire(m, create, () => true);
    return made.every((instance, i) => instance.looks >= looked[i]! + 3);
  }, 'three looks at both instances');
  t.equal(made.length, 2, 'no third: the bound is 2');
  for (const instance of made) {
    instance.inflight = 0;
    instance.busy = false;
  }
  await until(() => pool.stats().warm === 1, 'the idle extra instance was retired (idle for 150 ms)');
  t.equal(pool.stats().warm, 1, 'the idle extra instance was retired');
  t.equal(made[1]!.disposed, true);
  t.equal(made[0]!.disposed, false, 'the first one stays warm');
  t.same([pool.stats().scaleOuts, pool.stats().trims], [1, 1]);
  pool.clear();
});

t.test('scale-out: many calls in flight on an instance that is not running code (awaiting I/O) add nothing', async (t) => {
  const pool = new WarmPool(100, 1000, { maxPerVersion: 4, idleMs: 150, sampleMs: 20 });
  let made = 0;
  const create = async () => {
    made++;
    return new BusyInstance((i) => pool.forget(i));
  };
  const m = manifest('io');
  const first = (await pool.acquire(m, create, () => true)) as BusyInstance;
  first.inflight = 64;
  // Five looks of the sampler, with a call coming at each (sleeps of 20 ms saw none under load).
  await until(() => {
    pool.acquire(m, create, () => true);
    return first.looks >= 5;
  }, 'five looks of the sampler');
  t.equal(made, 1);
  pool.clear();
});

t.test('scale-out stays within the memory bound', async (t) => {
  const pool = new WarmPool(100, 2, { maxPerVersion: 4, idleMs: 150, sampleMs: 20 });
  let made = 0;
  const create = async () => {
    made++;
    const instance = new BusyInstance((i) => pool.forget(i));
    instance.sizeMb = 2;
    return instance;
  };
  const m = manifest('big');
  const first = (await pool.acquire(m, create, () => true)) as BusyInstance;
  first.inflight = 4;
  first.busy = true;
  await until(() => {
    pool.acquire(m, create, () => true);
    return first.looks >= 5;
  }, 'five looks of the sampler');
  t.equal(made, 1, 'no room for a second 2 MB instance in 2 MB');
  pool.clear();
});
