import { promises as fsp } from 'node:fs';
import { ServiceError } from '../../errors';
import type { FunctionManifest } from '../../manifest';
import { newAccountId, newKey, newKeyFor, revokeIn, touchIn } from '../keys';
import { checkQuota } from '../quota';
import type {
  AccountLimits,
  AccountRecord,
  ApiKeyRecord,
  CatalogSnapshot,
  FunctionRecord,
  KeyScope,
  NewAccount,
  NewKey,
  PublishOptions,
  StagedVersion,
  Store,
  StoreChange,
  StoreHealth,
  TrafficAfter,
  TrafficShare,
  VersionList,
} from '../store';
import { discardStaged, stageVersion } from '../pipeline';
import { checkTraffic, DEFAULT_KEEP_VERSIONS } from '../traffic';
import { AccountFiles } from './accounts';
import { LocalCoordinator, type Coordinator } from '../coordinator';
import { FunctionFiles } from './functions';
import { FileJobs } from './jobs';
import { localBroker } from './queue-broker';

export interface FileStoreOptions {
  /** How processes sharing the directory agree (default: this process alone). */
  coordinator?: Coordinator;
  /** Remove what crashed deploys left behind (only when no other process is using the directory). */
  clean?: boolean;
  /** The newest this many versions of a function are kept, and every serving one besides (default 10). */
  keepVersions?: number;
}

/**
 * The embedded store: a data directory on the local disk (layout in the README). Writes are
 * durable (fsync, atomic renames) before they are announced on the change feed.
 */
export class FileStore implements Store {
  readonly description: string;
  private readonly accounts: AccountFiles;
  private readonly functions: FunctionFiles;
  private readonly coordinator: Coordinator;
  private readonly listeners: ((change: StoreChange) => Promise<void>)[] = [];
  readonly jobs: FileJobs;
  /** One machine's store: no other node shares it. */
  readonly nodes = undefined;

  private constructor(
    readonly dataDir: string,
    options: FileStoreOptions,
  ) {
    this.description = `data directory ${dataDir}`;
    this.accounts = new AccountFiles(dataDir);
    this.functions = new FunctionFiles(dataDir, Math.max(1, options.keepVersions ?? DEFAULT_KEEP_VERSIONS));
    this.coordinator = options.coordinator ?? new LocalCoordinator();
    this.coordinator.subscribe((change) => this.tell(change));
    this.jobs = new FileJobs(dataDir, this.coordinator.queue ?? localBroker(dataDir), this.coordinator);
  }

  static async open(dataDir: string, options: FileStoreOptions = {}): Promise<FileStore> {
    await fsp.mkdir(dataDir, { recursive: true });
    const store = new FileStore(dataDir, options);
    if (options.clean ?? true) await store.functions.clean();
    return store;
  }

  async load(): Promise<CatalogSnapshot> {
    return { accounts: await this.accounts.loadAll(), functions: await this.functions.loadAll() };
  }

  watch(listener: (change: StoreChange) => Promise<void>): void {
    this.listeners.push(listener);
  }

  readAccount(accountId: string): Promise<AccountRecord | undefined> {
    return this.accounts.read(accountId);
  }

  readFunction(account: string, name: string): Promise<FunctionRecord | undefined> {
    return this.functions.read(account, name);
  }

  async createAccount(): Promise<NewAccount> {
    const { apiKey, key } = newKey('default', 'admin');
    const record: AccountRecord = { id: newAccountId(), createdAt: new Date().toISOString(), keys: [key] };
    await this.accounts.write(record);
    await this.changed({ kind: 'account', accountId: record.id });
    return { accountId: record.id, apiKey };
  }

  ensureFirstAccount(): Promise<NewAccount | undefined> {
    return this.coordinator.withLock('first-account', async () => ((await this.accounts.count()) > 0 ? undefined : this.createAccount()));
  }

  createKey(accountId: string, options: { name?: string; scope?: KeyScope } = {}): Promise<NewKey> {
    return this.updateAccount(accountId, (record) => {
      const made = newKeyFor(record, options.name, options.scope);
      record.keys.push(made.key);
      return made;
    });
  }

  revokeKey(accountId: string, keyId: string): Promise<ApiKeyRecord> {
    return this.updateAccount(accountId, (record) => revokeIn(record, keyId));
  }

