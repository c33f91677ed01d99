import type { ErrorCode } from '../errors';
import { STATUS_OF } from '../errors';
import type { FunctionManifest } from '../manifest';
import { DurationRecorder } from './log-histogram';

/** Upper bounds of the duration histogram's buckets, in seconds (then +Inf). */
export const DURATION_BOUNDS_S = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
const BOUNDS_US = DURATION_BOUNDS_S.map((s) => s * 1e6);
/** Buckets of the histogram: one per bound, and +Inf. */
export const BUCKET_COUNT = DURATION_BOUNDS_S.length + 1;

export const ERROR_CODES = Object.keys(STATUS_OF) as ErrorCode[];
const CODE_INDEX = new Map(ERROR_CODES.map((code, i) => [code, i]));

/**
 * What the engine counts per function (all its versions together), allocated once per function and
 * updated in place on every call: no allocation on the call path, except the first time a status
 * is seen.
 */
export class FunctionStats {
  /** Calls admitted and not yet answered (the per-function in-flight bound reads it). */
  inflight = 0;
  /** Cold starts: instances created for calls (shared first calls count once). */
  coldStarts = 0;
  /** HTTP statuses seen and how many calls answered each (parallel arrays, in order of first sight). */
  readonly statuses: number[] = [];
  readonly statusCounts: number[] = [];
  /** Calls answered with each error code, by ERROR_CODES index. */
  readonly codes = new Float64Array(ERROR_CODES.length);
  /**
   * Calls per duration bucket (admission to response, cold start included), and their sum in µs:
   * Prometheus's fixed buckets, for /metrics.
   */
  readonly buckets = new Float64Array(BUCKET_COUNT);
  /** The durations since the history last sampled them, in a log-linear histogram (the percentiles of `islet stats`). */
  readonly recent = new DurationRecorder();
  durationSumUs = 0;
  /** Calls that ran and failed (any error code). */
  errors = 0;
  /** Calls refused before they ran (413, 429, 503). */
  refusedCalls = 0;
  /** Streamed answers' times to their first byte and to their end (made at the first one: most functions never stream). */
  stream: StreamStats | undefined;

  constructor(
    readonly account: string,
    readonly name: string,
  ) {}

  /** Counts one answered call: its status, its error code if any, and its duration. */
  record(status: number, code: ErrorCode | undefined, durationUs: number): void {
    this.countStatus(status);
    if (code !== undefined) {
      this.codes[CODE_INDEX.get(code)!]!++;
      this.errors++;
    }
    this.buckets[bucketOf(durationUs)]!++;
    this.durationSumUs += durationUs;
    this.recent.record(durationUs);
  }

  /** Counts a streamed answer's times (µs from the handler's start) to its first byte, if one came, and to its end. */
  recordStream(firstByteUs: number | undefined, endUs: number): void {
    const stream = (this.stream ??= new StreamStats());
    if (firstByteUs !== undefined) {
      stream.firstByte[bucketOf(firstByteUs)]!++;
      stream.firstByteSumUs += firstByteUs;
    }
    stream.end[bucketOf(endUs)]!++;
    stream.endSumUs += endUs;
  }

  /** Counts a call refused after its function was found (429, 503, 413): a status and a code, no duration. */
  refused(status: number, code: ErrorCode): void {
    this.countStatus(status);
    this.codes[CODE_INDEX.get(code)!]!++;
    this.refusedCalls++;
  }

  /** Calls answered so far (every status). */
  get calls(): number {
    let n = 0;
    for (const c of this.statusCounts) n += c;
    return n;
  }

  private countStatus(status: number): void {
    const i = this.statuses.indexOf(status);
    if (i >= 0) this.statusCounts[i]!++;
    else {
      this.statuses.push(status);
      this.statusCounts.push(1);
    }
  }
}

/** A function's streamed answers: Prometheus's buckets (DURATION_BOUNDS_S) of their times to the first byte and to the end. */
export class StreamStats {
  readonly firstByte = new Float64Array(BUCKET_COUNT);
  firstByteSumUs = 0;
  readonly end = new Float64Array(BUCKET_COUNT);
  endSumUs = 0;
}

/** The bucket of DURATION_BOUNDS_S that `us` falls in (the last: +Inf). */
function bucketOf(us: number): number {
  let i = 0;
  while (i < BOUNDS_US.length && us > BOUNDS_US[i]!) i++;
  return i;
}

/** The stats of every function that has been called, found by manifest on the call path. */
export class FunctionStatsTable {
  private readonly byKey = new Map<string, FunctionStats>();

  constructor(
    /** Whether a function still exists (the stats of removed ones are dropped by `prune`). */
    private readonly exists: (account: string, name: string) => boolean = () => true,
  ) {}
  /** Per manifest object: one WeakMap lookup per call (its versions share one FunctionStats). */
  private readonly byManifest = new WeakMap<FunctionManifest, FunctionStats>();

  of(manifest: FunctionManifest): FunctionStats {
    let stats = this.byManifest.get(manifest);
    if (stats === undefined) {
      const key = `${manifest.account}/${manifest.name}`;
      stats = this.byKey.get(key);
      if (stats === undefined) this.byKey.set(key, (stats = new FunctionStats(manifest.account, manifest.name)));
      this.byManifest.set(manifest, stats);
    }
    return stats;
  }

  get(account: string, name: string): FunctionStats | undefined {
    return this.byKey.get(`${account}/${name}`);
  }

  all(): IterableIterator<FunctionStats> {
    return this.byKey.values();
  }

  /** Forgets removed functions (once no call of theirs is in flight). */
  prune(): void {
    for (const [key, stats] of this.byKey) if (stats.inflight === 0 && !this.exists(stats.account, stats.name)) this.byKey.delete(key);
  }
}
