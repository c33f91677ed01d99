import { randomBytes } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { containedPath } from '../../contained-path';
import { ServiceError } from '../../errors';
import type { FunctionManifest } from '../../manifest';
import { prunedBytes, type AccountUsage, type PublishChange } from '../quota';
import type { FunctionRecord, StagedVersion, TrafficAfter, TrafficShare, VersionList } from '../store';
import { isPruned, missingVersion } from '../traffic';
import { fsyncPath, fsyncTree, listDirs, readJsonFile, writeFileAtomic } from './fsutil';
import { migrateLegacy } from './legacy';

/** What a publish may be told besides the version: how many versions to keep, and a check of what it changes. */
export interface PublishOptions {
  /** Versions kept after it (default the store's). */
  keepVersions?: number;
  /** Runs before anything is written, with what the publish adds and frees; throws to refuse it. */
  admit?: (change: PublishChange) => Promise<void> | void;
}

/** `traffic.json`: which versions serve, and the highest number given so far. */
interface TrafficFile {
  latest: number;
  traffic: TrafficShare[];
}

/**
 * Deployed functions on disk:
 *
 *   functions/<account>/<name>/traffic.json            {latest, traffic} (replaced atomically)
 *   functions/<account>/<name>/versions/<n>/manifest.json
 *   functions/<account>/<name>/versions/<n>/code/…     the deployed files
 *
 * A deploy writes a new version aside (engine/store/pipeline.ts, in `stagingRoot`), then, under
 * the function's lock, numbers it, fsyncs it, renames it into place and only then replaces
 * `traffic.json` (`publish`): a crash at any point leaves the previous version serving. A version numbered above `latest` is one whose
 * publish crashed before that switch: it is not listed, and `clean` removes it at start-up with
 * the staging and removed folders (names starting with a dot).
 */
export class FunctionFiles {
  private readonly root: string;

  constructor(
    dataDir: string,
    /** The newest this many versions are kept, and every serving one besides. */
    private readonly keepVersions: number,
  ) {
    this.root = path.join(dataDir, 'functions');
  }

  /** Removes what crashed deploys and removals left behind. Only while no other process writes here. */
  async clean(): Promise<void> {
    for (const account of await listDirs(this.root)) {
      if (account.startsWith('.')) continue;
      const accountDir = containedPath(this.root, account);
      for (const name of await listDirs(accountDir)) {
        if (name.startsWith('.')) {
          await fsp.rm(containedPath(accountDir, name), { recursive: true, force: true });
          continue;
        }
        await migrateLegacy(this.functionDir(account, name));
        const latest = (await this.readTraffic(account, name))?.latest ?? 0;
        const versionsDir = this.versionsDir(account, name);
        for (const dir of await listDirs(versionsDir)) {
          if (dir.startsWith('.') || versionNumber(dir) > latest) await fsp.rm(containedPath(versionsDir, dir), { recursive: true, force: true });
        }
      }
    }
  }

  async loadAll(): Promise<FunctionRecord[]> {
    await fsp.mkdir(this.root, { recursive: true });
    const records: FunctionRecord[] = [];
    for (const account of await listDirs(this.root)) {
      if (account.startsWith('.')) continue;
      for (const name of await listDirs(containedPath(this.root, account))) {
        if (name.startsWith('.')) continue;
        const record = await this.read(account, name);
        if (record) records.push(record);
      }
    }
    return records;
  }

  async read(account: string, name: string): Promise<FunctionRecord | undefined> {
    const file = await this.readTraffic(account, name);
    if (!file) return undefined;
    const serving: FunctionManifest[] = [];
    for (const share of file.traffic) {
      const manifest = await this.readManifest(account, name, share.version);
      if (!manifest) return undefined;
      serving.push(manifest);
    }
    return { account, name, traffic: file.traffic, serving };
  }

  async versions(account: string, name: string): Promise<VersionList | undefined> {
    const file = await this.readTraffic(account, name);
    if (!file) return undefined;
    const numbers = (await listDirs(this.versionsDir(account, name))).map(versionNumber).filter((n) => n > 0 && n <= file.latest);
    const versions: FunctionManifest[] = [];
    for (const n of numbers.sort((a, b) => b - a)) {
      const manifest = await this.readManifest(account, name, n);
      if (manifest) versions.push(manifest);
    }
    return { latest: file.latest, traffic: file.traffic, versions };
  }

  codeDir(manifest: Pick<FunctionManifest, 'account' | 'name' | 'version'>): string {
    return path.join(containedPath(this.versionsDir(manifest.account, manifest.name), String(manifest.version)), 'code');
  }

  /** Where a deploy of the function stages its upload: its versions folder, so that publishing it is a rename. */
  async stagingRoot(account: string, name: string): Promise<string> {
    const versionsDir = this.versionsDir(account, name);
    await fsp.mkdir(versionsDir, { recursive: true });
    return versionsDir;
  }

