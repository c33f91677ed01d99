import type { HistoryPoint, HistoryWindow } from '../wire';
import { BUCKET_COUNT, DURATION_BOUNDS_S, type FunctionStats, type FunctionStatsTable } from './function-stats';

/**
 * Recent history of every function's calls, in memory: refused calls, errors and the duration
 * histogram's buckets (the calls that ran are their sum) per time slot, at three resolutions: 5 s over the last 15 minutes, 1 minute
 * over the last hour, 5 minutes over the last day. Everything is a count, so windows, and the
 * histories of several processes, add up exactly; percentiles are estimated from the summed
 * buckets as Prometheus's histogram_quantile does. A function's history is made when it is first
 * sampled with calls, holds the slots of the steps it was sampled in, and is dropped after a day
 * without any calls.
 */

/** refused, errors, then the buckets. */
const FIELDS = 2 + BUCKET_COUNT;
const BUCKETS_AT = 2;
export const SAMPLE_MS = 5_000;

interface TierSpec {
  stepMs: number;
  slots: number;
}

const TIERS: TierSpec[] = [
  { stepMs: 5_000, slots: 180 },
  { stepMs: 60_000, slots: 60 },
  { stepMs: 300_000, slots: 288 },
];

const DAY_MS = 86_400_000;

/** A closed slot in which nothing happened (shared: most slots of most functions are this one). */
const EMPTY_SLOT: ArrayLike<number> = Object.freeze(new Array<number>(FIELDS).fill(0));

/**
 * One resolution: the closed slots of the last `slots` steps, and the slot being filled. Closed
 * slots are kept by step in a Map, oldest first, so that a function called for a minute holds a
 * minute of slots rather than a day's rings (about 44 KB per function when they were rings).
 */
class Tier {
  private readonly closed = new Map<number, ArrayLike<number>>();
  readonly open = new Float64Array(FIELDS);
  openStep = -1;

  constructor(readonly spec: TierSpec) {}

  /** Adds counts at time `t`, closing the open slot first when `t` is in a later step. */
  add(t: number, delta: Float64Array): void {
    const step = Math.floor(t / this.spec.stepMs);
    if (step !== this.openStep) {
      if (this.openStep >= 0) this.closed.set(this.openStep, this.open.some((n) => n !== 0) ? Uint32Array.from(this.open) : EMPTY_SLOT);
      for (const old of this.closed.keys()) {
        if (old > step - this.spec.slots) break;
        this.closed.delete(old);
      }
      this.open.fill(0);
      this.openStep = step;
    }
    for (let i = 0; i < FIELDS; i++) this.open[i]! += delta[i]!;
  }

  /** The counts of a step (the open one included), or undefined when nothing was recorded in it. */
  slot(step: number): ArrayLike<number> | undefined {
    if (step === this.openStep) return this.open;
    return this.closed.get(step);
  }
}

class FunctionHistory {
  readonly tiers = TIERS.map((spec) => new Tier(spec));
  /** The counters as of the last sample. */
  readonly last = new Float64Array(FIELDS);
  lastActive = 0;
}
export class History {
  private readonly byFunction = new Map<FunctionStats, FunctionHistory>();
  private timer: NodeJS.Timeout | undefined;
  private readonly startedAt = Date.now();
  /** The sample's deltas (reused). */
  private readonly delta = new Float64Array(FIELDS);

  constructor(private readonly table: FunctionStatsTable) {}

  start(): void {
    this.timer = setInterval(() => this.sample(), SAMPLE_MS);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }

  /** Takes what every function counted since the last sample into its history. */
  sample(now = Date.now()): void {
    this.table.prune();
    for (const stats of this.table.all()) {
      let history = this.byFunction.get(stats);
      const calls = stats.calls;
      if (!history) {
        if (calls === 0) continue;
        this.byFunction.set(stats, (history = new FunctionHistory()));
      }
      const current = this.delta;
      current[0] = stats.refusedCalls;
      current[1] = stats.errors;
      current.set(stats.buckets, BUCKETS_AT);
      let any = false;
      for (let i = 0; i < FIELDS; i++) {
        const d = current[i]! - history.last[i]!;
        history.last[i] = current[i]!;
        current[i] = d;
        if (d !== 0) any = true;
      }
      if (any) history.lastActive = now;
      for (const tier of history.tiers) tier.add(now, current);
    }
    for (const [stats, history] of this.byFunction) {
      if (now - history.lastActive > DAY_MS || this.table.get(stats.account, stats.name) !== stats) this.byFunction.delete(stats);
    }
  }

