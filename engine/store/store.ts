import type { BundleLimits } from '../bundle';
import type { JobStore } from '../jobs/records';
import type { FunctionManifest } from '../manifest';
import type { KeyScope } from '../wire';
import type { DeployQuota } from './quota';

export type { KeyScope };

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
  /**
   * Adds a key to an account; the key itself is in the answer only (the store keeps its digest).
   * A name already held by one of the account's keys that are not revoked is ERR_CONFLICT.
   */
  createKey(accountId: string, options?: { name?: string; scope?: KeyScope }): Promise<NewKey>;
  /**
   * Revokes a key by id: refused on the next call, everywhere. The account's last admin key cannot
   * be revoked (ERR_CONFLICT): the account would be left with no way to manage itself.
   */
  revokeKey(accountId: string, keyId: string): Promise<ApiKeyRecord>;
  /** Records when keys were last used (`lastUsedAt`, kept if already later). Announces no change: nothing on the call path reads it. */
  touchKeys(accountId: string, usedAt: Record<string, string>): Promise<void>;
  /** Sets an account's own limits; a field left out falls back to the server's. */
  setAccountLimits(accountId: string, limits: AccountLimits): Promise<void>;

  /**
   * Where deploys of this function unpack their uploads (engine/store/pipeline.ts makes a folder in
   * it per deploy and removes it after): where `publish` can move it into place. Throws, before
   * anything is unpacked, when the store cannot take writes.
   */
  stagingRoot(account: string, name: string): Promise<string>;
  /**
   * Stores a staged and checked version as the next number of its function (1, 2, 3… per function)
   * and switches the function's calls to `traffic(number, current)`, atomically: if anything
   * throws, also a crash at any point, nothing changes and the previous version keeps serving.
   * `quota` is checked under the account's lock (two deploys at once cannot both pass on the same
   * usage). The newest `keepVersions` versions are kept (default the store's), and every serving one.
   * The deploy pipeline itself (stage, check, discard) is the engine's: engine/store/pipeline.ts.
   */
  publish(staged: StagedVersion, traffic: TrafficAfter, options?: PublishOptions): Promise<FunctionManifest>;
  /** The versions a function keeps, newest first, and which serve; undefined when it does not exist. */
  listVersions(account: string, name: string): Promise<VersionList | undefined>;
  /**
   * Serves the given versions with the given shares, at once and atomically (a rollback, a split,
   * a promotion). The split is checked with `checkTraffic` (ERR_BAD_REQUEST); a version that is not
   * kept is ERR_NOT_FOUND saying whether it was pruned or never existed.
   */
  setTraffic(account: string, name: string, traffic: TrafficShare[]): Promise<FunctionRecord>;
  /** Removes a function and its versions; resolves to the manifest that was serving. */
  remove(account: string, name: string): Promise<FunctionManifest | undefined>;
  /** A local folder holding the version's files (fetched first if this machine has not got them). */
  codeDir(manifest: FunctionManifest): Promise<string>;

  /** Copying between stores (`islet store copy`): an account as it is, key digests included. */
  importAccount(record: AccountRecord): Promise<void>;
  /**
   * Copying between stores: a version as it is (its number kept, not validated again). It serves
   * only if the function had no version yet; `setTraffic` then sets the split the source had.
   */
  importVersion(manifest: FunctionManifest, codeDir: string): Promise<void>;

  /** Asynchronous invocations and schedules' ticks, shared by every process and node of the store. */
  readonly jobs: JobStore;
  /**
   * Which nodes share this store and where they are, for a store several nodes share (PostgreSQL);
   * undefined for one that only this machine uses (a data directory).
   */
  readonly nodes: NodeDirectory | undefined;

  /** Whether the store can take writes now (`/healthz`). */
  health(): StoreHealth;
  close(): Promise<void>;
}

/** What the logs of several nodes need from the shared store: who is alive, and where. */
export interface NodeDirectory {
  registerNode(id: string, url: string): Promise<void>;
  liveNodes(withinMs: number): Promise<{ id: string; url: string }[]>;
}

export interface StoreHealth {
  kind: 'file' | 'postgres';
  description: string;
  /** `unavailable`: writes fail with ERR_STORE_UNAVAILABLE; calls keep being served from memory. */
  state: 'ok' | 'unavailable';
}

/** Deploy-time validation of a candidate version (numbered 0 until it is stored), on its unpacked files. */
export type DeployCheck = (manifest: FunctionManifest, codeDir: string) => Promise<void>;

/** A version unpacked aside, not yet numbered nor published (engine/store/pipeline.ts). */
export interface StagedVersion {
  manifest: FunctionManifest;
  /** The unpacked files (where the deploy check loads them). */
  codeDir: string;
  /** The staging folder (`codeDir` is its `code/`); removed after the deploy whatever happened. */
  dir: string;
}

/** The function's split once version `version` is stored, from the one before (undefined: a new function). */
export type TrafficAfter = (version: number, current: TrafficShare[] | undefined) => TrafficShare[];

/** What a publish is bound by. */
export interface PublishOptions {
  /** The account's bounds (ERR_QUOTA_EXCEEDED); none for a copy between stores. */
  quota?: DeployQuota;
  /** Versions of the function kept after this deploy (the account's own; default the store's). */
  keepVersions?: number;
}

/** A deploy's options (engine/store/pipeline.ts). */
export interface DeployOptions extends PublishOptions {
  limits?: BundleLimits;
  /** A note kept with the version (`islet deploy --message`). */
  message?: string;
  /** Serve the new version to this share of calls, 0–100 (default 100). */
  percent?: number;
}

export interface VersionList {
  /** The highest version number given so far (it may have been pruned since). */
  latest: number;
  traffic: TrafficShare[];
  /** The kept versions' manifests, newest first. */
  versions: FunctionManifest[];
}

/** What changed. The catalog reads the named record again; `all` asks for a full reload. */
export type StoreChange = { kind: 'account'; accountId: string } | { kind: 'function'; account: string; name: string } | { kind: 'all' };

export interface CatalogSnapshot {
  accounts: AccountRecord[];
  functions: FunctionRecord[];
}

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
  /** When a call or a management request last presented it (to the minute). */
  lastUsedAt?: string;
}

/** An account's own bounds; a field left out takes the server's (see engine/limits.ts). */
export interface AccountLimits {
  /** Calls of the account's functions running at once. */
  maxInFlight?: number;
  /** Calls per second, over time (token bucket refill; 0: no bound). */
  ratePerSec?: number;
  /** Calls the bucket holds for a burst. */
  burst?: number;
  /** Functions the account may have. */
  maxFunctions?: number;
  /** Bytes of code (the unpacked files of every kept version) the account may keep. */
  maxCodeBytes?: number;
  /** Bytes of log files the account may keep on a node. */
  maxLogBytes?: number;
  /** The newest this many versions of each function are kept, and every serving one besides. */
  keepVersions?: number;
}

export interface AccountRecord {
  id: string;
  createdAt: string;
  keys: ApiKeyRecord[];
  limits?: AccountLimits;
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
  version: number;
  percent: number;
}

/**
 * A function as the catalog holds it: the versions that serve (one, or two sharing the calls) and
 * their shares. Every version is immutable once stored; serving another is a change of `traffic` only.
 */
export interface FunctionRecord {
  account: string;
  name: string;
  traffic: TrafficShare[];
  /** The manifests of the versions in `traffic`. */
  serving: FunctionManifest[];
}
