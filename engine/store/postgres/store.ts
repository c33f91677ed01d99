import { randomBytes } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { Pool, type PoolClient } from 'pg';
import { ServiceError } from '../../errors';
import type { FunctionManifest } from '../../manifest';
import { LocalCoordinator, type Coordinator } from '../coordinator';
import { newKeyFor, revokeIn } from '../keys';
import { checkQuota, prunedBytes } from '../quota';
import type {
  AccountLimits,
  AccountRecord,
  ApiKeyRecord,
  CatalogSnapshot,
  FunctionRecord,
  NodeDirectory,
  KeyScope,
  NewAccount,
  NewKey,
  PublishOptions,
  StagedVersion,
  Store,
  StoreChange,
  StoreHealth,
  TrafficAfter,
  TrafficShare,
  VersionList,
} from '../store';
import { discardStaged } from '../pipeline';
import { checkTraffic, DEFAULT_KEEP_VERSIONS } from '../traffic';
import { packFiles } from '../version';
import * as accountSql from './accounts';
import { CodeCache } from './code-cache';
import { CHANNEL, ChangeFeed } from './feed';
import { PostgresJobs } from './jobs';
import { migrate } from './schema';
import * as versionSql from './versions';
import { SERVING_SQL, toFunctionRecord, type FunctionRow } from './versions';
import { backgroundFailed } from '../../server-log';

export interface PostgresStoreOptions {
  /** postgres://user:password@host:port/database */
  url: string;
  /** This node's local cache: unpacked code (`code/`) and deploys being staged (`staging/`). */
  cacheDir: string;
  /** The other processes of this machine (workers): told of each change before a write returns. */
  coordinator?: Coordinator;
  /** Full reload this often, whatever the notifications said (default 30 s). */
  resyncMs?: number;
  /** The newest this many versions of a function are kept, and every serving one besides (default 10). */
  keepVersions?: number;
  /** This node's id (its running invocations are tagged with it; default a random one). */
  nodeId?: string;
}
/** Arbitrary constant: the advisory lock under which the first account is created. */
const FIRST_ACCOUNT_LOCK = 73_100_616;
/** Codes of errors that mean the database is out of reach, not that a statement was wrong. */
const CONNECTION_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'ENOTFOUND', 'EHOSTUNREACH', 'EPIPE', '57P01', '57P02', '57P03']);

/**
 * The shared store: accounts, keys, functions, versions and bundles in PostgreSQL, so that several
 * stateless nodes serve the same functions. Every write is one transaction that NOTIFYs its change
 * on commit; each node LISTENs and re-reads what changed (engine/store/postgres/feed.ts). Code is
 * stored once per content hash and unpacked into each node's cache when first needed.
 */
export class PostgresStore implements Store {
  readonly description: string;
  private readonly listeners: ((change: StoreChange) => Promise<void>)[] = [];
  private readonly feed: ChangeFeed;
  private readonly code: CodeCache;
  private readonly coordinator: Coordinator;
  private readonly keepVersions: number;
  readonly jobs: PostgresJobs;
  /** Every node on this database registers itself here (logs across nodes). */
  readonly nodes: NodeDirectory = this;
  /** This node's id, as its running invocations name it. */
  readonly nodeId: string;

  private constructor(
    private readonly pool: Pool,
    private readonly options: PostgresStoreOptions,
  ) {
    this.description = describeUrl(options.url);
    this.coordinator = options.coordinator ?? new LocalCoordinator();
    this.keepVersions = Math.max(1, options.keepVersions ?? DEFAULT_KEEP_VERSIONS);
    this.coordinator.subscribe((change) => this.tell(change));
    this.nodeId = options.nodeId ?? `node-${randomBytes(3).toString('hex')}`;
    this.jobs = new PostgresJobs(
      {
        query: (sql, params) => this.query(sql, params),
        transaction: (work) => this.write(async (db) => ({ result: await work(db) })),
      },
      `${this.nodeId}/${process.pid}`,
    );
    // A change not read into the catalog leaves it stale until the next resync (every 30 s) reads everything.
    this.feed = new ChangeFeed(
      options.url,
      (change) => void this.tell(change).catch((err: unknown) => backgroundFailed('catalog-refresh', err, `the change ${JSON.stringify(change)} was not read into the catalog`)),
      options.resyncMs ?? 30_000,
      () => this.jobs.workArrived(),
    );
    this.code = new CodeCache(path.join(options.cacheDir, 'code'), (hash) => this.fetchBundle(hash));
  }

