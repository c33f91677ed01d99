import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import type { AccountLimits, Store } from '../../engine/store/store';
import { openStore } from '../../supervisor/compose';
import { CliError } from '../errors';

/** The store an offline admin command works on: a data directory, or a postgres:// URL. */
export interface StoreLocation {
  dataDir: string;
  storeUrl?: string;
}

async function withStore<T>(where: StoreLocation, work: (store: Store) => Promise<T>): Promise<T> {
  // A shared store's code cache is not needed here: a temporary folder, removed after.
  const cacheDir = where.storeUrl ? mkdtempSync(path.join(tmpdir(), 'islet-admin-')) : undefined;
  // Not `clean`: a server may be running on the data directory.
  const store = await openStore({ dataDir: path.resolve(where.dataDir), storeUrl: where.storeUrl, cacheDir, clean: false });
  try {
    return await work(store);
  } finally {
    await store.close();
    if (cacheDir) rmSync(cacheDir, { recursive: true, force: true });
  }
}

/** `islet account create [--data DIR | --store URL] [--json]`: offline; writes the account into the store. */
export async function createAccount(where: StoreLocation, json: boolean): Promise<string> {
  return withStore(where, async (store) => {
    const { accountId, apiKey } = await store.createAccount();
    if (json) return `${JSON.stringify({ accountId, apiKey })}\n`;
    const stored = where.storeUrl ? store.description : path.resolve(where.dataDir);
    return `Created account ${accountId}\nAPI key: ${apiKey}\n(the key is shown only now; only its hash is stored in ${stored})\n`;
  });
}

export interface LimitFlags {
  maxInflight?: string;
  rate?: string;
  burst?: string;
  maxFunctions?: string;
  maxCodeMb?: string;
  maxLogMb?: string;
  keepVersions?: string;
  reset?: boolean;
}

const MiB = 1024 * 1024;

/**
 * `islet account limits <id> [--max-inflight N] [--rate R] [--burst B] [--max-functions N] [--max-code-mb M]
 * [--max-log-mb L] [--keep-versions K] [--reset] [--data DIR | --store URL]`:
 * an operator's action, offline; sets the account's own limits and prints them.
 */
export async function accountLimits(where: StoreLocation, accountId: string | undefined, flags: LimitFlags): Promise<string> {
  if (!accountId) throw new CliError('account limits: name the account ("islet account limits <id> --rate 100")');
  return withStore(where, async (store) => {
    const record = await store.readAccount(accountId);
    if (!record) throw new CliError(`account limits: no account ${accountId} in ${store.description}`);
    const limits: AccountLimits = flags.reset ? {} : { ...record.limits };
    const set = (field: keyof AccountLimits, flag: string, text: string | undefined, unit = 1, min = 0) => {
      if (text === undefined) return;
      const n = Number(text);
      if (!Number.isFinite(n) || n < min) throw new CliError(`${flag} ${text}: expected a number of ${min} or more`);
      limits[field] = n * unit;
    };
    set('maxInFlight', '--max-inflight', flags.maxInflight);
    set('ratePerSec', '--rate', flags.rate);
    set('burst', '--burst', flags.burst);
    set('maxFunctions', '--max-functions', flags.maxFunctions);
    set('maxCodeBytes', '--max-code-mb', flags.maxCodeMb, MiB);
    set('maxLogBytes', '--max-log-mb', flags.maxLogMb, MiB);
    set('keepVersions', '--keep-versions', flags.keepVersions, 1, 1);
    await store.setAccountLimits(accountId, limits);
    const shown =
      Object.entries(limits)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ') || "the server's defaults";
    const applied = where.storeUrl ? 'every node applies them at once' : 'a running server applies them when it starts again';
    return `Account ${accountId}: ${shown} (${applied})\n`;
  });
}
