import { randomBytes } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { Pool, type PoolClient } from 'pg';
import { materializeBundle, type BundleLimits, type BundleSource } from '../../bundle';
import { ServiceError } from '../../errors';
import type { FunctionManifest, FunctionSpec } from '../../manifest';
import { LocalCoordinator, type Coordinator } from '../coordinator';
import { newAccountId, newKey } from '../keys';
import type { AccountRecord, ApiKeyRecord, CatalogSnapshot, DeployCheck, FunctionRecord, KeyScope, NewAccount, NewKey, Store, StoreChange, StoreHealth, TrafficShare } from '../store';
import { describeVersion, packFiles } from '../version';
import { CodeCache } from './code-cache';
import { CHANNEL, ChangeFeed } from './feed';
import { migrate } from './schema';

export interface PostgresStoreOptions {
  /** postgres://user:password@host:port/database */
  url: string;
  /** This node's local cache: unpacked code (`code/`) and deploys being staged (`staging/`). */
  cacheDir: string;
  /** The other processes of this machine (workers): told of each change before a write returns. */
  coordinator?: Coordinator;
  /** Full reload this often, whatever the notifications said (default 30 s). */
  resyncMs?: number;
}

/** Versions kept besides the serving one. */
const KEEP_PREVIOUS = 2;
/** Arbitrary constant: the advisory lock under which the first account is created. */
const FIRST_ACCOUNT_LOCK = 73_100_616;
/** Codes of errors that mean the database is out of reach, not that a statement was wrong. */
const CONNECTION_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'ENOTFOUND', 'EHOSTUNREACH', 'EPIPE', '57P01', '57P02', '57P03']);

const SERVING_SQL = `
  SELECT f.account_id, f.name, f.traffic,
    (SELECT coalesce(json_agg(v.manifest), '[]') FROM islet_versions v
      WHERE v.account_id = f.account_id AND v.function_name = f.name
        AND f.traffic @> jsonb_build_array(jsonb_build_object('version', v.version))) AS serving
  FROM islet_functions f`;

interface FunctionRow {
  account_id: string;
  name: string;
  traffic: TrafficShare[];
  serving: FunctionManifest[];
}

