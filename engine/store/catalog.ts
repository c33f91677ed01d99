import { timingSafeEqual } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { FunctionManifest } from '../manifest';
import { keyDigest } from './keys';
import type { AccountRecord, ApiKeyRecord, CatalogSnapshot, FunctionRecord, Store, StoreChange, TrafficShare } from './store';
import { BUCKETS, stickyBucket } from './traffic';

interface KeyEntry {
  record: ApiKeyRecord;
  digest: Buffer;
  /** Matched since the last `takeUsedKeys`. */
  used: boolean;
}

interface AccountEntry {
  record: AccountRecord;
  /** The keys that are not revoked, with their digests as bytes. */
  keys: KeyEntry[];
}

/** A function as calls see it: the versions serving and how calls are shared between them. */
export interface FunctionEntry {
  record: FunctionRecord;
  /** The version serving the largest share (the newer on a tie): what a description shows. */
  primary: FunctionManifest;
  /** The first share's version, and the second's when two versions share the calls. */
  first: FunctionManifest;
  second: FunctionManifest | undefined;
  /** Buckets (of BUCKETS) whose calls go to `first`. */
  threshold: number;
}

/**
 * What the call path reads, in memory and synchronously: accounts with their keys, and the
 * versions that serve. Filled by a full load of the store, then kept current by its change feed:
 * each change names a record, which is read again from the store. Reads of one record are made
 * one after another, so an older read never overwrites a newer one.
 */
export class Catalog {
  private readonly accounts = new Map<string, AccountEntry>();
  private readonly functions = new Map<string, Map<string, FunctionEntry>>();
  private functionCount = 0;
  /** Refreshes in progress, by record: the next one starts when the last one ends. */
  private readonly refreshing = new Map<string, Promise<void>>();
  /**
   * Digests of keys that matched an account, by key: a warm call skips hashing its key again (~1 µs
   * of the main thread). A digest depends on the key alone, so an entry is never stale; a revoked
   * or removed key fails the comparison below like any other. Keys that matched nothing are not kept.
   */
  private readonly knownDigests = new LRUCache<string, Buffer>({ max: 1024 });
  /** Told after a function's serving versions changed (deployed, rolled back, split, removed). */
  private readonly functionListeners: ((account: string, name: string) => void)[] = [];

  constructor(
    private readonly store: Store,
    /** Told of the manifests that stopped serving (replaced or removed), so their instances retire. */
    private readonly onRetired: (manifest: FunctionManifest) => void,
    /** Told when an account's record changed (its limits may have). */
    private readonly onAccountChanged: (accountId: string) => void = () => undefined,
  ) {}

  /** Loads everything, then follows the change feed (changes that arrive during the load are applied after it). */
  async open(): Promise<void> {
    let loaded = false;
    const early: StoreChange[] = [];
    this.store.watch((change) => {
      if (!loaded) {
        early.push(change);
        return Promise.resolve();
      }
      return this.apply(change);
    });
    this.fill(await this.store.load());
    loaded = true;
    await Promise.all(early.map((change) => this.apply(change)));
  }

  get accountCount(): number {
    return this.accounts.size;
  }

  get size(): number {
    return this.functionCount;
  }

  hasAccount(accountId: string): boolean {
    return this.accounts.has(accountId);
  }

  /** An account's record (its limits, its keys as stored). */
  account(accountId: string): AccountRecord | undefined {
    return this.accounts.get(accountId)?.record;
  }

  /**
   * The key record when `apiKey` is one of the account's keys (not revoked); compared in constant
   * time. A match is remembered as a use of the key (see `takeUsedKeys`).
   */
  verifyKey(accountId: string, apiKey: string): ApiKeyRecord | undefined {
    const entry = this.accounts.get(accountId);
    if (!entry) return undefined;
    const known = this.knownDigests.get(apiKey);
    const presented = known ?? keyDigest(apiKey);
    let match: KeyEntry | undefined;
    for (const key of entry.keys) if (timingSafeEqual(key.digest, presented)) match = key;
    if (!match) return undefined;
    if (!known) this.knownDigests.set(apiKey, presented);
    match.used = true;
    return match.record;
  }

  /** The account a key belongs to, if any (the management API's whoami). */
  accountOfKey(apiKey: string): string | undefined {
    for (const id of this.accounts.keys()) if (this.verifyKey(id, apiKey)) return id;
    return undefined;
  }

  /** The ids of the keys matched since the last time this was asked, by account (and forgets them). */
  takeUsedKeys(): Map<string, string[]> {
    const used = new Map<string, string[]>();
    for (const [id, entry] of this.accounts) {
      for (const key of entry.keys) {
        if (!key.used) continue;
        key.used = false;
        let ids = used.get(id);
        if (!ids) used.set(id, (ids = []));
        ids.push(key.record.id);
      }
    }
    return used;
  }

  /** The ids of an account's keys matched since the last `takeUsedKeys`. */
  usedKeys(accountId: string): Set<string> {
    return new Set(
      this.accounts
        .get(accountId)
        ?.keys.filter((k) => k.used)
        .map((k) => k.record.id),
    );
  }

  /** A function as calls see it (the call path's lookup). */
  function(account: string, name: string): FunctionEntry | undefined {
    return this.functions.get(account)?.get(name);
  }

