import { LRUCache } from 'lru-cache';
import { keyPerManifest, type FunctionManifest } from './manifest';
import type { Instance } from './runtime';

export interface PoolStats {
  /** Warm instances (a busy version may have several). */
  warm: number;
  /** Versions with at least one warm instance. */
  versions: number;
  warmMb: number;
  hits: number;
  misses: number;
  coldStarts: number;
  /** Instances started beside a busy one, and extra instances trimmed after staying idle. */
  scaleOuts: number;
  trims: number;
}

/** How a busy version gets more instances (see Scaler). */
export interface ScaleOptions {
  /** Instances of one version at most (1 turns scale-out off). */
  maxPerVersion: number;
  /** An extra instance idle this long is retired. */
  idleMs: number;
  /** How often busy versions are looked at. */
  sampleMs?: number;
  /** Share of the interval an instance must have spent running code to count as busy. */
  busyFraction?: number;
}

const DEFAULT_SAMPLE_MS = 100;
const DEFAULT_BUSY_FRACTION = 0.5;

/** The warm instances of one version: usually one; more while its calls keep them all busy. */
interface Group {
  key: string;
  instances: Instance[];
  /** An extra instance is being started. */
  growing: boolean;
  /** Every instance was busy running code at the last look, with calls waiting. */
  saturated: boolean;
  /** In the scaler's list of groups to look at. */
  watched: boolean;
  create: () => Promise<Instance>;
  isCurrent: () => boolean;
}

/** What the scaler last read of an instance. */
interface Sample {
  at: number;
  cpuMs: number;
  idleSince: number;
}

/**
 * `account/name/version@deployedAt`: the warm cache's key (a function removed and deployed again
 * starts at version 1 again: the time tells the two apart).
 */
export const versionKey = keyPerManifest<Pick<FunctionManifest, 'account' | 'name' | 'version' | 'deployedAt'>>((m) => `${m.account}/${m.name}/${m.version}@${m.deployedAt}`);

/**
 * Warm instances keyed by function version, bounded by count and by estimated memory. An evicted
 * or replaced version's instances are retired: they finish their running calls, then their
 * isolates are disposed. Concurrent first calls of one version share a single cold start.
 *
 * A version whose instances are all busy running code (CPU time, read from the isolates, not the
 * number of calls in flight: a handler awaiting I/O leaves its instance free) gets another
 * instance, up to `maxPerVersion` and within the memory bound; calls go to the least loaded one,
 * and an extra instance that stays idle is retired.
 */
export class WarmPool {
  private readonly cache: LRUCache<string, Group>;
  private readonly groups = new WeakMap<Instance, Group>();
  private readonly loading = new Map<string, Promise<Instance>>();
  private readonly samples = new WeakMap<Instance, Sample>();
  /**
   * Every live instance of each version, in the cache or not: one evicted or trimmed while it
   * holds WebSockets lives on until they close, and a deploy must still close them.
   */
  private readonly living = new Map<string, Set<Instance>>();
  private readonly versionOf = new WeakMap<Instance, string>();
  /** Groups the scaler looks at: used since they were last idle, or with extra instances. */
  private watched: Group[] = [];
  private ticker: NodeJS.Timeout | undefined;
  /** The group being re-entered by a resize: its removal must not retire it. */
  private resizing: Group | undefined;
  private readonly scale: Required<ScaleOptions>;
  private hits = 0;
  private misses = 0;
  private coldStarts = 0;
  private scaleOuts = 0;
  private trims = 0;

  constructor(
    maxVersions: number,
    private readonly maxMemoryMb: number,
    scale: ScaleOptions = { maxPerVersion: 1, idleMs: 10_000 },
  ) {
    this.scale = { sampleMs: DEFAULT_SAMPLE_MS, busyFraction: DEFAULT_BUSY_FRACTION, ...scale };
    this.cache = new LRUCache<string, Group>({
      max: maxVersions,
      maxSize: maxMemoryMb,
      sizeCalculation: (group) => Math.max(1, groupSizeMb(group)),
      // After removal, not during it: retiring an idle instance disposes it at once, and its death
      // comes back here through forget(), which must find the cache in a consistent state.
      disposeAfter: (group) => {
        if (group === this.resizing) return;
        const instances = group.instances;
        group.instances = [];
        for (const instance of instances) instance.retire();
      },
    });
  }

