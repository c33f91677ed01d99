import { randomBytes } from 'node:crypto';
import { existsSync, promises as fsp } from 'node:fs';
import { materializeBundle } from '../../bundle';
import { containedPath } from '../../contained-path';

/**
 * A node's copy of the code it serves, unpacked once per content hash: `<dir>/<contentHash>/…`. A
 * folder appears whole (unpacked aside, then renamed), so one that exists is complete. The first
 * call of a version this node has not unpacked fetches its bundle once, however many calls arrive.
 */
export class CodeCache {
  private readonly pending = new Map<string, Promise<string>>();
  /** Bundles fetched from the store so far. */
  fetches = 0;

  constructor(
    private readonly dir: string,
    /** The bundle (tar.gz) of a content hash, from the store. */
    private readonly fetch: (hash: string) => Promise<Buffer>,
  ) {}

  get(hash: string): Promise<string> {
    const target = containedPath(this.dir, hash);
    if (existsSync(target)) return Promise.resolve(target);
    let pending = this.pending.get(hash);
    if (!pending) {
      pending = this.unpack(hash, target).finally(() => this.pending.delete(hash));
      this.pending.set(hash, pending);
    }
    return pending;
  }

  /** Moves a folder this node already has (the code it just deployed) into place. */
  async adopt(hash: string, codeDir: string): Promise<void> {
    const target = containedPath(this.dir, hash);
    if (existsSync(target)) return;
    await fsp.mkdir(this.dir, { recursive: true });
    await fsp.rename(codeDir, target).catch(async (err: NodeJS.ErrnoException) => {
      // Another process of this node put it there first (equal content), or another file system.
      if (existsSync(target)) return;
      if (err.code !== 'EXDEV') throw err;
      await fsp.cp(codeDir, target, { recursive: true });
    });
  }

  private async unpack(hash: string, target: string): Promise<string> {
    this.fetches++;
    const bundle = await this.fetch(hash);
    const aside = `${target}.tmp-${randomBytes(4).toString('hex')}`;
    await fsp.mkdir(aside, { recursive: true });
    try {
      await materializeBundle({ tarball: bundle }, aside);
      await fsp.rename(aside, target).catch((err: unknown) => {
        if (!existsSync(target)) throw err;
      });
    } finally {
      await fsp.rm(aside, { recursive: true, force: true });
    }
    return target;
  }
}
