import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { listFiles, materializeBundle, type BundleLimits, type BundleSource } from '../bundle';
import { ServiceError } from '../errors';
import type { FunctionManifest, FunctionSpec } from '../manifest';
import { fsyncPath, fsyncTree, listDirs, readJsonFile, writeFileAtomic } from './fsutil';

/**
 * Deployed functions on disk:
 *
 *   functions/<account>/<name>/current               the serving version id (replaced atomically)
 *   functions/<account>/<name>/versions/<id>/manifest.json
 *   functions/<account>/<name>/versions/<id>/code/…  the deployed files
 *
 * A deploy writes a new version aside, fsyncs it, renames it into place and only then switches
 * `current`; a crash at any point leaves the previous version serving. Staging and removed folders
 * (names starting with a dot) are cleaned at start-up.
 */
export class FunctionStore {
  private readonly root: string;
  private readonly index = new Map<string, Map<string, FunctionManifest>>();
  /** Versions kept besides the current one (for in-flight calls and inspection). */
  private readonly keepPrevious = 2;

  constructor(dataDir: string) {
    this.root = path.join(dataDir, 'functions');
  }

  async load(): Promise<void> {
    await fsp.mkdir(this.root, { recursive: true });
    for (const account of await listDirs(this.root)) {
      if (account.startsWith('.')) continue;
      const accountDir = path.join(this.root, account);
      for (const name of await listDirs(accountDir)) {
        if (name.startsWith('.')) {
          await fsp.rm(path.join(accountDir, name), { recursive: true, force: true });
          continue;
        }
        await this.cleanStaging(account, name);
        const manifest = await this.readCurrent(account, name);
        if (manifest) this.accountIndex(account).set(name, manifest);
      }
    }
  }

  get(account: string, name: string): FunctionManifest | undefined {
    return this.index.get(account)?.get(name);
  }

  list(account: string): FunctionManifest[] {
    return [...(this.index.get(account)?.values() ?? [])].sort((a, b) => a.name.localeCompare(b.name));
  }

  all(): FunctionManifest[] {
    return [...this.index.values()].flatMap((m) => [...m.values()]);
  }

  codeDir(manifest: Pick<FunctionManifest, 'account' | 'name' | 'version'>): string {
    return path.join(this.versionsDir(manifest.account, manifest.name), manifest.version, 'code');
  }

  /**
   * Writes a new version and makes it current. `check` runs on the unpacked code before anything is
   * published; if it throws, nothing changes and the previous version keeps serving.
   */
  async deploy(
    account: string,
    spec: FunctionSpec,
    source: BundleSource,
    bundleLimits: BundleLimits | undefined,
    check: (manifest: FunctionManifest, codeDir: string) => Promise<void>,
  ): Promise<FunctionManifest> {
    const versionsDir = this.versionsDir(account, spec.name);
    await fsp.mkdir(versionsDir, { recursive: true });
    const staging = path.join(versionsDir, `.staging-${randomBytes(6).toString('hex')}`);
    const stagingCode = path.join(staging, 'code');
    await fsp.mkdir(stagingCode, { recursive: true });
    try {
      await materializeBundle(source, stagingCode, bundleLimits);
      const files = await listFiles(stagingCode);
      if (!files.includes(spec.file)) {
        throw new ServiceError('ERR_INVALID_FUNCTION', `functions.${spec.name}.file: ${spec.file} is not in the deployed folder`, { key: 'file' });
      }
      const { hash, bytes } = await hashFiles(stagingCode, files);
      const version = `${Date.now().toString(36)}-${hash.slice(0, 10)}`;
      const manifest: FunctionManifest = {
        ...spec,
        account,
        version,
        deployedAt: new Date().toISOString(),
        contentHash: hash,
        files,
        bytes,
      };
      await check(manifest, stagingCode);
      await writeFileAtomic(path.join(staging, 'manifest.json'), JSON.stringify(manifest, null, 2) + '\n');
      await fsyncTree(staging);
      const finalDir = path.join(versionsDir, version);
      await fsp.rename(staging, finalDir);
      await fsyncPath(versionsDir);
      await writeFileAtomic(path.join(this.functionDir(account, spec.name), 'current'), version + '\n');
      this.accountIndex(account).set(spec.name, manifest);
      await this.prune(account, spec.name, version);
      return manifest;
    } finally {
      await fsp.rm(staging, { recursive: true, force: true });
    }
  }

  /** Removes a function: it disappears at once (one rename), its files are deleted after. */
  async remove(account: string, name: string): Promise<FunctionManifest | undefined> {
    const manifest = this.get(account, name);
    if (!manifest) return undefined;
    const dir = this.functionDir(account, name);
    const graveyard = path.join(this.root, account, `.removed-${name}-${randomBytes(4).toString('hex')}`);
    await fsp.rename(dir, graveyard);
    await fsyncPath(path.join(this.root, account));
    this.index.get(account)?.delete(name);
    await fsp.rm(graveyard, { recursive: true, force: true });
    return manifest;
  }

  private accountIndex(account: string): Map<string, FunctionManifest> {
    let map = this.index.get(account);
    if (!map) {
      map = new Map();
      this.index.set(account, map);
    }
    return map;
  }

  private functionDir(account: string, name: string): string {
    return path.join(this.root, account, name);
  }

  private versionsDir(account: string, name: string): string {
    return path.join(this.functionDir(account, name), 'versions');
  }

  private async readCurrent(account: string, name: string): Promise<FunctionManifest | undefined> {
    let version: string;
    try {
      version = (await fsp.readFile(path.join(this.functionDir(account, name), 'current'), 'utf8')).trim();
    } catch {
      return undefined;
    }
    return readJsonFile<FunctionManifest>(path.join(this.versionsDir(account, name), version, 'manifest.json'));
  }

  private async cleanStaging(account: string, name: string): Promise<void> {
    const versionsDir = this.versionsDir(account, name);
    for (const dir of await listDirs(versionsDir)) {
      if (dir.startsWith('.')) await fsp.rm(path.join(versionsDir, dir), { recursive: true, force: true });
    }
  }

  private async prune(account: string, name: string, current: string): Promise<void> {
    const versionsDir = this.versionsDir(account, name);
    const versions = (await listDirs(versionsDir)).filter((v) => !v.startsWith('.') && v !== current).sort();
    for (const old of versions.slice(0, Math.max(0, versions.length - this.keepPrevious))) {
      await fsp.rm(path.join(versionsDir, old), { recursive: true, force: true });
    }
  }
}

async function hashFiles(dir: string, files: string[]): Promise<{ hash: string; bytes: number }> {
  const hash = createHash('sha256');
  let bytes = 0;
  for (const file of files) {
    hash.update(file).update('\0');
    for await (const chunk of createReadStream(path.join(dir, file))) {
      hash.update(chunk as Buffer);
      bytes += (chunk as Buffer).length;
    }
    hash.update('\0');
  }
  return { hash: hash.digest('hex'), bytes };
}