  /**
   * A ready instance of this version: a warm one itself (no promise on the hot path), or a cold
   * start with `create` when none is warm.
   */
  acquire(manifest: FunctionManifest, create: () => Promise<Instance>, isCurrent: () => boolean): Instance | Promise<Instance> {
    const key = versionKey(manifest);
    const group = this.cache.get(key);
    if (group) {
      const instance = group.instances.length === 1 ? group.instances[0]! : this.leastLoaded(group);
      if (instance && instance.state === 'ready') {
        this.hits++;
        if (!group.watched && this.scale.maxPerVersion > 1) this.watch(group);
        if (group.saturated && !group.growing) this.grow(group);
        return instance;
      }
      this.dropUnready(group);
    }
    this.misses++;
    let pending = this.loading.get(key);
    if (!pending) {
      this.coldStarts++;
      pending = create().then((instance) => {
        if (isCurrent() && instance.state === 'ready') this.add(key, instance, create, isCurrent);
        return instance;
      });
      const cleanup = () => this.loading.delete(key);
      pending.then(cleanup, cleanup);
      this.loading.set(key, pending);
    }
    return pending;
  }

  /**
   * Takes an instance its version's deploy loaded as the version's first warm one. It is disposed
   * instead when the version is not current any more, or has an instance or a cold start already.
   */
  adopt(manifest: FunctionManifest, instance: Instance, create: () => Promise<Instance>, isCurrent: () => boolean): void {
    const key = versionKey(manifest);
    if (instance.state !== 'ready' || !isCurrent() || this.cache.has(key) || this.loading.has(key)) {
      instance.dispose();
      return;
    }
    this.add(key, instance, create, isCurrent);
  }

  /** Drops an instance that died (memory limit, timeout) so the next call starts a fresh one. */
  forget(instance: Instance): void {
    this.bury(instance);
    const group = this.groups.get(instance);
    if (!group || !group.instances.includes(instance)) return;
    this.groups.delete(instance);
    group.instances = group.instances.filter((i) => i !== instance);
    if (this.cache.peek(group.key) !== group) return;
    if (group.instances.length === 0) this.cache.delete(group.key);
    else this.recount(group);
  }

  /** Counts an instance's new `sizeMb` (lru-cache sizes an entry only when it is set). */
  resize(instance: Instance): void {
    const group = this.groups.get(instance);
    if (group && this.cache.peek(group.key) === group && group.instances.includes(instance)) this.recount(group);
  }

  /**
   * Retires the warm instances of a version (after a redeploy, a traffic change or a removal); its
   * instances' WebSockets close with 1001, Going Away.
   */
  retire(manifest: Pick<FunctionManifest, 'account' | 'name' | 'version' | 'deployedAt'>): void {
    const key = versionKey(manifest);
    for (const instance of this.living.get(key) ?? []) instance.closeSockets?.(1001, 'this version of the function was replaced or removed');
    this.cache.delete(key);
  }

  /** Warm instances and their estimated memory (MB) per function, `account/name`. */
  warmByFunction(): Map<string, { instances: number; mb: number }> {
    const byFunction = new Map<string, { instances: number; mb: number }>();
    this.cache.forEach((group, key) => {
      const fn = key.slice(0, key.indexOf('/', key.indexOf('/') + 1));
      let entry = byFunction.get(fn);
      if (!entry) byFunction.set(fn, (entry = { instances: 0, mb: 0 }));
      for (const instance of group.instances) {
        entry.instances++;
        entry.mb += instance.sizeMb;
      }
    });
    return byFunction;
  }

  stats(): PoolStats {
    let warm = 0;
    for (const group of this.cache.values()) warm += group.instances.length;
    return {
      warm,
      versions: this.cache.size,
      warmMb: this.cache.calculatedSize,
      hits: this.hits,
      misses: this.misses,
      coldStarts: this.coldStarts,
      scaleOuts: this.scaleOuts,
      trims: this.trims,
    };
  }

  clear(): void {
    this.cache.clear();
    this.watched = [];
    if (this.ticker) clearInterval(this.ticker);
    this.ticker = undefined;
  }

  private add(key: string, instance: Instance, create: () => Promise<Instance>, isCurrent: () => boolean): void {
    const group: Group = { key, instances: [instance], growing: false, saturated: false, watched: false, create, isCurrent };
    this.groups.set(instance, group);
    this.live(key, instance);
    this.cache.set(key, group);
  }

  private live(key: string, instance: Instance): void {
    this.versionOf.set(instance, key);
    let set = this.living.get(key);
    if (!set) this.living.set(key, (set = new Set()));
    set.add(instance);
  }