  /**
   * Numbers a staged version, makes it durable, renames it into place, then switches
   * `traffic.json` to `traffic(version, current)`. Run under the function's lock.
   */
  async publish(staged: StagedVersion, traffic: TrafficAfter, options: PublishOptions = {}): Promise<FunctionManifest> {
    const { account, name } = staged.manifest;
    const keep = options.keepVersions ?? this.keepVersions;
    const current = await this.readTraffic(account, name);
    const versionsDir = this.versionsDir(account, name);
    const highest = Math.max(current?.latest ?? 0, ...(await listDirs(versionsDir)).map(versionNumber));
    const manifest: FunctionManifest = { ...staged.manifest, version: highest + 1 };
    const next = traffic(manifest.version, current?.traffic);
    if (options.admit) {
      const kept = current ? ((await this.versions(account, name))?.versions ?? []) : [];
      await options.admit({ newFunction: !current, addedBytes: manifest.bytes, freedBytes: prunedBytes(kept, manifest.version, keep, next) });
    }
    await writeFileAtomic(path.join(staged.dir, 'manifest.json'), JSON.stringify(manifest, null, 2) + '\n');
    await fsyncTree(staged.dir);
    await fsp.rename(staged.dir, containedPath(versionsDir, String(manifest.version)));
    await fsyncPath(versionsDir);
    await this.writeTraffic(account, name, { latest: manifest.version, traffic: next });
    await this.prune(account, name, manifest.version, next, keep);
    return manifest;
  }

  /** The account's functions, and its kept versions with their unpacked bytes. */
  async usage(account: string): Promise<AccountUsage> {
    const usage: AccountUsage = { functions: 0, versions: 0, codeBytes: 0 };
    for (const name of await listDirs(containedPath(this.root, account))) {
      if (name.startsWith('.')) continue;
      const list = await this.versions(account, name);
      if (!list) continue;
      usage.functions++;
      usage.versions += list.versions.length;
      for (const m of list.versions) usage.codeBytes += m.bytes;
    }
    return usage;
  }

  /**
   * Places a version under its own number (a copy from another store); a function that had no
   * version yet is served by it. Run under the function's lock.
   */
  async adopt(staged: StagedVersion, manifest: FunctionManifest): Promise<void> {
    const { account, name, version } = manifest;
    const versionsDir = this.versionsDir(account, name);
    if (!(await this.readManifest(account, name, version))) {
      await writeFileAtomic(path.join(staged.dir, 'manifest.json'), JSON.stringify(manifest, null, 2) + '\n');
      await fsyncTree(staged.dir);
      await fsp.rm(containedPath(versionsDir, String(version)), { recursive: true, force: true });
      await fsp.rename(staged.dir, containedPath(versionsDir, String(version)));
      await fsyncPath(versionsDir);
    }
    const current = await this.readTraffic(account, name);
    await this.writeTraffic(account, name, { latest: Math.max(current?.latest ?? 0, version), traffic: current?.traffic ?? [{ version, percent: 100 }] });
  }

  /** Serves other kept versions. Run under the function's lock. */
  async setTraffic(account: string, name: string, traffic: TrafficShare[]): Promise<void> {
    const file = await this.readTraffic(account, name);
    if (!file) throw new ServiceError('ERR_NO_SUCH_FUNCTION', `no function ${name} in account ${account}`);
    for (const { version } of traffic) {
      if (await this.readManifest(account, name, version)) continue;
      const kept = (await this.versions(account, name))?.versions.map((m) => m.version) ?? [];
      throw missingVersion(name, version, file.latest, kept);
    }
    await this.writeTraffic(account, name, { latest: file.latest, traffic });
  }

  /** Removes a function: it disappears at once (one rename), its files are deleted after. */
  async remove(account: string, name: string): Promise<FunctionManifest | undefined> {
    const record = await this.read(account, name);
    if (!record) return undefined;
    const graveyard = containedPath(this.root, account, `.removed-${name}-${randomBytes(4).toString('hex')}`);
    await fsp.rename(this.functionDir(account, name), graveyard);
    await fsyncPath(containedPath(this.root, account));
    await fsp.rm(graveyard, { recursive: true, force: true });
    return record.serving[0];
  }

  /** Every path of a function starts here: its account and name must be single names (contained-path.ts). */
  private functionDir(account: string, name: string): string {
    return containedPath(this.root, account, name);
  }

  private versionsDir(account: string, name: string): string {
    return path.join(this.functionDir(account, name), 'versions');
  }

  private readTraffic(account: string, name: string): Promise<TrafficFile | undefined> {
    return readJsonFile<TrafficFile>(path.join(this.functionDir(account, name), 'traffic.json'));
  }

  private writeTraffic(account: string, name: string, file: TrafficFile): Promise<void> {
    return writeFileAtomic(path.join(this.functionDir(account, name), 'traffic.json'), JSON.stringify(file) + '\n');
  }

  private readManifest(account: string, name: string, version: number): Promise<FunctionManifest | undefined> {
    return readJsonFile<FunctionManifest>(path.join(containedPath(this.versionsDir(account, name), String(version)), 'manifest.json'));
  }

  /** Deletes the versions that are neither serving nor among the newest `keep`. */
  private async prune(account: string, name: string, latest: number, traffic: TrafficShare[], keep: number): Promise<void> {
    const versionsDir = this.versionsDir(account, name);
    for (const dir of await listDirs(versionsDir)) {
      const n = versionNumber(dir);
      if (n > 0 && isPruned(n, latest, keep, traffic)) {
        await fsp.rm(containedPath(versionsDir, dir), { recursive: true, force: true });
      }
    }
  }
}

/** A version folder's number; 0 for any other folder (staging, removed). */
function versionNumber(dir: string): number {
  return /^[1-9]\d{0,9}$/.test(dir) ? Number(dir) : 0;
}
