import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { hash, randomBytes, timingSafeEqual } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { readJsonFile, writeFileAtomic } from './fsutil';

/**
 * Accounts and their API keys. Only a SHA-256 digest of each key is stored: keys are 256 random
 * bits, so a fast hash is as safe here as a slow password hash and costs ~1 µs per request.
 */
export interface AccountRecord {
  id: string;
  createdAt: string;
  keys: { id: string; sha256: string; createdAt: string }[];
}

export interface NewAccount {
  accountId: string;
  apiKey: string;
}

const ACCOUNT_ID = /^[a-z0-9]{16}$/;

export function isAccountId(value: string): boolean {
  return ACCOUNT_ID.test(value);
}

function digest(key: string): Buffer {
  return hash('sha256', key, 'buffer');
}

export class AccountStore {
  private readonly dir: string;
  private readonly accounts = new Map<string, { record: AccountRecord; digests: Buffer[] }>();
  /**
   * Digests of keys that matched an account, by key: a warm call skips hashing its key again (~1 µs
   * of the main thread). A digest depends on the key alone, so an entry is never stale; a removed
   * key fails the comparison below like any other. Keys that matched nothing are not kept.
   */
  private readonly knownDigests = new LRUCache<string, Buffer>({ max: 1024 });

  constructor(dataDir: string) {
    this.dir = path.join(dataDir, 'accounts');
  }

  async load(): Promise<void> {
    await fsp.mkdir(this.dir, { recursive: true });
    for (const name of await fsp.readdir(this.dir)) {
      if (!name.endsWith('.json') || name.startsWith('.')) continue;
      const record = await readJsonFile<AccountRecord>(path.join(this.dir, name));
      if (record && isAccountId(record.id)) this.remember(record);
    }
  }

  get size(): number {
    return this.accounts.size;
  }

  has(accountId: string): boolean {
    return this.accounts.has(accountId);
  }

  list(): string[] {
    return [...this.accounts.keys()];
  }

  async create(): Promise<NewAccount> {
    const accountId = randomBytes(8).toString('hex');
    const record: AccountRecord = { id: accountId, createdAt: new Date().toISOString(), keys: [] };
    const apiKey = this.newKey(record);
    await this.save(record);
    this.remember(record);
    return { accountId, apiKey };
  }

  /** Adds a key to an account and returns it (the only time the key itself is seen). */
  async addKey(accountId: string): Promise<string> {
    const entry = this.accounts.get(accountId);
    if (!entry) throw new Error(`no account ${accountId}`);
    const record: AccountRecord = { ...entry.record, keys: [...entry.record.keys] };
    const apiKey = this.newKey(record);
    await this.save(record);
    this.remember(record);
    return apiKey;
  }

  /** True when `apiKey` is one of the account's keys; compared in constant time. */
  verify(accountId: string, apiKey: string): boolean {
    const entry = this.accounts.get(accountId);
    if (!entry) return false;
    const known = this.knownDigests.get(apiKey);
    const presented = known ?? digest(apiKey);
    let ok = false;
    for (const stored of entry.digests) ok = timingSafeEqual(stored, presented) || ok;
    if (ok && !known) this.knownDigests.set(apiKey, presented);
    return ok;
  }

  /** The account a key belongs to, if any (used by the management API's whoami). */
  accountOfKey(apiKey: string): string | undefined {
    for (const id of this.accounts.keys()) if (this.verify(id, apiKey)) return id;
    return undefined;
  }

  private newKey(record: AccountRecord): string {
    const apiKey = `isk_${randomBytes(32).toString('base64url')}`;
    record.keys.push({
      id: randomBytes(4).toString('hex'),
      sha256: digest(apiKey).toString('hex'),
      createdAt: new Date().toISOString(),
    });
    return apiKey;
  }

  private async save(record: AccountRecord): Promise<void> {
    await fsp.mkdir(this.dir, { recursive: true });
    await writeFileAtomic(path.join(this.dir, `${record.id}.json`), JSON.stringify(record, null, 2) + '\n', 0o600);
  }

  private remember(record: AccountRecord): void {
    this.accounts.set(record.id, { record, digests: record.keys.map((k) => Buffer.from(k.sha256, 'hex')) });
  }
}