interface KeyRow {
  id: string;
  name: string;
  scope: ApiKeyRecord['scope'];
  sha256: string;
  created_at: Date;
  revoked_at: Date | null;
}

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

  private constructor(
    private readonly pool: Pool,
    private readonly options: PostgresStoreOptions,
  ) {
    this.description = describeUrl(options.url);
    this.coordinator = options.coordinator ?? new LocalCoordinator();
    this.coordinator.subscribe((change) => this.tell(change));
    this.feed = new ChangeFeed(options.url, (change) => void this.tell(change).catch(() => undefined), options.resyncMs ?? 30_000);
    this.code = new CodeCache(path.join(options.cacheDir, 'code'), (hash) => this.fetchBundle(hash));
  }

  /** Connects, brings the schema up to date (under an advisory lock) and starts listening. */
  static async open(options: PostgresStoreOptions): Promise<PostgresStore> {
    const pool = new Pool({ connectionString: options.url, max: 4, connectionTimeoutMillis: 3_000, idleTimeoutMillis: 30_000, keepAlive: true });
    // An idle connection that breaks (the server went away) must not take the process with it.
    pool.on('error', () => undefined);
    try {
      await migrate(pool);
      const store = new PostgresStore(pool, options);
      await store.feed.start();
      return store;
    } catch (err) {
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

  async readFunction(account: string, name: string): Promise<FunctionRecord | undefined> {
    const { rows } = await this.query<FunctionRow>(`${SERVING_SQL} WHERE f.account_id = $1 AND f.name = $2`, [account, name]);
    const record = rows[0] && toFunctionRecord(rows[0]);
    return record && record.serving.length > 0 ? record : undefined;
  }

  createAccount(): Promise<NewAccount> {
    return this.write(async (db) => {
      const created = await insertAccount(db);
      return { result: created, change: { kind: 'account', accountId: created.accountId } };
    });
  }

  ensureFirstAccount(): Promise<NewAccount | undefined> {
    return this.write(async (db) => {
      await db.query('SELECT pg_advisory_xact_lock($1)', [FIRST_ACCOUNT_LOCK]);
      const { rows } = await db.query<{ n: string }>('SELECT count(*) AS n FROM islet_accounts');
      if (Number(rows[0]!.n) > 0) return { result: undefined };
      const created = await insertAccount(db);
      return { result: created, change: { kind: 'account', accountId: created.accountId } };
    });
  }

  createKey(accountId: string, options: { name?: string; scope?: KeyScope } = {}): Promise<NewKey> {
    return this.write(async (db) => {
      const found = await db.query('SELECT 1 FROM islet_accounts WHERE id = $1 FOR UPDATE', [accountId]);
      if (found.rowCount === 0) throw new ServiceError('ERR_NOT_FOUND', `no account ${accountId}`);
      const made = newKey(options.name, options.scope);
      await insertKey(db, accountId, made.key);
      return { result: made, change: { kind: 'account', accountId } };
    });
  }

  revokeKey(accountId: string, keyId: string): Promise<void> {
    return this.write(async (db) => {
      const { rowCount } = await db.query('UPDATE islet_keys SET revoked_at = coalesce(revoked_at, now()) WHERE account_id = $1 AND id = $2', [accountId, keyId]);
      if (rowCount === 0) throw new ServiceError('ERR_NOT_FOUND', `no key ${keyId} in account ${accountId}`);
      return { result: undefined, change: { kind: 'account', accountId } };
    });
  }

  async deploy(account: string, spec: FunctionSpec, source: BundleSource, check: DeployCheck, limits?: BundleLimits): Promise<FunctionManifest> {
    this.assertAvailable();
    const staging = path.join(this.options.cacheDir, 'staging', randomBytes(6).toString('hex'));
    const codeDir = path.join(staging, 'code');
    await fsp.mkdir(codeDir, { recursive: true });
    try {
      await materializeBundle(source, codeDir, limits);
      const manifest = await describeVersion(codeDir, account, spec);
      await check(manifest, codeDir);
      await this.publish(manifest, codeDir);
      return manifest;
    } finally {
      await fsp.rm(staging, { recursive: true, force: true });
    }
  }

  remove(account: string, name: string): Promise<FunctionManifest | undefined> {
    return this.write(async (db) => {
      const serving = (await db.query<FunctionRow>(`${SERVING_SQL} WHERE f.account_id = $1 AND f.name = $2 FOR UPDATE OF f`, [account, name])).rows[0];
      if (!serving) return { result: undefined };
      await db.query('DELETE FROM islet_functions WHERE account_id = $1 AND name = $2', [account, name]);
      const { rows } = await db.query<{ bundle_hash: string }>('DELETE FROM islet_versions WHERE account_id = $1 AND function_name = $2 RETURNING bundle_hash', [account, name]);
      await dropUnusedBundles(db, rows.map((r) => r.bundle_hash));
      return { result: serving.serving[0], change: { kind: 'function', account, name } };
    });
  }

  codeDir(manifest: FunctionManifest): Promise<string> {
    return this.code.get(manifest.contentHash);
  }

  importAccount(record: AccountRecord): Promise<void> {
    return this.write(async (db) => {
      await db.query('INSERT INTO islet_accounts (id, created_at) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING', [record.id, record.createdAt]);
      for (const key of record.keys) {
        await db.query('DELETE FROM islet_keys WHERE account_id = $1 AND id = $2', [record.id, key.id]);
        await insertKey(db, record.id, key);
      }
      return { result: undefined, change: { kind: 'account', accountId: record.id } };
    });
  }

  async importVersion(manifest: FunctionManifest, codeDir: string): Promise<void> {
    this.assertAvailable();
    const staging = path.join(this.options.cacheDir, 'staging', randomBytes(6).toString('hex'));
    try {
      await fsp.cp(codeDir, path.join(staging, 'code'), { recursive: true });
      await this.publish(manifest, path.join(staging, 'code'));
    } finally {
      await fsp.rm(staging, { recursive: true, force: true });
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
    await this.pool.end().catch(() => undefined);
  }

  /**
   * Stores a version and makes it serve, in one transaction: the bundle (once per content), the
   * version, the switch of the function's traffic (its row lock orders deploys of one function:
   * the last to commit wins everywhere), the pruning of old versions and their unused bundles, and
   * the notification. Then the code joins this node's cache.
   */
  private async publish(manifest: FunctionManifest, codeDir: string): Promise<void> {
    const bundle = await packFiles(codeDir, manifest.files);
    const { account, name, version, contentHash } = manifest;
    await this.write(async (db) => {
      await db.query('INSERT INTO islet_bundles (hash, data, bytes) VALUES ($1, $2, $3) ON CONFLICT (hash) DO NOTHING', [contentHash, bundle, bundle.length]);
      await db.query(
        `INSERT INTO islet_functions (account_id, name, traffic) VALUES ($1, $2, $3)
         ON CONFLICT (account_id, name) DO UPDATE SET traffic = EXCLUDED.traffic, updated_at = now()`,
        [account, name, JSON.stringify([{ version, percent: 100 }])],
      );
      await db.query('INSERT INTO islet_versions (account_id, function_name, version, manifest, bundle_hash) VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING', [account, name, version, JSON.stringify(manifest), contentHash]);
      const pruned = await db.query<{ bundle_hash: string }>(
        `DELETE FROM islet_versions WHERE account_id = $1 AND function_name = $2 AND version <> $3 AND version NOT IN (
           SELECT version FROM islet_versions WHERE account_id = $1 AND function_name = $2 AND version <> $3 ORDER BY created_at DESC LIMIT $4)
         RETURNING bundle_hash`,
        [account, name, version, KEEP_PREVIOUS],
      );
      await dropUnusedBundles(db, pruned.rows.map((r) => r.bundle_hash));
      return { result: undefined, change: { kind: 'function', account, name } };
    });
    // The version is stored; not having it in this node's cache only costs a fetch later.
    await this.code.adopt(contentHash, codeDir).catch(() => undefined);
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
    const { rows } = await this.query<{ id: string; created_at: Date; keys: KeyRow[] }>(
      `SELECT a.id, a.created_at, coalesce(json_agg(k ORDER BY k.created_at) FILTER (WHERE k.id IS NOT NULL), '[]') AS keys
       FROM islet_accounts a LEFT JOIN islet_keys k ON k.account_id = a.id ${id === undefined ? '' : 'WHERE a.id = $1'}
       GROUP BY a.id`,
      id === undefined ? [] : [id],
    );
    return rows.map((row) => ({ id: row.id, createdAt: iso(row.created_at), keys: row.keys.map(toKeyRecord) }));
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
    if ((e.code && (CONNECTION_CODES.has(e.code) || e.code.startsWith('08'))) || /Connection terminated|connection error|timeout exceeded when trying to connect|connect ECONN/i.test(e.message ?? '')) {
      return this.unavailable(e.message ?? String(err));
    }
    if (e.code === '23503') return new ServiceError('ERR_NOT_FOUND', `not found in the store: ${e.message}`);
    return new ServiceError('ERR_INTERNAL', `store error: ${e.message ?? String(err)}`);
  }
}

async function insertAccount(db: PoolClient): Promise<NewAccount> {
  const { apiKey, key } = newKey('default', 'admin');
  const accountId = newAccountId();
  await db.query('INSERT INTO islet_accounts (id, created_at) VALUES ($1, now())', [accountId]);
  await insertKey(db, accountId, key);
  return { accountId, apiKey };
}

function insertKey(db: PoolClient, accountId: string, key: ApiKeyRecord): Promise<unknown> {
  return db.query('INSERT INTO islet_keys (account_id, id, name, scope, sha256, created_at, revoked_at) VALUES ($1, $2, $3, $4, $5, $6, $7)', [
    accountId,
    key.id,
    key.name,
    key.scope,
    key.sha256,
    key.createdAt,
    key.revokedAt ?? null,
  ]);
}

/** Deletes the bundles among `hashes` that no version uses any more. */
async function dropUnusedBundles(db: PoolClient, hashes: string[]): Promise<void> {
  if (hashes.length === 0) return;
  await db.query('DELETE FROM islet_bundles b WHERE b.hash = ANY($1) AND NOT EXISTS (SELECT 1 FROM islet_versions v WHERE v.bundle_hash = b.hash)', [hashes]);
}

function toFunctionRecord(row: FunctionRow): FunctionRecord {
  const serving = row.traffic.map((share) => row.serving.find((m) => m.version === share.version)).filter((m): m is FunctionManifest => m !== undefined);
  return { account: row.account_id, name: row.name, traffic: row.traffic, serving };
}

function toKeyRecord(row: KeyRow): ApiKeyRecord {
  const key: ApiKeyRecord = { id: row.id, name: row.name, scope: row.scope, sha256: row.sha256, createdAt: iso(row.created_at) };
  if (row.revoked_at) key.revokedAt = iso(row.revoked_at);
  return key;
}

function iso(value: Date | string): string {
  return new Date(value).toISOString();
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
