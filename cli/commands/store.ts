import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import type { Store } from '../../engine/store/store';
import { openStore } from '../../supervisor/compose';
import { CliError } from '../errors';

/** A data directory path, or a postgres:// URL. */
async function open(where: string, cacheDir: string): Promise<Store> {
  const isUrl = /^postgres(ql)?:\/\//.test(where);
  return openStore({ dataDir: isUrl ? cacheDir : path.resolve(where), storeUrl: isUrl ? where : undefined, cacheDir, clean: false });
}

/**
 * `islet store copy --from <data-dir|postgres://…> --to <data-dir|postgres://…>`: accounts (key
 * digests and limits as they are), functions with their kept versions (numbers kept) and their
 * split, code included. Running it
 * again copies only what changed. A server on the target sees the copy at once on PostgreSQL, and
 * after a restart on a data directory.
 */
export async function copyStore(from: string | undefined, to: string | undefined): Promise<string> {
  if (!from || !to) throw new CliError('store copy: give --from and --to (a data directory or a postgres:// URL)');
  if (path.resolve(from) === path.resolve(to) || from === to) throw new CliError('store copy: --from and --to are the same store');
  const cacheDir = mkdtempSync(path.join(tmpdir(), 'islet-copy-'));
  let source: Store | undefined;
  let target: Store | undefined;
  try {
    source = await open(from, path.join(cacheDir, 'from'));
    target = await open(to, path.join(cacheDir, 'to'));
    const { accounts, functions } = await source.load();
    for (const account of accounts) await target.importAccount(account);
    let copied = 0;
    for (const fn of functions) {
      // Every kept version, under its own number, then the split the source serves.
      const kept = await source.listVersions(fn.account, fn.name);
      const there = new Set((await target.listVersions(fn.account, fn.name))?.versions.map((m) => m.version));
      for (const manifest of [...(kept?.versions ?? fn.serving)].reverse()) {
        if (there.has(manifest.version)) continue;
        await target.importVersion(manifest, await source.codeDir(manifest));
        copied++;
      }
      await target.setTraffic(fn.account, fn.name, fn.traffic);
    }
    return `Copied ${accounts.length} account${accounts.length === 1 ? '' : 's'} and ${functions.length} function${functions.length === 1 ? '' : 's'} (${copied} version${copied === 1 ? '' : 's'} new) from ${source.description} to ${target.description}\n`;
  } catch (err) {
    throw new CliError(`store copy: ${(err as Error).message}`);
  } finally {
    await source?.close();
    await target?.close();
    rmSync(cacheDir, { recursive: true, force: true });
  }
}
