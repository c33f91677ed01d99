import { timingSafeEqual } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { FunctionManifest } from '../manifest';
import { keyDigest } from './keys';
import type { AccountRecord, ApiKeyRecord, CatalogSnapshot, FunctionRecord, Store, StoreChange } from './store';

interface AccountEntry {
  record: AccountRecord;
  /** The keys that are not revoked, with their digests as bytes. */
  keys: { record: ApiKeyRecord; digest: Buffer }[];
}

interface FunctionEntry {
  record: FunctionRecord;
  /** The manifest calls run (the first share of the traffic). */
  serving: FunctionManifest;
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

  constructor(
    private readonly store: Store,
    /** Told of the manifests that stopped serving (replaced or removed), so their instances retire. */
    private readonly onRetired: (manifest: FunctionManifest) => void,
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

  /** The key record when `apiKey` is one of the account's keys (not revoked); compared in constant time. */
  verifyKey(accountId: string, apiKey: string): ApiKeyRecord | undefined {
    const entry = this.accounts.get(accountId);
    if (!entry) return undefined;
    const known = this.knownDigests.get(apiKey);
    const presented = known ?? keyDigest(apiKey);
    let match: ApiKeyRecord | undefined;
    for (const key of entry.keys) if (timingSafeEqual(key.digest, presented)) match = key.record;
    if (match && !known) this.knownDigests.set(apiKey, presented);
    return match;
  }

  /** The account a key belongs to, if any (the management API's whoami). */
  accountOfKey(apiKey: string): string | undefined {
    for (const id of this.accounts.keys()) if (this.verifyKey(id, apiKey)) return id;
    return undefined;
  }

  /** The version a call of this function runs now. */
  serving(account: string, name: string): FunctionManifest | undefined {
    return this.functions.get(account)?.get(name)?.serving;
  }

  list(account: string): FunctionManifest[] {
    return [...(this.functions.get(account)?.values() ?? [])].map((e) => e.serving).sort((a, b) => a.name.localeCompare(b.name));
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
    if (!record) {
      this.accounts.delete(id);
      return;
    }
    const keys = record.keys.filter((k) => !k.revokedAt).map((k) => ({ record: k, digest: Buffer.from(k.sha256, 'hex') }));
    this.accounts.set(id, { record, keys });
  }

  private setFunction(account: string, name: string, record: FunctionRecord | undefined): void {
    let byName = this.functions.get(account);
    const prior = byName?.get(name);
    const serving = record?.serving[0];
    if (record && serving) {
      if (!byName) this.functions.set(account, (byName = new Map()));
      // A record equal to the one held (a change announced twice) keeps the manifest object: the
      // call path's keys are memoized per manifest object.
      if (prior && prior.serving.version === serving.version) {
        prior.record = record;
        return;
      }
      byName.set(name, { record, serving });
      if (!prior) this.functionCount++;
    } else if (prior) {
      byName!.delete(name);
      if (byName!.size === 0) this.functions.delete(account);
      this.functionCount--;
    }
    if (prior) this.onRetired(prior.serving);
  }
}
