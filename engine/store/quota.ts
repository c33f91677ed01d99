import { ServiceError } from '../errors';
import type { FunctionManifest } from '../manifest';
import type { TrafficShare } from './store';
import { isPruned } from './traffic';

/** What one account may keep: checked by every store as it publishes a version. */
export interface DeployQuota {
  maxFunctions: number;
  /** The unpacked bytes of every kept version of all the account's functions. */
  maxCodeBytes: number;
}

/** What an account keeps now. */
export interface AccountUsage {
  functions: number;
  versions: number;
  codeBytes: number;
}

/** What publishing a version changes in its account's usage. */
export interface PublishChange {
  /** The function had no version: it is one more function. */
  newFunction: boolean;
  /** The new version's unpacked bytes. */
  addedBytes: number;
  /** The bytes of the versions the publish prunes. */
  freedBytes: number;
}

/**
 * Refuses a publish that would take the account past its quota, with ERR_QUOTA_EXCEEDED naming the
 * limit and what the account holds. Every store runs it under a lock that orders its account's
 * deploys, so that deploys made at once cannot each pass on the same figures.
 */
export function checkQuota(account: string, usage: AccountUsage, change: PublishChange, quota: DeployQuota): void {
  if (change.newFunction && usage.functions >= quota.maxFunctions) throw functionsExceeded(account, usage.functions, quota.maxFunctions);
  const after = usage.codeBytes - change.freedBytes + change.addedBytes;
  if (change.addedBytes > change.freedBytes && after > quota.maxCodeBytes) {
    throw new ServiceError(
      'ERR_QUOTA_EXCEEDED',
      `account ${account} is over its quota of ${mb(quota.maxCodeBytes)} of code: it keeps ${mb(usage.codeBytes)} in ${usage.versions} version${usage.versions === 1 ? '' : 's'}, and this version (${mb(change.addedBytes)}) would take it to ${mb(after)}; remove functions or deploy a smaller bundle`,
      { limit: 'codeBytes', quota: quota.maxCodeBytes, usage: usage.codeBytes },
    );
  }
}

/** The refusal of one function too many (also made before the bundle is unpacked, from the catalog's count). */
export function functionsExceeded(account: string, functions: number, max: number): ServiceError {
  return new ServiceError('ERR_QUOTA_EXCEEDED', `account ${account} is at its quota of ${max} function${max === 1 ? '' : 's'} (it has ${functions}); remove one to deploy another`, {
    limit: 'functions',
    quota: max,
    usage: functions,
  });
}

/** The bytes of the kept versions a publish will prune (`kept`: the function's versions with their bytes). */
export function prunedBytes(kept: Pick<FunctionManifest, 'version' | 'bytes'>[], latest: number, keep: number, traffic: TrafficShare[]): number {
  return kept.filter((m) => isPruned(m.version, latest, keep, traffic)).reduce((sum, m) => sum + m.bytes, 0);
}

function mb(bytes: number): string {
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

/** ERR_QUOTA_EXCEEDED for an account whose queue is full. */
export function queueFull(account: string, bound: number): ServiceError {
  return new ServiceError('ERR_QUOTA_EXCEEDED', `account ${account} has ${bound} asynchronous invocations queued or running, its bound: wait for some to finish`, {
    limit: 'queuedInvocations',
    quota: bound,
    usage: bound,
  });
}
