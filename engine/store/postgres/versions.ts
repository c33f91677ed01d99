import type { PoolClient } from 'pg';
import { ServiceError } from '../../errors';
import type { FunctionManifest } from '../../manifest';
import type { AccountUsage } from '../quota';
import type { FunctionRecord, TrafficShare, VersionList } from '../store';
import { isPruned, missingVersion } from '../traffic';

/** Functions and their numbered versions in PostgreSQL: the statements the store's transactions are made of. */

export const SERVING_SQL = `
  SELECT f.account_id, f.name, f.traffic,
    (SELECT coalesce(json_agg(v.manifest), '[]') FROM islet_versions v
      WHERE v.account_id = f.account_id AND v.function_name = f.name
        AND f.traffic @> jsonb_build_array(jsonb_build_object('version', v.version))) AS serving
  FROM islet_functions f`;

export interface FunctionRow {
  account_id: string;
  name: string;
  traffic: TrafficShare[];
  serving: FunctionManifest[];
}

export function toFunctionRecord(row: FunctionRow): FunctionRecord {
  const serving = row.traffic.map((share) => row.serving.find((m) => m.version === share.version)).filter((m): m is FunctionManifest => m !== undefined);
  return { account: row.account_id, name: row.name, traffic: row.traffic, serving };
}

type Db = Pick<PoolClient, 'query'>;

/** A function's split and latest number, its row locked until the transaction ends; created empty when `create`. */
export async function lockFunction(db: Db, account: string, name: string, create = false): Promise<{ traffic: TrafficShare[]; latest: number } | undefined> {
  if (create) await db.query(`INSERT INTO islet_functions (account_id, name, traffic) VALUES ($1, $2, '[]') ON CONFLICT DO NOTHING`, [account, name]);
  const { rows } = await db.query<{ traffic: TrafficShare[]; latest: number }>('SELECT traffic, latest FROM islet_functions WHERE account_id = $1 AND name = $2 FOR UPDATE', [account, name]);
  return rows[0];
}

export async function keptNumbers(db: Db, account: string, name: string): Promise<number[]> {
  const { rows } = await db.query<{ version: number }>('SELECT version FROM islet_versions WHERE account_id = $1 AND function_name = $2', [account, name]);
  return rows.map((r) => r.version);
}

export async function insertVersion(db: Db, manifest: FunctionManifest): Promise<void> {
  await db.query('INSERT INTO islet_versions (account_id, function_name, version, manifest, bundle_hash) VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING', [
    manifest.account,
    manifest.name,
    manifest.version,
    JSON.stringify(manifest),
    manifest.contentHash,
  ]);
}

export function writeTraffic(db: Db, account: string, name: string, traffic: TrafficShare[], latest: number): Promise<unknown> {
  return db.query('UPDATE islet_functions SET traffic = $3, latest = $4, updated_at = now() WHERE account_id = $1 AND name = $2', [account, name, JSON.stringify(traffic), latest]);
}

/** Serves `traffic` (checked already) if every version in it is kept; else ERR_NOT_FOUND saying why. */
export async function switchTraffic(db: Db, account: string, name: string, traffic: TrafficShare[]): Promise<void> {
  const row = await lockFunction(db, account, name);
  if (!row || row.traffic.length === 0) throw new ServiceError('ERR_NO_SUCH_FUNCTION', `no function ${name} in account ${account}`);
  const kept = await keptNumbers(db, account, name);
  for (const { version } of traffic) if (!kept.includes(version)) throw missingVersion(name, version, row.latest, kept);
  await writeTraffic(db, account, name, traffic, row.latest);
}

/** Deletes the versions neither among the newest `keep` nor serving; returns their bundles' hashes. */
export async function prune(db: Db, account: string, name: string, latest: number, keep: number, traffic: TrafficShare[]): Promise<string[]> {
  const doomed = (await keptNumbers(db, account, name)).filter((n) => isPruned(n, latest, keep, traffic));
  if (doomed.length === 0) return [];
  const { rows } = await db.query<{ bundle_hash: string }>('DELETE FROM islet_versions WHERE account_id = $1 AND function_name = $2 AND version = ANY($3) RETURNING bundle_hash', [
    account,
    name,
    doomed,
  ]);
  return rows.map((r) => r.bundle_hash);
}

export async function listVersions(db: Db, account: string, name: string): Promise<VersionList | undefined> {
  const { rows } = await db.query<{ traffic: TrafficShare[]; latest: number; versions: FunctionManifest[] }>(
    `SELECT f.traffic, f.latest,
       (SELECT coalesce(json_agg(v.manifest ORDER BY v.version DESC), '[]') FROM islet_versions v WHERE v.account_id = f.account_id AND v.function_name = f.name) AS versions
     FROM islet_functions f WHERE f.account_id = $1 AND f.name = $2`,
    [account, name],
  );
  const row = rows[0];
  if (!row || row.traffic.length === 0) return undefined;
  return { latest: row.latest, traffic: row.traffic, versions: row.versions };
}

/** An account's functions (those with a serving version) and its kept versions with their unpacked bytes. */
export async function accountUsage(db: Db, account: string): Promise<AccountUsage> {
  const { rows } = await db.query<{ functions: string; versions: string; bytes: string }>(
    `SELECT (SELECT count(*) FROM islet_functions WHERE account_id = $1 AND traffic <> '[]'::jsonb) AS functions,
       count(*) AS versions, coalesce(sum((manifest->>'bytes')::bigint), 0) AS bytes
     FROM islet_versions WHERE account_id = $1`,
    [account],
  );
  return { functions: Number(rows[0]!.functions), versions: Number(rows[0]!.versions), codeBytes: Number(rows[0]!.bytes) };
}

/** A function's kept versions with their unpacked bytes. */
export async function keptSizes(db: Db, account: string, name: string): Promise<{ version: number; bytes: number }[]> {
  const { rows } = await db.query<{ version: number; bytes: string }>(`SELECT version, (manifest->>'bytes')::bigint AS bytes FROM islet_versions WHERE account_id = $1 AND function_name = $2`, [
    account,
    name,
  ]);
  return rows.map((r) => ({ version: r.version, bytes: Number(r.bytes) }));
}

/** Deletes the bundles among `hashes` that no version uses any more. */
export async function dropUnusedBundles(db: Db, hashes: string[]): Promise<void> {
  if (hashes.length === 0) return;
  await db.query('DELETE FROM islet_bundles b WHERE b.hash = ANY($1) AND NOT EXISTS (SELECT 1 FROM islet_versions v WHERE v.bundle_hash = b.hash)', [hashes]);
}
