import type { KeyUseRecorder } from './admission';
import { ServiceError } from './errors';
import type { Catalog } from './store/catalog';
import type { AccountLimits, ApiKeyRecord, FunctionRecord, KeyScope, NewKey, Store, VersionList } from './store/store';
import { checkTraffic } from './store/traffic';
import { describeKey } from './describe';
import type { KeyDescription } from './wire';

/**
 * What an account's admin does besides deploying: versions (rollback, traffic splits, promotion)
 * and keys. Every change is one write to the store, so it holds on every process and node that
 * shares it.
 */
export class Management {
  constructor(
    private readonly store: Store,
    private readonly catalog: Catalog,
    private readonly keyUses: KeyUseRecorder,
  ) {}

  /** The versions a function keeps, newest first, with the split. */
  async versions(account: string, name: string): Promise<VersionList> {
    const list = await this.store.listVersions(account, name);
    if (!list) throw noFunction(account, name);
    return list;
  }

  /** Serves `traffic` (one or two versions whose percents add up to 100). */
  setTraffic(account: string, name: string, traffic: unknown): Promise<FunctionRecord> {
    this.existing(account, name);
    return this.store.setTraffic(account, name, checkTraffic(traffic));
  }

  /**
   * Sends every call to version `to`; without it, back to where the function was before: during a
   * split, the older of its two versions; otherwise the newest kept version older than the one serving.
   */
  async rollback(account: string, name: string, to?: unknown): Promise<FunctionRecord> {
    const list = await this.versions(account, name);
    let target: number;
    if (to !== undefined) {
      if (typeof to !== 'number' || !Number.isInteger(to) || to < 1) throw new ServiceError('ERR_BAD_REQUEST', `to must be a version number (1, 2, 3…), got ${JSON.stringify(to)}`);
      target = to;
    } else if (list.traffic.length > 1) {
      target = Math.min(...list.traffic.map((s) => s.version));
    } else {
      const serving = list.traffic[0]!.version;
      const earlier = list.versions.find((m) => m.version < serving);
      if (!earlier) throw new ServiceError('ERR_NOT_FOUND', `${name} has no version older than ${serving} to roll back to (kept: ${kept(list)})`);
      target = earlier.version;
    }
    return this.store.setTraffic(account, name, [{ version: target, percent: 100 }]);
  }

  /** Sends every call to the newest version. */
  async promote(account: string, name: string): Promise<FunctionRecord> {
    const list = await this.versions(account, name);
    const newest = list.versions[0];
    if (!newest) throw noFunction(account, name);
    return this.store.setTraffic(account, name, [{ version: newest.version, percent: 100 }]);
  }

  /** The account's keys in use (or all, revoked ones too), with their last use to the minute. */
  async keys(accountId: string, all = false): Promise<KeyDescription[]> {
    const record = await this.store.readAccount(accountId);
    if (!record) throw new ServiceError('ERR_NOT_FOUND', `no account ${accountId}`);
    // Uses not yet written count as now: they happened since the last write, at most a minute ago.
    const pending = this.keyUses.pending(accountId);
    const now = new Date().toISOString();
    return record.keys.filter((k) => all || !k.revokedAt).map((k) => describeKey(k, pending.has(k.id) ? now : k.lastUsedAt));
  }

  createKey(accountId: string, options: { name?: unknown; scope?: unknown }): Promise<NewKey> {
    if (options.name !== undefined && typeof options.name !== 'string') throw new ServiceError('ERR_BAD_REQUEST', 'name must be a string');
    return this.store.createKey(accountId, { name: options.name, scope: (options.scope ?? 'invoke') as KeyScope });
  }

  /** Revokes the key in use named `name` (refused for the last admin key). */
  async revokeKey(accountId: string, name: string): Promise<ApiKeyRecord> {
    const record = await this.store.readAccount(accountId);
    const key = record?.keys.find((k) => !k.revokedAt && k.name === name);
    if (!key) throw new ServiceError('ERR_NOT_FOUND', `account ${accountId} has no key named ${name} in use (see "islet keys list")`);
    return this.store.revokeKey(accountId, key.id);
  }

  /** Sets an account's own limits (an operator's action: `islet account limits`). */
  setAccountLimits(accountId: string, limits: AccountLimits): Promise<void> {
    for (const [field, value] of Object.entries(limits)) {
      if (value !== undefined && (typeof value !== 'number' || !Number.isFinite(value) || value < 0)) {
        throw new ServiceError('ERR_BAD_REQUEST', `${field} must be a number of 0 or more, got ${JSON.stringify(value)}`);
      }
    }
    return this.store.setAccountLimits(accountId, limits);
  }

  private existing(account: string, name: string): void {
    if (!this.catalog.function(account, name)) throw noFunction(account, name);
  }
}

function kept(list: VersionList): string {
  return list.versions
    .map((m) => m.version)
    .sort((a, b) => a - b)
    .join(', ');
}

function noFunction(account: string, name: string): ServiceError {
  return new ServiceError('ERR_NO_SUCH_FUNCTION', `no function ${name} in account ${account}`);
}
