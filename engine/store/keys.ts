import { hash, randomBytes } from 'node:crypto';
import type { AccountRecord, ApiKeyRecord, KeyScope } from './store';

const ACCOUNT_ID = /^[a-z0-9]{16}$/;

export function isAccountId(value: string): boolean {
  return ACCOUNT_ID.test(value);
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

/** Fills what records written before keys had names and scopes lack: such a key is its account's admin key. */
export function normalizeAccount(record: AccountRecord): AccountRecord {
  return { ...record, keys: (record.keys ?? []).map((k) => ({ ...k, name: k.name ?? k.id, scope: k.scope ?? 'admin' })) };
}