  /** Connects, brings the schema up to date (under an advisory lock) and starts listening. */
  static async open(options: PostgresStoreOptions): Promise<PostgresStore> {
    // pg's connection timeout also bounds the wait in line for one of the 4 connections: 100
    // asynchronous invocations submitted at once on a loaded 2-core machine waited over 3 s and
    // were answered ERR_STORE_UNAVAILABLE. A server that is down refuses at once; one that does not
    // answer is still reported within 15 s.
    const pool = new Pool({ connectionString: options.url, max: 4, connectionTimeoutMillis: 15_000, idleTimeoutMillis: 30_000, keepAlive: true });
    // An idle connection that breaks (the server went away) must not take the process with it.
    pool.on('error', () => undefined);
    try {
      await migrate(pool);
      const store = new PostgresStore(pool, options);
      await store.feed.start();
      return store;
    } catch (err) {
      // Benign: the pool is given up either way, and the error that made it so is thrown.
      await pool.end().catch(() => undefined);
      throw new Error(`cannot open the store (${describeUrl(options.url)}): ${(err as Error).message}`);
    }
  }

  /** Code bundles fetched by this node (each version's first call here, once). */
  get fetches(): number {
    return this.code.fetches;
  }

  health(): StoreHealth {
    return { kind: 'postgres', description: this.description, state: this.feed.available ? 'ok' : 'unavailable' };
  }

  watch(listener: (change: StoreChange) => Promise<void>): void {
    this.listeners.push(listener);
  }

  async load(): Promise<CatalogSnapshot> {
    const [accounts, functions] = await Promise.all([this.readAccounts(), this.query<FunctionRow>(SERVING_SQL)]);
    return { accounts, functions: functions.rows.map(toFunctionRecord).filter((f) => f.serving.length > 0) };
  }

  async readAccount(accountId: string): Promise<AccountRecord | undefined> {
    return (await this.readAccounts(accountId))[0];
  }

  async listVersions(account: string, name: string): Promise<VersionList | undefined> {
    try {
      return await versionSql.listVersions(this.pool, account, name);
    } catch (err) {
      throw this.asServiceError(err);
    }
  }

  async readFunction(account: string, name: string): Promise<FunctionRecord | undefined> {
    const { rows } = await this.query<FunctionRow>(`${SERVING_SQL} WHERE f.account_id = $1 AND f.name = $2`, [account, name]);
    const record = rows[0] && toFunctionRecord(rows[0]);
    return record && record.serving.length > 0 ? record : undefined;
  }

  createAccount(): Promise<NewAccount> {
    return this.write(async (db) => {
      const created = await accountSql.insertAccount(db);
      return { result: created, change: { kind: 'account', accountId: created.accountId } };
    });
  }

  ensureFirstAccount(): Promise<NewAccount | undefined> {
    return this.write(async (db) => {
      await db.query('SELECT pg_advisory_xact_lock($1)', [FIRST_ACCOUNT_LOCK]);
      const { rows } = await db.query<{ n: string }>('SELECT count(*) AS n FROM islet_accounts');
      if (Number(rows[0]!.n) > 0) return { result: undefined };
      const created = await accountSql.insertAccount(db);
      return { result: created, change: { kind: 'account', accountId: created.accountId } };
    });
  }

  createKey(accountId: string, options: { name?: string; scope?: KeyScope } = {}): Promise<NewKey> {
    return this.write(async (db) => {
      const made = newKeyFor(await accountSql.lockAccount(db, accountId), options.name, options.scope);
      await accountSql.insertKey(db, accountId, made.key);
      return { result: made, change: { kind: 'account', accountId } };
    });
  }

  revokeKey(accountId: string, keyId: string): Promise<ApiKeyRecord> {
    return this.write(async (db) => {
      const key = revokeIn(await accountSql.lockAccount(db, accountId), keyId);
      await accountSql.setRevoked(db, accountId, key);
      return { result: key, change: { kind: 'account', accountId } };
    });
  }

  async touchKeys(accountId: string, usedAt: Record<string, string>): Promise<void> {
    // Nothing on the call path reads it: no change to announce.
    this.assertAvailable();
    try {
      await accountSql.touchKeys(this.pool, accountId, usedAt);
    } catch (err) {
      throw this.asServiceError(err);
    }
  }

  setAccountLimits(accountId: string, limits: AccountLimits): Promise<void> {
    return this.write(async (db) => {
      await accountSql.lockAccount(db, accountId);
      await accountSql.setLimits(db, accountId, limits);
      return { result: undefined, change: { kind: 'account', accountId } };
    });
  }

  /** Deploys stage in this node's cache, so that the published code joins it by a rename. */
  async stagingRoot(): Promise<string> {
    this.assertAvailable();
    const root = path.join(this.options.cacheDir, 'staging');
    await fsp.mkdir(root, { recursive: true });
    return root;
  }

