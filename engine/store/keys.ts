import { hash, randomBytes } from 'node:crypto';
import { ServiceError } from '../errors';
import type { AccountRecord, ApiKeyRecord, KeyScope } from './store';

const KEY_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;
export const KEY_SCOPES: readonly KeyScope[] = ['admin', 'invoke'];

const ACCOUNT_ID = /^[a-z0-9]{16}$/;

export function isAccountId(value: string): boolean {
  return ACCOUNT_ID.test(value);
}

export function isKeyName(value: string): boolean {
  return KEY_NAME.test(value);
}

export function newAccountId(): string {
  return randomBytes(8).toString('hex');
}

/** The SHA-256 digest of a key, as the catalog compares it. */
export function keyDigest(apiKey: string): Buffer {
  return hash('sha256', apiKey, 'buffer');
}

/** A new key and the record to store for it (its digest, never the key). */
export function newKey(name: string | undefined, scope: KeyScope = 'admin'): { apiKey: string; key: ApiKeyRecord } {
  const apiKey = `isk_${randomBytes(32).toString('base64url')}`;
  const id = randomBytes(4).toString('hex');
  return { apiKey, key: { id, name: name ?? id, scope, sha256: keyDigest(apiKey).toString('hex'), createdAt: new Date().toISOString() } };
}

/**
 * The key a new key would be, checked against the account's keys (every store does the same):
 * a valid name and scope, and a name no key in use holds.
 */
export function newKeyFor(record: AccountRecord, name: string | undefined, scope: unknown = 'admin'): { apiKey: string; key: ApiKeyRecord } {
  if (name !== undefined && !isKeyName(name)) {
    throw new ServiceError('ERR_BAD_REQUEST', `invalid key name ${JSON.stringify(name)}: use 1-64 characters of A-Z a-z 0-9 _ . -, starting with a letter or digit`);
  }
  if (!KEY_SCOPES.includes(scope as KeyScope)) throw new ServiceError('ERR_BAD_REQUEST', `invalid key scope ${JSON.stringify(scope)}: expected admin or invoke`);
  if (name !== undefined && record.keys.some((k) => !k.revokedAt && k.name === name)) {
    throw new ServiceError('ERR_CONFLICT', `account ${record.id} already has a key named ${name} (revoke it first, or choose another name)`);
  }
  return newKey(name, scope as KeyScope);
}

/** Marks a key revoked in its account's record; the last admin key in use is refused. */
export function revokeIn(record: AccountRecord, keyId: string): ApiKeyRecord {
  const key = record.keys.find((k) => k.id === keyId);
  if (!key) throw new ServiceError('ERR_NOT_FOUND', `no key ${keyId} in account ${record.id}`);
  if (!key.revokedAt && key.scope === 'admin' && !record.keys.some((k) => k !== key && !k.revokedAt && k.scope === 'admin')) {
    throw new ServiceError('ERR_CONFLICT', `key ${key.name} is the last admin key of account ${record.id}: create another admin key first ("islet keys create --scope admin")`);
  }
  key.revokedAt ??= new Date().toISOString();
  return key;
}

/** Keeps the later of each key's recorded last use and `usedAt`'s. */
export function touchIn(record: AccountRecord, usedAt: Record<string, string>): void {
  for (const key of record.keys) {
    const at = usedAt[key.id];
    if (at && (!key.lastUsedAt || key.lastUsedAt < at)) key.lastUsedAt = at;
  }
}

/** Fills what records written before keys had names and scopes lack: such a key is its account's admin key. */
export function normalizeAccount(record: AccountRecord): AccountRecord {
  return { ...record, keys: (record.keys ?? []).map((k) => ({ ...k, name: k.name ?? k.id, scope: k.scope ?? 'admin' })) };
}