  /** The instance died: it is no version's any more. */
  private bury(instance: Instance): void {
    const key = this.versionOf.get(instance);
    const set = key === undefined ? undefined : this.living.get(key);
    if (!set) return;
    set.delete(instance);
    if (set.size === 0) this.living.delete(key!);
  }

  private leastLoaded(group: Group): Instance | undefined {
    let best: Instance | undefined;
    for (const instance of group.instances) {
      if (instance.state === 'ready' && (!best || instance.inflight < best.inflight)) best = instance;
    }
    return best;
  }

  /** Takes instances that stopped taking calls (they retired after a timeout) out of their group. */
  private dropUnready(group: Group): void {
    const ready = group.instances.filter((i) => i.state === 'ready');
    if (ready.length === group.instances.length) return;
    group.instances = ready;
    if (ready.length === 0) this.cache.delete(group.key);
    else this.recount(group);
  }

  /** Sets a group again so the cache counts its current size (and evicts others to fit). */
  private recount(group: Group): void {
    this.resizing = group;
    try {
      this.cache.delete(group.key);
    } finally {
      this.resizing = undefined;
    }
    if (group.instances.length > 0) this.cache.set(group.key, group);
  }

  /** Starts one more instance of a saturated version, if the bounds allow it. */
  private grow(group: Group): void {
    const size = Math.max(1, ...group.instances.map((i) => i.sizeMb));
    if (group.instances.length >= this.scale.maxPerVersion || this.cache.calculatedSize + size > this.maxMemoryMb) return;
    group.growing = true;
    group.saturated = false;
    this.scaleOuts++;
    const done = () => {
      group.growing = false;
    };
    group.create().then((instance) => {
      done();
      if (this.cache.peek(group.key) === group && group.isCurrent() && instance.state === 'ready') {
        group.instances.push(instance);
        this.groups.set(instance, group);
        this.live(group.key, instance);
        this.recount(group);
      } else instance.retire();
    }, done);
  }

  private watch(group: Group): void {
    group.watched = true;
    this.watched.push(group);
    this.ticker ??= setInterval(() => this.look(), this.scale.sampleMs).unref();
  }

  /**
   * Looks at the groups in use: reads how much of the last interval each instance spent running
   * code, marks a group saturated when every instance was busy with calls waiting, and retires
   * extra instances idle for `idleMs`. Groups that went idle with one instance are let go.
   */
  private look(): void {
    const now = performance.now();
    const keep: Group[] = [];
    for (const group of this.watched) {
      if (this.cache.peek(group.key) !== group || group.instances.length === 0) {
        group.watched = false;
        continue;
      }
      let saturated = true;
      let busy = false;
      for (const instance of group.instances) {
        const fraction = this.sample(instance, now);
        if (instance.inflight > 0) busy = true;
        if (!(instance.inflight >= 2 && fraction >= this.scale.busyFraction)) saturated = false;
      }
      group.saturated = saturated;
      this.trim(group, now);
      if (busy || group.instances.length > 1 || group.growing) keep.push(group);
      else group.watched = false;
    }
    this.watched = keep;
    if (keep.length === 0 && this.ticker) {
      clearInterval(this.ticker);
      this.ticker = undefined;
    }
  }

  /** The share of the time since the last sample that the instance spent running code. */
  private sample(instance: Instance, now: number): number {
    const cpuMs = instance.cpuTimeMs?.() ?? 0;
    const last = this.samples.get(instance);
    const idleSince = instance.inflight > 0 ? Infinity : Math.min(last?.idleSince ?? Infinity, now);
    this.samples.set(instance, { at: now, cpuMs, idleSince });
    if (!last || now <= last.at) return 0;
    return (cpuMs - last.cpuMs) / (now - last.at);
  }

  /** Retires extra instances (all but the first) that have been idle for `idleMs`. */
  private trim(group: Group, now: number): void {
    if (group.instances.length < 2) return;
    const kept = group.instances.filter((instance, i) => i === 0 || now - (this.samples.get(instance)?.idleSince ?? Infinity) < this.scale.idleMs);
    if (kept.length === group.instances.length) return;
    const trimmed = group.instances.filter((i) => !kept.includes(i));
    group.instances = kept;
    this.trims += trimmed.length;
    this.recount(group);
    for (const instance of trimmed) instance.retire();
  }
}

function groupSizeMb(group: Group): number {
  let size = 0;
  for (const instance of group.instances) size += Math.ceil(instance.sizeMb);
  return size;
}