  async setTraffic(account: string, name: string, traffic: TrafficShare[]): Promise<FunctionRecord> {
    const shares = checkTraffic(traffic);
    await this.write(async (db) => {
      await versionSql.switchTraffic(db, account, name, shares);
      return { result: undefined, change: { kind: 'function', account, name } };
    });
    const record = await this.readFunction(account, name);
    if (!record) throw new ServiceError('ERR_NO_SUCH_FUNCTION', `no function ${name} in account ${account}`);
    return record;
  }

  remove(account: string, name: string): Promise<FunctionManifest | undefined> {
    return this.write(async (db) => {
      const serving = (await db.query<FunctionRow>(`${SERVING_SQL} WHERE f.account_id = $1 AND f.name = $2 FOR UPDATE OF f`, [account, name])).rows[0];
      if (!serving) return { result: undefined };
      await db.query('DELETE FROM islet_functions WHERE account_id = $1 AND name = $2', [account, name]);
      const { rows } = await db.query<{ bundle_hash: string }>('DELETE FROM islet_versions WHERE account_id = $1 AND function_name = $2 RETURNING bundle_hash', [account, name]);
      await versionSql.dropUnusedBundles(
        db,
        rows.map((r) => r.bundle_hash),
      );
      return { result: serving.serving[0], change: { kind: 'function', account, name } };
    });
  }

  codeDir(manifest: FunctionManifest): Promise<string> {
    return this.code.get(manifest.contentHash);
  }

  importAccount(record: AccountRecord): Promise<void> {
    return this.write(async (db) => {
      await accountSql.importAccount(db, record);
      return { result: undefined, change: { kind: 'account', accountId: record.id } };
    });
  }

  async importVersion(manifest: FunctionManifest, codeDir: string): Promise<void> {
    const dir = path.join(await this.stagingRoot(), `.copy-${randomBytes(6).toString('hex')}`);
    const staged: StagedVersion = { manifest, codeDir: path.join(dir, 'code'), dir };
    try {
      await fsp.cp(codeDir, staged.codeDir, { recursive: true });
      // Its own number; it serves only a function that had no version yet.
      await this.publish(staged, (_, current) => current ?? [{ version: manifest.version, percent: 100 }]);
    } finally {
      await discardStaged(staged);
    }
  }

  /** Says this node (its id, and the URL other nodes reach it at) is alive; repeated as a heartbeat. */
  async registerNode(id: string, url: string): Promise<void> {
    await this.query('INSERT INTO islet_nodes (id, url) VALUES ($1, $2) ON CONFLICT (id) DO UPDATE SET url = EXCLUDED.url, seen_at = now()', [id, url]);
  }

  /** The nodes seen within the last `withinMs`. */
  async liveNodes(withinMs: number): Promise<{ id: string; url: string }[]> {
    const { rows } = await this.query<{ id: string; url: string }>("SELECT id, url FROM islet_nodes WHERE seen_at > now() - $1 * interval '1 millisecond' ORDER BY id", [withinMs]);
    return rows;
  }

  async close(): Promise<void> {
    await this.feed.close();
    // Benign: closing; a connection that fails to end is gone with the process.
    await this.pool.end().catch(() => undefined);
  }

  /**
   * Stores a version and switches the function's traffic to `traffic(number, current)`, in one
   * transaction: the bundle (once per content), the version numbered after the function's latest
   * (a version given its number already, by a copy, keeps it), the switch (the function's row lock
   * orders deploys of one function: numbers never repeat and the last to commit wins everywhere),
   * the pruning of old versions and their unused bundles, and the notification. Then the code joins
   * this node's cache.
   */
  async publish(staged: StagedVersion, traffic: TrafficAfter, options: PublishOptions = {}): Promise<FunctionManifest> {
    const { manifest: candidate, codeDir } = staged;
    const bundle = await packFiles(codeDir, candidate.files);
    const { account, name, contentHash } = candidate;
    const keep = options.keepVersions ?? this.keepVersions;
    const manifest = await this.write(async (db) => {
      // The account's row lock orders its deploys, so that two at once cannot both pass on the same usage.
      if (options.quota) await db.query('SELECT 1 FROM islet_accounts WHERE id = $1 FOR UPDATE', [account]);
      await db.query('INSERT INTO islet_bundles (hash, data, bytes) VALUES ($1, $2, $3) ON CONFLICT (hash) DO NOTHING', [contentHash, bundle, bundle.length]);
      const row = (await versionSql.lockFunction(db, account, name, true))!;
      const current = row.traffic.length > 0 ? row.traffic : undefined;
      const stored: FunctionManifest = { ...candidate, version: candidate.version || row.latest + 1 };
      const latest = Math.max(row.latest, stored.version);
      const next = traffic(stored.version, current);
      if (options.quota) {
        const freedBytes = prunedBytes(await versionSql.keptSizes(db, account, name), latest, keep, next);
        checkQuota(account, await versionSql.accountUsage(db, account), { newFunction: current === undefined, addedBytes: stored.bytes, freedBytes }, options.quota);
      }
      await versionSql.insertVersion(db, stored);
      await versionSql.writeTraffic(db, account, name, next, latest);
      await versionSql.dropUnusedBundles(db, await versionSql.prune(db, account, name, latest, keep, next));
      return { result: stored, change: { kind: 'function', account, name } };
    });
    // The version is stored; not having it in this node's cache only costs a fetch later.
    await this.code
      .adopt(contentHash, codeDir)
      .catch((err: unknown) => backgroundFailed('code-adopt', err, `the code of ${account}/${name} was not kept in this node's cache (its first call here fetches it)`));
    return manifest;
  }