  async touchKeys(accountId: string, usedAt: Record<string, string>): Promise<void> {
    await this.updateAccount(accountId, (record) => touchIn(record, usedAt), false);
  }

  async setAccountLimits(accountId: string, limits: AccountLimits): Promise<void> {
    await this.updateAccount(accountId, (record) => {
      record.limits = limits;
    });
  }

  async stagingRoot(account: string, name: string): Promise<string> {
    return this.functions.stagingRoot(account, name);
  }

  async publish(staged: StagedVersion, traffic: TrafficAfter, options: PublishOptions = {}): Promise<FunctionManifest> {
    const { account, name } = staged.manifest;
    const { quota } = options;
    const publish = () =>
      this.coordinator.withLock(functionLock(account, name), () =>
        this.functions.publish(staged, traffic, {
          keepVersions: options.keepVersions,
          admit: quota && (async (change) => checkQuota(account, await this.functions.usage(account), change, quota)),
        }),
      );
    // The account's lock orders its deploys, so that two at once cannot both pass on the same usage.
    const manifest = await (quota ? this.coordinator.withLock(`quota:${account}`, publish) : publish());
    await this.changed({ kind: 'function', account, name });
    return manifest;
  }

  listVersions(account: string, name: string): Promise<VersionList | undefined> {
    return this.functions.versions(account, name);
  }

  async setTraffic(account: string, name: string, traffic: TrafficShare[]): Promise<FunctionRecord> {
    const shares = checkTraffic(traffic);
    await this.coordinator.withLock(functionLock(account, name), () => this.functions.setTraffic(account, name, shares));
    await this.changed({ kind: 'function', account, name });
    const record = await this.functions.read(account, name);
    if (!record) throw new ServiceError('ERR_NO_SUCH_FUNCTION', `no function ${name} in account ${account}`);
    return record;
  }

  async remove(account: string, name: string): Promise<FunctionManifest | undefined> {
    const removed = await this.coordinator.withLock(functionLock(account, name), () => this.functions.remove(account, name));
    if (removed) await this.jobs.forgetSchedules(account, name);
    if (removed) await this.changed({ kind: 'function', account, name });
    return removed;
  }

  codeDir(manifest: FunctionManifest): Promise<string> {
    return Promise.resolve(this.functions.codeDir(manifest));
  }

  async importAccount(record: AccountRecord): Promise<void> {
    await this.coordinator.withLock(`account:${record.id}`, () => this.accounts.write(record));
    await this.changed({ kind: 'account', accountId: record.id });
  }

  async importVersion(manifest: FunctionManifest, codeDir: string): Promise<void> {
    const staged = await stageVersion(await this.stagingRoot(manifest.account, manifest.name), manifest.account, manifest, { dir: codeDir }, undefined, undefined);
    try {
      await this.coordinator.withLock(functionLock(manifest.account, manifest.name), () => this.functions.adopt(staged, manifest));
    } finally {
      await discardStaged(staged);
    }
    await this.changed({ kind: 'function', account: manifest.account, name: manifest.name });
  }

  health(): StoreHealth {
    return { kind: 'file', description: this.description, state: 'ok' };
  }

  close(): Promise<void> {
    return Promise.resolve();
  }

  /** Reads an account from disk, changes it and writes it back, under the account's lock; then announces it (unless `announce` is false). */
  private async updateAccount<T>(accountId: string, change: (record: AccountRecord) => T, announce = true): Promise<T> {
    const result = await this.coordinator.withLock(`account:${accountId}`, async () => {
      const record = await this.accounts.read(accountId);
      if (!record) throw new ServiceError('ERR_NOT_FOUND', `no account ${accountId}`);
      const out = change(record);
      await this.accounts.write(record);
      return out;
    });
    if (announce) await this.changed({ kind: 'account', accountId });
    return result;
  }

  /** Announces a durable change here and to the other processes; resolves when all have it. */
  private async changed(change: StoreChange): Promise<void> {
    await Promise.all([this.tell(change), this.coordinator.publish(change)]);
  }

  private async tell(change: StoreChange): Promise<void> {
    await Promise.all(this.listeners.map((listener) => listener(change)));
  }
}

function functionLock(account: string, name: string): string {
  return `function:${account}/${name}`;
}
