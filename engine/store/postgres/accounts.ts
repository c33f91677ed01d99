import type { PoolClient } from 'pg';
import { ServiceError } from '../../errors';
import { newAccountId, newKey } from '../keys';
import type { AccountLimits, AccountRecord, ApiKeyRecord, NewAccount } from '../store';

/** Accounts and keys in PostgreSQL: the statements the store's transactions are made of. */

interface KeyRow {
  id: string;
  name: string;
  scope: ApiKeyRecord['scope'];
  sha256: string;
  created_at: Date | string;
  revoked_at: Date | string | null;
  last_used_at: Date | string | null;
}

interface AccountRow {
  id: string;
  created_at: Date;
  limits: AccountLimits | null;
  keys: KeyRow[];
}

/** Every account (or the one with `id`) with its keys; `lock` takes the account's row lock (inside a transaction). */
export async function readAccounts(db: Pick<PoolClient, 'query'>, id?: string, lock = false): Promise<AccountRecord[]> {
  if (lock && id !== undefined) await db.query('SELECT 1 FROM islet_accounts WHERE id = $1 FOR UPDATE', [id]);
  const { rows } = await db.query<AccountRow>(
    `SELECT a.id, a.created_at, a.limits, coalesce(json_agg(k ORDER BY k.created_at) FILTER (WHERE k.id IS NOT NULL), '[]') AS keys
     FROM islet_accounts a LEFT JOIN islet_keys k ON k.account_id = a.id ${id === undefined ? '' : 'WHERE a.id = $1'}
     GROUP BY a.id`,
    id === undefined ? [] : [id],
  );
  return rows.map((row) => {
    const record: AccountRecord = { id: row.id, createdAt: iso(row.created_at), keys: row.keys.map(toKeyRecord) };
    if (row.limits) record.limits = row.limits;
    return record;
  });
}

/** The account, its row locked until the transaction ends (writes that read first: keys, limits). */
export async function lockAccount(db: PoolClient, accountId: string): Promise<AccountRecord> {
  const record = (await readAccounts(db, accountId, true))[0];
  if (!record) throw new ServiceError('ERR_NOT_FOUND', `no account ${accountId}`);
  return record;
}

export async function insertAccount(db: PoolClient): Promise<NewAccount> {
  const { apiKey, key } = newKey('default', 'admin');
  const accountId = newAccountId();
  await db.query('INSERT INTO islet_accounts (id, created_at) VALUES ($1, now())', [accountId]);
  await insertKey(db, accountId, key);
  return { accountId, apiKey };
}

export function insertKey(db: PoolClient, accountId: string, key: ApiKeyRecord): Promise<unknown> {
  return db.query('INSERT INTO islet_keys (account_id, id, name, scope, sha256, created_at, revoked_at, last_used_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)', [
    accountId,
    key.id,
    key.name,
    key.scope,
    key.sha256,
    key.createdAt,
    key.revokedAt ?? null,
    key.lastUsedAt ?? null,
  ]);
}

/** An account as it is, keys and limits included (`islet store copy`). */
export async function importAccount(db: PoolClient, record: AccountRecord): Promise<void> {
  await db.query('INSERT INTO islet_accounts (id, created_at, limits) VALUES ($1, $2, $3) ON CONFLICT (id) DO UPDATE SET limits = EXCLUDED.limits', [
    record.id,
    record.createdAt,
    record.limits ? JSON.stringify(record.limits) : null,
  ]);
  for (const key of record.keys) {
    await db.query('DELETE FROM islet_keys WHERE account_id = $1 AND id = $2', [record.id, key.id]);
    await insertKey(db, record.id, key);
  }
}

export function setRevoked(db: PoolClient, accountId: string, key: ApiKeyRecord): Promise<unknown> {
  return db.query('UPDATE islet_keys SET revoked_at = $3 WHERE account_id = $1 AND id = $2', [accountId, key.id, key.revokedAt]);
}

/** Keeps the later of each key's recorded last use and the given one. */
export function touchKeys(db: Pick<PoolClient, 'query'>, accountId: string, usedAt: Record<string, string>): Promise<unknown> {
  const ids = Object.keys(usedAt);
  return db.query(
    `UPDATE islet_keys k SET last_used_at = greatest(k.last_used_at, u.at)
     FROM unnest($2::text[], $3::timestamptz[]) AS u(id, at)
     WHERE k.account_id = $1 AND k.id = u.id`,
    [accountId, ids, ids.map((id) => usedAt[id])],
  );
}

export function setLimits(db: PoolClient, accountId: string, limits: AccountLimits): Promise<unknown> {
  return db.query('UPDATE islet_accounts SET limits = $2 WHERE id = $1', [accountId, Object.keys(limits).length ? JSON.stringify(limits) : null]);
}

function toKeyRecord(row: KeyRow): ApiKeyRecord {
  const key: ApiKeyRecord = { id: row.id, name: row.name, scope: row.scope, sha256: row.sha256, createdAt: iso(row.created_at) };
  if (row.revoked_at) key.revokedAt = iso(row.revoked_at);
  if (row.last_used_at) key.lastUsedAt = iso(row.last_used_at);
  return key;
}

export function iso(value: Date | string): string {
  return new Date(value).toISOString();
}
