import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { containedPath } from '../../contained-path';
import { isAccountId, normalizeAccount } from '../keys';
import type { AccountRecord } from '../store';
import { readJsonFile, writeFileAtomic } from './fsutil';

/**
 * Accounts on disk: `accounts/<id>.json` each, holding the account's key records (digests only),
 * replaced atomically (write aside, fsync, rename). Mode 0600.
 */
export class AccountFiles {
  private readonly dir: string;

  constructor(dataDir: string) {
    this.dir = path.join(dataDir, 'accounts');
  }

  async loadAll(): Promise<AccountRecord[]> {
    await fsp.mkdir(this.dir, { recursive: true });
    const records: AccountRecord[] = [];
    for (const name of await fsp.readdir(this.dir)) {
      if (!name.endsWith('.json') || name.startsWith('.')) continue;
      const record = await readJsonFile<AccountRecord>(path.join(this.dir, name));
      if (record && isAccountId(record.id)) records.push(normalizeAccount(record));
    }
    return records;
  }

  async count(): Promise<number> {
    try {
      return (await fsp.readdir(this.dir)).filter((name) => name.endsWith('.json') && !name.startsWith('.')).length;
    } catch {
      return 0;
    }
  }

  async read(accountId: string): Promise<AccountRecord | undefined> {
    if (!isAccountId(accountId)) return undefined;
    const record = await readJsonFile<AccountRecord>(containedPath(this.dir, `${accountId}.json`));
    return record && record.id === accountId ? normalizeAccount(record) : undefined;
  }

  async write(record: AccountRecord): Promise<void> {
    await fsp.mkdir(this.dir, { recursive: true });
    await writeFileAtomic(containedPath(this.dir, `${record.id}.json`), JSON.stringify(record, null, 2) + '\n', 0o600);
  }
}