  /**
   * The version one call runs: with one version serving, that one; with two, the call's bucket
   * decides, at random or, given a sticky key (X-Service-Version-Key), by its hash.
   */
  pick(entry: FunctionEntry, stickyKey: string | undefined): FunctionManifest {
    if (entry.second === undefined) return entry.first;
    const bucket = stickyKey === undefined ? Math.floor(Math.random() * BUCKETS) : stickyBucket(stickyKey);
    return bucket < entry.threshold ? entry.first : entry.second;
  }

  /** The version serving most of the calls of this function now. */
  serving(account: string, name: string): FunctionManifest | undefined {
    return this.functions.get(account)?.get(name)?.primary;
  }

  /** Whether calls may still be sent to this version (this very manifest, not only its number). */
  isServing(manifest: FunctionManifest): boolean {
    const entry = this.functions.get(manifest.account)?.get(manifest.name);
    return entry !== undefined && (entry.first === manifest || entry.second === manifest);
  }

  /** Hears of every change of a function's serving versions, once the catalog holds it. */
  watchFunctions(listener: (account: string, name: string) => void): void {
    this.functionListeners.push(listener);
  }

  *allFunctions(): IterableIterator<FunctionEntry> {
    for (const byName of this.functions.values()) yield* byName.values();
  }

  list(account: string): FunctionEntry[] {
    return [...(this.functions.get(account)?.values() ?? [])].sort((a, b) => a.primary.name.localeCompare(b.primary.name));
  }

  /** Applies one change of the feed: reads the record it names again (`all`: everything). */
  apply(change: StoreChange): Promise<void> {
    if (change.kind === 'all') return this.serially('*', async () => this.fill(await this.store.load()));
    if (change.kind === 'account') {
      return this.serially(`a:${change.accountId}`, async () => this.setAccount(change.accountId, await this.store.readAccount(change.accountId)));
    }
    const { account, name } = change;
    return this.serially(`f:${account}/${name}`, async () => this.setFunction(account, name, await this.store.readFunction(account, name)));
  }

  private serially(key: string, work: () => Promise<void>): Promise<void> {
    const prior = this.refreshing.get(key) ?? Promise.resolve();
    const run = prior.then(work, work);
    this.refreshing.set(key, run);
    const settle = () => {
      if (this.refreshing.get(key) === run) this.refreshing.delete(key);
    };
    run.then(settle, settle);
    return run;
  }

  /** Replaces everything with a full load (start-up, or a resync after missed changes). */
  private fill(snapshot: CatalogSnapshot): void {
    const accountIds = new Set(snapshot.accounts.map((a) => a.id));
    for (const id of [...this.accounts.keys()]) if (!accountIds.has(id)) this.setAccount(id, undefined);
    for (const account of snapshot.accounts) this.setAccount(account.id, account);
    const present = new Set(snapshot.functions.map((f) => `${f.account}/${f.name}`));
    for (const [account, byName] of this.functions) {
      for (const name of [...byName.keys()]) if (!present.has(`${account}/${name}`)) this.setFunction(account, name, undefined);
    }
    for (const record of snapshot.functions) this.setFunction(record.account, record.name, record);
  }

  private setAccount(id: string, record: AccountRecord | undefined): void {
    this.setAccountEntry(id, record);
    this.onAccountChanged(id);
  }

  private setAccountEntry(id: string, record: AccountRecord | undefined): void {
    if (!record) {
      this.accounts.delete(id);
      return;
    }
    // A key's "used" mark survives the account's other changes.
    const prior = this.accounts.get(id)?.keys;
    const keys = record.keys.filter((k) => !k.revokedAt).map((k) => ({ record: k, digest: Buffer.from(k.sha256, 'hex'), used: prior?.find((p) => p.record.id === k.id)?.used ?? false }));
    this.accounts.set(id, { record, keys });
  }

  private setFunction(account: string, name: string, record: FunctionRecord | undefined): void {
    let byName = this.functions.get(account);
    const prior = byName?.get(name);
    const priorVersions = prior ? (prior.second ? [prior.first, prior.second] : [prior.first]) : [];
    // A version held already keeps its manifest object (the call path memoizes its keys per
    // manifest object, and its warm instance stays); one no longer serving is retired.
    const same = (a: FunctionManifest, b: FunctionManifest) => a.version === b.version && a.deployedAt === b.deployedAt;
    const serving = record?.serving.map((m) => priorVersions.find((p) => same(p, m)) ?? m) ?? [];
    if (record && serving.length > 0 && serving.length === record.traffic.length) {
      if (!byName) this.functions.set(account, (byName = new Map()));
      byName.set(name, entryOf(record, serving));
      if (!prior) this.functionCount++;
    } else if (prior) {
      byName!.delete(name);
      if (byName!.size === 0) this.functions.delete(account);
      this.functionCount--;
    }
    for (const old of priorVersions) if (!serving.includes(old)) this.onRetired(old);
    for (const listener of this.functionListeners) listener(account, name);
  }
}

function entryOf(record: FunctionRecord, serving: FunctionManifest[]): FunctionEntry {
  const shares: TrafficShare[] = record.traffic;
  let primary = 0;
  for (let i = 1; i < shares.length; i++) if (shares[i]!.percent >= shares[primary]!.percent) primary = i;
  return {
    record,
    primary: serving[primary]!,
    first: serving[0]!,
    second: serving[1],
    threshold: shares.length > 1 ? Math.round(shares[0]!.percent * 100) : BUCKETS,
  };
}
