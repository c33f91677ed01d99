import { LRUCache } from 'lru-cache';
import { keyPerManifest, type FunctionManifest } from './manifest';
import type { Instance } from './runtime';

export interface PoolStats {
  warm: number;
  warmMb: number;
  hits: number;
  misses: number;
  coldStarts: number;
}

/** `account/name/version`: the warm cache's key. */
export const versionKey = keyPerManifest<Pick<FunctionManifest, 'account' | 'name' | 'version'>>((m) => `${m.account}/${m.name}/${m.version}`);

/**
 * Warm instances keyed by function version, bounded by count and by estimated memory. An evicted
 * or replaced instance is retired: it finishes its running calls, then its isolate is disposed.
 * Concurrent first calls of one version share a single cold start.
 */
export class WarmPool {
  private readonly cache: LRUCache<string, Instance>;
  private readonly keys = new WeakMap<Instance, string>();
  private readonly loading = new Map<string, Promise<Instance>>();
  /** The instance being re-entered by resize(): its removal must not retire it. */
  private resizing: Instance | undefined;
  private hits = 0;
  private misses = 0;
  private coldStarts = 0;

  constructor(maxInstances: number, maxMemoryMb: number) {
    this.cache = new LRUCache<string, Instance>({
      max: maxInstances,
      maxSize: maxMemoryMb,
      sizeCalculation: (instance) => Math.max(1, Math.ceil(instance.sizeMb)),
      // After removal, not during it: retiring an idle instance disposes it at once, and its death
      // comes back here through forget(), which must find the cache in a consistent state.
      disposeAfter: (instance) => {
        if (instance !== this.resizing) instance.retire();
      },
    });
  }

  /**
   * A ready instance of this version: the warm one itself (no promise on the hot path), or a cold
   * start with `create` when none is warm.
   */
  acquire(manifest: FunctionManifest, create: () => Promise<Instance>, isCurrent: () => boolean): Instance | Promise<Instance> {
    const key = versionKey(manifest);
    const warm = this.cache.get(key);
    if (warm && warm.state === 'ready') {
      this.hits++;
      return warm;
    }
    if (warm) this.cache.delete(key);
    this.misses++;
    let pending = this.loading.get(key);
    if (!pending) {
      this.coldStarts++;
      pending = create().then((instance) => {
        if (isCurrent() && instance.state === 'ready') {
          this.keys.set(instance, key);
          this.cache.set(key, instance);
        }
        return instance;
      });
      const cleanup = () => this.loading.delete(key);
      pending.then(cleanup, cleanup);
      this.loading.set(key, pending);
    }
    return pending;
  }

  /** Drops an instance that died (memory limit, timeout) so the next call starts a fresh one. */
  forget(instance: Instance): void {
    const key = this.keys.get(instance);
    if (key !== undefined && this.cache.peek(key) === instance) this.cache.delete(key);
  }

  /** Counts an instance's new `sizeMb` (lru-cache sizes an entry only when it is set). */
  resize(instance: Instance): void {
    const key = this.keys.get(instance);
    if (key === undefined || this.cache.peek(key) !== instance) return;
    this.resizing = instance;
    try {
      this.cache.delete(key);
    } finally {
      this.resizing = undefined;
    }
    this.cache.set(key, instance);
  }

  /** Retires the warm instance of a version (after a redeploy or removal). */
  retire(manifest: Pick<FunctionManifest, 'account' | 'name' | 'version'>): void {
    this.cache.delete(versionKey(manifest));
  }

  stats(): PoolStats {
    return { warm: this.cache.size, warmMb: this.cache.calculatedSize, hits: this.hits, misses: this.misses, coldStarts: this.coldStarts };
  }

  clear(): void {
    this.cache.clear();
  }
}
