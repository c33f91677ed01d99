import { ServiceError } from '../errors';
import type { TrafficShare } from './store';

/**
 * How calls are shared between the versions that serve a function, the same for every store: at
 * most two versions, percents from 0 to 100 (two decimals at most) adding up to 100. Calls are
 * sorted into 10,000 buckets, at random or by a sticky key.
 */

export const BUCKETS = 10_000;

function bad(message: string): ServiceError {
  return new ServiceError('ERR_BAD_REQUEST', message);
}

/** A percent as given to `deploy --percent`: a number from 0 to 100. */
export function checkPercent(value: unknown, what = 'percent'): number {
  const n = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isFinite(n) || n < 0 || n > 100) {
    throw bad(`${what} must be a number from 0 to 100, got ${JSON.stringify(value)}`);
  }
  if (Math.round(n * 100) !== n * 100) throw bad(`${what} ${n} has more than two decimals`);
  return n;
}

/** Checks a split as a user gives it; returns it without its 0% shares, sorted by version. */
export function checkTraffic(input: unknown): TrafficShare[] {
  if (!Array.isArray(input) || input.length === 0) throw bad('traffic must list one or two versions with their percents, e.g. [{"version": 4, "percent": 90}, {"version": 5, "percent": 10}]');
  if (input.length > 2) throw bad(`traffic can be shared by two versions at most, got ${input.length}`);
  const shares: TrafficShare[] = [];
  for (const entry of input as unknown[]) {
    const { version, percent } = (entry ?? {}) as Record<string, unknown>;
    if (typeof version !== 'number' || !Number.isInteger(version) || version < 1) throw bad(`traffic: version must be a version number (1, 2, 3…), got ${JSON.stringify(version)}`);
    if (shares.some((s) => s.version === version)) throw bad(`traffic: version ${version} is listed twice`);
    shares.push({ version, percent: checkPercent(percent, `traffic: the percent of version ${version}`) });
  }
  const total = shares.reduce((sum, s) => sum + s.percent * 100, 0) / 100;
  if (total !== 100) throw bad(`traffic: the percents add up to ${total}, not 100`);
  return shares.filter((s) => s.percent > 0).sort((a, b) => a.version - b.version);
}

/**
 * The split after deploying `version` with `percent` (undefined: all calls): the version that
 * served most calls until then (the newer on a tie) keeps the rest.
 */
export function trafficAfterDeploy(current: TrafficShare[] | undefined, version: number, percent: number | undefined): TrafficShare[] {
  const primary = current?.reduce((a, b) => (b.percent > a.percent || (b.percent === a.percent && b.version > a.version) ? b : a));
  if (percent === undefined || percent === 100 || !primary) return [{ version, percent: 100 }];
  if (percent === 0) return current!;
  return [
    { version: primary.version, percent: (10_000 - percent * 100) / 100 },
    { version, percent },
  ];
}

/**
 * A sticky key's bucket, the same on every process and node: FNV-1a over its UTF-16 code units,
 * then murmur3's finaliser, so that keys differing in their last characters (user-1, user-2…)
 * spread over all buckets.
 */
export function stickyBucket(key: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) {
    hash ^= key.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  hash ^= hash >>> 16;
  hash = Math.imul(hash, 0x85ebca6b);
  hash ^= hash >>> 13;
  hash = Math.imul(hash, 0xc2b2ae35);
  hash ^= hash >>> 16;
  return (hash >>> 0) % BUCKETS;
}

/** The newest this many versions of a function are kept by default, and every serving one besides. */
export const DEFAULT_KEEP_VERSIONS = 10;

/** Why a version asked for cannot serve: it never existed, or it was pruned (naming the kept ones). */
export function missingVersion(name: string, version: number, latest: number, kept: number[]): ServiceError {
  if (version > latest) return new ServiceError('ERR_NOT_FOUND', `${name} has no version ${version} (the latest is ${latest})`);
  return new ServiceError('ERR_NOT_FOUND', `version ${version} of ${name} was pruned (kept: ${[...kept].sort((a, b) => a - b).join(', ')})`);
}

/** Whether version `n` is pruned once `latest` exists: neither among the newest `keep` nor serving. */
export function isPruned(n: number, latest: number, keep: number, traffic: TrafficShare[]): boolean {
  return n <= latest - keep && !traffic.some((s) => s.version === n);
}