  /**
   * One write transaction. `work` returns its result and the change to announce: NOTIFYed inside
   * the transaction (all nodes hear it on commit), and told to this node's catalog and to the other
   * processes of this machine before the write resolves. Writes fail at once while the database is
   * known to be out of reach.
   */
  private async write<T>(work: (db: PoolClient) => Promise<{ result: T; change?: StoreChange }>): Promise<T> {
    this.assertAvailable();
    let outcome: { result: T; change?: StoreChange };
    let client: PoolClient | undefined;
    try {
      client = await this.pool.connect();
      await client.query('BEGIN');
      outcome = await work(client);
      if (outcome.change) await client.query('SELECT pg_notify($1, $2)', [CHANNEL, JSON.stringify(outcome.change)]);
      await client.query('COMMIT');
    } catch (err) {
      // Benign: a connection that cannot roll back is broken, and the transaction dies with it; the error that made it roll back is thrown.
      await client?.query('ROLLBACK').catch(() => undefined);
      throw this.asServiceError(err);
    } finally {
      client?.release();
    }
    if (outcome.change) await Promise.all([this.tell(outcome.change), this.coordinator.publish(outcome.change)]);
    return outcome.result;
  }

  private async query<R extends object>(sql: string, params: unknown[] = []): Promise<{ rows: R[] }> {
    try {
      return await this.pool.query<R>(sql, params);
    } catch (err) {
      throw this.asServiceError(err);
    }
  }

  private async readAccounts(id?: string): Promise<AccountRecord[]> {
    try {
      return await accountSql.readAccounts(this.pool, id);
    } catch (err) {
      throw this.asServiceError(err);
    }
  }

  private async fetchBundle(hash: string): Promise<Buffer> {
    this.assertAvailable();
    const { rows } = await this.query<{ data: Buffer }>('SELECT data FROM islet_bundles WHERE hash = $1', [hash]);
    if (!rows[0]) throw new ServiceError('ERR_INTERNAL', `the store has no bundle ${hash}`);
    return rows[0].data;
  }

  private async tell(change: StoreChange): Promise<void> {
    await Promise.all(this.listeners.map((listener) => listener(change)));
  }

  private assertAvailable(): void {
    if (!this.feed.available) throw this.unavailable(this.feed.lastError || 'not connected');
  }

  private unavailable(reason: string): ServiceError {
    return new ServiceError('ERR_STORE_UNAVAILABLE', `the store (${this.description}) is unavailable: ${reason}; calls are still served, writes are refused until it is back`);
  }

  private asServiceError(err: unknown): Error {
    if (err instanceof ServiceError) return err;
    const e = err as { code?: string; message?: string };
    if (
      (e.code && (CONNECTION_CODES.has(e.code) || e.code.startsWith('08'))) ||
      /Connection terminated|connection error|timeout exceeded when trying to connect|connect ECONN/i.test(e.message ?? '')
    ) {
      return this.unavailable(e.message ?? String(err));
    }
    if (e.code === '23503') return new ServiceError('ERR_NOT_FOUND', `not found in the store: ${e.message}`);
    return new ServiceError('ERR_INTERNAL', `store error: ${e.message ?? String(err)}`);
  }
}

/** `PostgreSQL at host:port/db`, never the password. */
function describeUrl(url: string): string {
  try {
    const u = new URL(url);
    return `PostgreSQL at ${u.hostname}:${u.port || 5432}${u.pathname}`;
  } catch {
    return 'PostgreSQL';
  }
}