  /**
   * The counts of the last `windowSec` seconds of a function, slot by slot, at the finest
   * resolution that covers them: what `summarize` turns into figures, and what the histories of
   * several processes (workers) add up as (`mergeWindows`).
   */
  window(stats: FunctionStats | undefined, windowSec: number, now = Date.now()): RawWindow {
    this.sample(now);
    const tier = TIERS.find((t) => t.stepMs * t.slots >= windowSec * 1000) ?? TIERS[TIERS.length - 1]!;
    const tierIndex = TIERS.indexOf(tier);
    const history = stats && this.byFunction.get(stats);
    const lastStep = Math.floor(now / tier.stepMs);
    const count = Math.min(tier.slots, Math.ceil((windowSec * 1000) / tier.stepMs));
    const slots: number[][] = [];
    for (let step = lastStep - count + 1; step <= lastStep; step++) {
      const slot = history?.tiers[tierIndex]!.slot(step);
      slots.push(slot ? Array.from(slot) : []);
    }
    return { windowSec, stepMs: tier.stepMs, firstStep: lastStep - count + 1, slots, spanSec: Math.max(1, Math.min(windowSec, (now - this.startedAt) / 1000)) };
  }
}

/** A window's counts per slot (an empty slot: nothing recorded), as one process or several together hold them. */
export interface RawWindow {
  windowSec: number;
  stepMs: number;
  firstStep: number;
  /** Per slot: refused, errors, then the duration buckets. */
  slots: number[][];
  /** The seconds the counts cover (the window, or less when the process started within it). */
  spanSec: number;
}

/** Several processes' windows of the same function and length as one (counts add up). */
export function mergeWindows(windows: RawWindow[]): RawWindow {
  const [first, ...rest] = windows;
  if (!first) throw new Error('no window to merge');
  const slots = first.slots.map((slot) => [...slot]);
  let spanSec = first.spanSec;
  for (const w of rest) {
    spanSec = Math.max(spanSec, w.spanSec);
    const shift = w.firstStep - first.firstStep;
    w.slots.forEach((slot, i) => {
      const into = slots[i + shift];
      if (!into || slot.length === 0) return;
      if (into.length === 0) into.push(...new Array<number>(FIELDS).fill(0));
      for (let f = 0; f < FIELDS; f++) into[f]! += slot[f]!;
    });
  }
  return { ...first, slots, spanSec };
}

/** A window's figures: totals, rate, error rate, percentiles, and a point per slot. */
export function summarize(w: RawWindow): HistoryWindow {
  const total = new Float64Array(FIELDS);
  const series = w.slots.map((slot, i) => {
    for (let f = 0; f < slot.length; f++) total[f]! += slot[f]!;
    return point((w.firstStep + i) * w.stepMs, slot.length ? slot : undefined);
  });
  const summary = point(0, total);
  return {
    windowSec: w.windowSec,
    stepSec: w.stepMs / 1000,
    calls: summary.calls,
    errors: summary.errors,
    refused: summary.refused,
    ratePerSec: summary.calls / w.spanSec,
    errorRate: summary.calls === 0 ? 0 : summary.errors / summary.calls,
    p50Ms: summary.p50Ms,
    p99Ms: summary.p99Ms,
    series,
  };
}

function point(t: number, slot: ArrayLike<number> | undefined): HistoryPoint {
  if (!slot) return { t, calls: 0, errors: 0, refused: 0, p50Ms: null, p99Ms: null };
  let calls = 0;
  for (let i = BUCKETS_AT; i < FIELDS; i++) calls += slot[i]!;
  return { t, calls, errors: slot[1]!, refused: slot[0]!, p50Ms: quantileMs(slot, calls, 0.5), p99Ms: quantileMs(slot, calls, 0.99) };
}

/** The q-quantile of a slot's buckets in ms, interpolated within its bucket (null without calls). */
export function quantileMs(slot: ArrayLike<number>, calls: number, q: number): number | null {
  if (calls === 0) return null;
  const rank = q * calls;
  let seen = 0;
  for (let b = 0; b < BUCKET_COUNT; b++) {
    const n = slot[BUCKETS_AT + b]!;
    if (seen + n >= rank && n > 0) {
      if (b >= DURATION_BOUNDS_S.length) return DURATION_BOUNDS_S[DURATION_BOUNDS_S.length - 1]! * 1000;
      const lower = b === 0 ? 0 : DURATION_BOUNDS_S[b - 1]!;
      const upper = DURATION_BOUNDS_S[b]!;
      return (lower + ((upper - lower) * (rank - seen)) / n) * 1000;
    }
    seen += n;
  }
  return null;
}
