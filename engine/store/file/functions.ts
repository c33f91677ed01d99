import { randomBytes } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { materializeBundle, type BundleLimits, type BundleSource } from '../../bundle';
import type { FunctionManifest, FunctionSpec } from '../../manifest';
import type { FunctionRecord } from '../store';
import { describeVersion } from '../version';
import { fsyncPath, fsyncTree, listDirs, readJsonFile, writeFileAtomic } from './fsutil';

/** A version unpacked aside, not yet published. */
export interface StagedVersion {
  manifest: FunctionManifest;
  /** The unpacked files (where the deploy check loads them). */
  codeDir: string;
  /** The staging folder; removed by `discard` whatever happened. */
  dir: string;
}

/**
 * Deployed functions on disk:
 *
 *   functions/<account>/<name>/current               the serving version id (replaced atomically)
 *   functions/<account>/<name>/versions/<id>/manifest.json
 *   functions/<account>/<name>/versions/<id>/code/…  the deployed files
 *
 * A deploy writes a new version aside (`stage`), fsyncs it, renames it into place and only then
 * switches `current` (`publish`); a crash at any point leaves the previous version serving. Staging
 * and removed folders (names starting with a dot) are cleaned by `clean`, at start-up.
 */
export class FunctionFiles {
  private readonly root: string;
  /** Versions kept besides the current one (for in-flight calls and inspection). */
  private readonly keepPrevious = 2;

  constructor(dataDir: string) {
    this.root = path.join(dataDir, 'functions');
  }

  /** Removes what crashed deploys and removals left behind. Only while no other process writes here. */
  async clean(): Promise<void> {
    for (const account of await listDirs(this.root)) {
      if (account.startsWith('.')) continue;
      const accountDir = path.join(this.root, account);
      for (const name of await listDirs(accountDir)) {
        if (name.startsWith('.')) {
          await fsp.rm(path.join(accountDir, name), { recursive: true, force: true });
          continue;
        }
        const versionsDir = this.versionsDir(account, name);
        for (const dir of await listDirs(versionsDir)) {
          if (dir.startsWith('.')) await fsp.rm(path.join(versionsDir, dir), { recursive: true, force: true });
        }
      }
    }
  }

  async loadAll(): Promise<FunctionRecord[]> {
    await fsp.mkdir(this.root, { recursive: true });
    const records: FunctionRecord[] = [];
    for (const account of await listDirs(this.root)) {
      if (account.startsWith('.')) continue;
      for (const name of await listDirs(path.join(this.root, account))) {
        if (name.startsWith('.')) continue;
        const record = await this.read(account, name);
        if (record) records.push(record);
      }
    }
    return records;
  }

  async read(account: string, name: string): Promise<FunctionRecord | undefined> {
    let version: string;
    try {
      version = (await fsp.readFile(path.join(this.functionDir(account, name), 'current'), 'utf8')).trim();
    } catch {
      return undefined;
    }
    const manifest = await readJsonFile<FunctionManifest>(path.join(this.versionsDir(account, name), version, 'manifest.json'));
    if (!manifest) return undefined;
    return { account, name, traffic: [{ version, percent: 100 }], serving: [manifest] };
  }

  codeDir(manifest: Pick<FunctionManifest, 'account' | 'name' | 'version'>): string {
    return path.join(this.versionsDir(manifest.account, manifest.name), manifest.version, 'code');
  }

  /** Unpacks a bundle aside and describes it as a new version. Publishes nothing. */
  async stage(account: string, spec: FunctionSpec, source: BundleSource, limits: BundleLimits | undefined): Promise<StagedVersion> {
    const versionsDir = this.versionsDir(account, spec.name);
    await fsp.mkdir(versionsDir, { recursive: true });
    const dir = path.join(versionsDir, `.staging-${randomBytes(6).toString('hex')}`);
    const codeDir = path.join(dir, 'code');
    await fsp.mkdir(codeDir, { recursive: true });
    try {
      await materializeBundle(source, codeDir, limits);
      return { manifest: await describeVersion(codeDir, account, spec), codeDir, dir };
    } catch (err) {
      await this.discard({ dir });
      throw err;
    }
  }

  /** Makes a staged version durable, renames it into place, then switches `current` to it. */
  async publish(staged: StagedVersion): Promise<void> {
    const { manifest } = staged;
    await writeFileAtomic(path.join(staged.dir, 'manifest.json'), JSON.stringify(manifest, null, 2) + '\n');
    await fsyncTree(staged.dir);
    const versionsDir = this.versionsDir(manifest.account, manifest.name);
    await fsp.rename(staged.dir, path.join(versionsDir, manifest.version));
    await fsyncPath(versionsDir);
    await writeFileAtomic(path.join(this.functionDir(manifest.account, manifest.name), 'current'), manifest.version + '\n');
    await this.prune(manifest.account, manifest.name, manifest.version);
  }

  async discard(staged: Pick<StagedVersion, 'dir'>): Promise<void> {
    await fsp.rm(staged.dir, { recursive: true, force: true });
  }

  /** Removes a function: it disappears at once (one rename), its files are deleted after. */
  async remove(account: string, name: string): Promise<FunctionManifest | undefined> {
    const record = await this.read(account, name);
    if (!record) return undefined;
    const graveyard = path.join(this.root, account, `.removed-${name}-${randomBytes(4).toString('hex')}`);
    await fsp.rename(this.functionDir(account, name), graveyard);
    await fsyncPath(path.join(this.root, account));
    await fsp.rm(graveyard, { recursive: true, force: true });
    return record.serving[0];
  }

  private functionDir(account: string, name: string): string {
    return path.join(this.root, account, name);
  }

  private versionsDir(account: string, name: string): string {
    return path.join(this.functionDir(account, name), 'versions');
  }

  private async prune(account: string, name: string, current: string): Promise<void> {
    const versionsDir = this.versionsDir(account, name);
    const versions = (await listDirs(versionsDir)).filter((v) => !v.startsWith('.') && v !== current).sort();
    for (const old of versions.slice(0, Math.max(0, versions.length - this.keepPrevious))) {
      await fsp.rm(path.join(versionsDir, old), { recursive: true, force: true });
    }
  }
}
