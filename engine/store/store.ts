import type { BundleLimits, BundleSource } from '../bundle';
import type { FunctionManifest, FunctionSpec } from '../manifest';

/**
 * Where islet's state lives: accounts and their keys, functions, their versions and which of them
 * serve, and the deployed code. The engine reads none of it on the call path: it keeps a Catalog in
 * memory, fed by `load` (a full load) and then by the change feed (`watch`). Implementations:
 * `file/` (a data directory on the local disk, the embedded default).
 */
export interface Store {
  /** Names the store in messages and `/healthz` (a data directory, a database). */
  readonly description: string;
  /** Everything the catalog holds: every account with its keys, every function with its serving versions. */
  load(): Promise<CatalogSnapshot>;
  /**
   * The change feed: `listener` hears of every change from the moment this is called, this store's
   * own writes included. A write resolves only after `listener` has finished with it, so a caller
   * that awaited a write finds it in the catalog. A change names what changed; the listener reads
   * it again (readAccount / readFunction), so changes that arrive out of order cannot leave it stale.
   */
  watch(listener: (change: StoreChange) => Promise<void>): void;
  readAccount(accountId: string): Promise<AccountRecord | undefined>;
  readFunction(account: string, name: string): Promise<FunctionRecord | undefined>;

  createAccount(): Promise<NewAccount>;
  /** Creates an account only if the store has none (once, however many nodes start at the same time). */
  ensureFirstAccount(): Promise<NewAccount | undefined>;
  /** Adds a key to an account; the key itself is in the answer only (the store keeps its digest). */
  createKey(accountId: string, options?: { name?: string; scope?: KeyScope }): Promise<NewKey>;
  /** Revokes a key by id: refused on the next call, everywhere. */
  revokeKey(accountId: string, keyId: string): Promise<void>;

  /**
   * Stores a new version of a function and makes it the one that serves. `check` runs on the
   * unpacked code first; if it (or anything else) throws, nothing changes and the previous version
   * keeps serving, also after a crash at any point.
   */
  deploy(account: string, spec: FunctionSpec, source: BundleSource, check: DeployCheck, limits?: BundleLimits): Promise<FunctionManifest>;
  /** Removes a function and its versions; resolves to the manifest that was serving. */
  remove(account: string, name: string): Promise<FunctionManifest | undefined>;
  /** A local folder holding the version's files (fetched first if this machine has not got them). */
  codeDir(manifest: FunctionManifest): Promise<string>;

  /** Copying between stores (`islet store copy`): an account as it is, key digests included. */
  importAccount(record: AccountRecord): Promise<void>;
  /** Copying between stores: a version as it is (its id kept, not validated again), made the serving one. */
  importVersion(manifest: FunctionManifest, codeDir: string): Promise<void>;

  /** Whether the store can take writes now (`/healthz`). */
  health(): StoreHealth;
  close(): Promise<void>;
}

export interface StoreHealth {
  kind: 'file' | 'postgres';
  description: string;
  /** `unavailable`: writes fail with ERR_STORE_UNAVAILABLE; calls keep being served from memory. */
  state: 'ok' | 'unavailable';
}

/** Deploy-time validation of a candidate version, on its unpacked files. */
export type DeployCheck = (manifest: FunctionManifest, codeDir: string) => Promise<void>;

/** What changed. The catalog reads the named record again; `all` asks for a full reload. */
export type StoreChange =
  | { kind: 'account'; accountId: string }
  | { kind: 'function'; account: string; name: string }
  | { kind: 'all' };

export interface CatalogSnapshot {
  accounts: AccountRecord[];
  functions: FunctionRecord[];
}

/** `admin` may do everything in its account; `invoke` may only call secured functions. */
export type KeyScope = 'admin' | 'invoke';

/**
 * An API key as stored: only a SHA-256 digest of it. Keys are 256 random bits, so a fast hash is as
 * safe here as a slow password hash and costs about 1 µs per request.
 */
export interface ApiKeyRecord {
  id: string;
  name: string;
  scope: KeyScope;
  /** Hex SHA-256 of the key. */
  sha256: string;
  createdAt: string;
  /** Set when the key was revoked; a revoked key matches nothing. */
  revokedAt?: string;
}

export interface AccountRecord {
  id: string;
  createdAt: string;
  keys: ApiKeyRecord[];
}

export interface NewAccount {
  accountId: string;
  apiKey: string;
}

export interface NewKey {
  apiKey: string;
  key: ApiKeyRecord;
}

/** One serving version and its share of the calls, in percent. */
export interface TrafficShare {
  version: string;
  percent: number;
}

/**
 * A function as the catalog holds it: the versions that serve and their shares (today one version
 * at 100%). Every version is immutable once stored; serving another is a change of `traffic` only.
 */
export interface FunctionRecord {
  account: string;
  name: string;
  traffic: TrafficShare[];
  /** The manifests of the versions in `traffic`. */
  serving: FunctionManifest[];
}
