import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { containedPath } from './contained-path';

/** The names in an account's log folder (`<root>/<account>`), none when it does not exist yet. */
export async function accountLogNames(root: string, account: string): Promise<string[]> {
  try {
    return await fsp.readdir(containedPath(root, account));
  } catch {
    return [];
  }
}

/** A file smaller than this is not worth a rotation of its own: an account's share is never cut finer. */
const MIN_FILE_BYTES = 16 * 1024;

/**
 * Holds each account's log files (those of one writing process) within that process's share of
 * the account's log quota. What the process's files of an account weigh is read from the disk the
 * first time and then counted as it writes; when it passes the share, the account's oldest files
 * of this process are deleted (never the one just written) until it fits again, counted anew from
 * the disk, so a removal or another process's cleaning cannot leave the count wrong for long.
 * Each file is kept under half the share, so that a file and the one rotated before it fit.
 */
export class AccountLogBytes {
  private readonly totals = new Map<string, number>();

  constructor(
    private readonly root: string,
    /** Whether a file name (in an account's folder) is one of this process's log files. */
    private readonly isOwn: (file: string) => boolean,
  ) {}

  /** The largest file an account's functions may have, for a share of `share` bytes. */
  static fileLimit(share: number, fileLimit: number): number {
    return Math.max(MIN_FILE_BYTES, Math.min(fileLimit, Math.floor(share / 2)));
  }

  /** This process's bytes of the account's logs. */
  async total(account: string): Promise<number> {
    const known = this.totals.get(account);
    if (known !== undefined) return known;
    const total = (await this.files(account)).reduce((sum, f) => sum + f.size, 0);
    this.totals.set(account, total);
    return total;
  }

  add(account: string, bytes: number): void {
    this.totals.set(account, (this.totals.get(account) ?? 0) + bytes);
  }

  /** Forgets an account's count (its files changed behind the count: a removal). */
  forget(account: string): void {
    this.totals.delete(account);
  }

  /**
   * Deletes the account's oldest files of this process, never `keep`, until they weigh at most
   * `share`; answers the files deleted.
   */
  async trim(account: string, share: number, keep: string): Promise<string[]> {
    const files = (await this.files(account)).sort((a, b) => a.mtimeMs - b.mtimeMs || (a.file.endsWith('.1') ? -1 : 1));
    let total = files.reduce((sum, f) => sum + f.size, 0);
    const deleted: string[] = [];
    for (const f of files) {
      if (total <= share) break;
      if (f.file === keep) continue;
      await fsp.rm(f.file, { force: true });
      total -= f.size;
      deleted.push(f.file);
    }
    this.totals.set(account, total);
    return deleted;
  }

  private async files(account: string): Promise<{ file: string; size: number; mtimeMs: number }[]> {
    const dir = containedPath(this.root, account);
    const names = await accountLogNames(this.root, account);
    const out: { file: string; size: number; mtimeMs: number }[] = [];
    for (const name of names.filter(this.isOwn)) {
      const file = path.join(dir, name);
      // Benign: a file deleted since the listing (rotated, removed) takes no room.
      const stat = await fsp.stat(file).catch(() => undefined);
      if (stat?.isFile()) out.push({ file, size: stat.size, mtimeMs: stat.mtimeMs });
    }
    return out;
  }
}
