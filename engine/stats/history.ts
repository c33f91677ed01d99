import type { HistoryPoint, HistoryWindow } from '../wire';
import type { FunctionStats, FunctionStatsTable } from './function-stats';
import { countEntries, HISTOGRAM_LAYOUT, mergeEntries, quantileUs } from './log-histogram';
import { SlotLog } from './slot-log';

/**
 * Recent history of every function's calls, in memory: refused calls, errors, the smallest and
 * largest duration and a log-linear histogram of the durations (log-histogram.ts) per time slot,
 * at three resolutions: 5 s over the last 15 minutes, 1 minute over the last hour, 5 minutes over
 * the last day. Everything adds up, so windows, and the histories of several processes, add up
 * exactly; percentiles are read from the summed histogram, within 3.125% of a duration a call had
 * and never past the largest one. A function's history is made when it is first sampled with
 * calls, holds the slots of the steps it was sampled in, and is dropped after a day without any
 * calls.
 *
 * A slot is a list of numbers: refused, errors, the smallest and the largest duration (µs, 0
 * without calls), then the histogram's entries (log-histogram.ts: a bucket and its count as one
 * number) sorted by bucket, only for buckets with calls.
 */

const REFUSED = 0;
const ERRORS = 1;
const MIN_US = 2;
const MAX_US = 3;
const ENTRIES_AT = 4;
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
const EMPTY_SLOT: ArrayLike<number> = Object.freeze([0, 0, 0, 0]);
const NOTHING: ArrayLike<number> = Object.freeze([]);

/** What one sample took from a function's counters. */
interface Sample {
  refused: number;
  errors: number;
  calls: number;
  minUs: number;
  maxUs: number;
  entries: number[];
}

/** Adds a sample into a slot's numbers (a new list). */
function addSample(slot: ArrayLike<number>, sample: Sample): Uint32Array {
  const calls = countCalls(slot);
  const out = [slot[REFUSED]! + sample.refused, slot[ERRORS]! + sample.errors, 0, 0];
  out[MIN_US] = calls === 0 ? sample.minUs : sample.calls === 0 ? slot[MIN_US]! : Math.min(slot[MIN_US]!, sample.minUs);
  out[MAX_US] = Math.max(slot[MAX_US]!, sample.maxUs);
  for (const n of mergeEntries(slot, ENTRIES_AT, sample.entries, 0)) out.push(n);
  return Uint32Array.from(out);
}

/** The calls of a slot: the sum of its histogram's counts. */
function countCalls(slot: ArrayLike<number>): number {
  return countEntries(slot, ENTRIES_AT);
}

/**
 * One resolution: the closed slots of the last `slots` steps, and the slot being filled. Closed
 * slots are kept only for the steps that were sampled (slot-log.ts), so that a function called for
 * a minute holds a minute of slots rather than a day's rings (about 44 KB per function when they
 * were rings).
 */
class Tier {
  private readonly closed = new SlotLog();
  open: ArrayLike<number> = EMPTY_SLOT;
  openStep = -1;

  constructor(readonly spec: TierSpec) {}

  /** Adds a sample at time `t`, closing the open slot first when `t` is in a later step. */
  add(t: number, sample: Sample): void {
    const step = Math.floor(t / this.spec.stepMs);
    if (step !== this.openStep) {
      // A quiet slot is kept with no numbers: it reads as zeros.
      if (this.openStep >= 0) this.closed.append(this.openStep, this.open === EMPTY_SLOT ? NOTHING : this.open);
      this.closed.dropThrough(step - this.spec.slots);
      this.open = EMPTY_SLOT;
      this.openStep = step;
    }
    if (sample.refused !== 0 || sample.errors !== 0 || sample.calls !== 0) this.open = addSample(this.open, sample);
  }

  /** The counts of a step (the open one included), or undefined when nothing was recorded in it. */
  slot(step: number): ArrayLike<number> | undefined {
    if (step === this.openStep) return this.open;
    const kept = this.closed.get(step);
    return kept === undefined ? undefined : kept.length === 0 ? EMPTY_SLOT : kept;
  }
}

class FunctionHistory {
  readonly tiers = TIERS.map((spec) => new Tier(spec));
  /** The refusals and errors as of the last sample. */
  lastRefused = 0;
  lastErrors = 0;
  lastActive = 0;
}
export class History {
  private readonly byFunction = new Map<FunctionStats, FunctionHistory>();
  private timer: NodeJS.Timeout | undefined;
  private readonly startedAt = Date.now();

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
      if (!history) {
        if (stats.calls === 0) continue;
        this.byFunction.set(stats, (history = new FunctionHistory()));
      }
      const recent = stats.recent;
      const sample: Sample = {
        refused: stats.refusedCalls - history.lastRefused,
        errors: stats.errors - history.lastErrors,
        calls: recent.calls,
        minUs: recent.minUs,
        maxUs: recent.maxUs,
        entries: recent.take(),
      };
      history.lastRefused = stats.refusedCalls;
      history.lastErrors = stats.errors;
      if (sample.refused !== 0 || sample.errors !== 0 || sample.calls !== 0) history.lastActive = now;
      for (const tier of history.tiers) tier.add(now, sample);
    }
    for (const [stats, history] of this.byFunction) {
      if (now - history.lastActive > DAY_MS || this.table.get(stats.account, stats.name) !== stats) this.byFunction.delete(stats);
    }
  }

  /**
   * The slots of the last `windowSec` seconds of a function, at the finest resolution that covers
   * them: what `summarize` turns into figures, and what the histories of several processes
   * (workers) add up as (`mergeWindows`).
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
      const slot = history?.tiers[tierIndex]?.slot(step);
      slots.push(slot ? Array.from(slot) : []);
    }
    return { layout: HISTOGRAM_LAYOUT, windowSec, stepMs: tier.stepMs, firstStep: lastStep - count + 1, slots, spanSec: Math.max(1, Math.min(windowSec, (now - this.startedAt) / 1000)) };
  }
}

/** A window's slots (an empty slot: nothing recorded), as one process or several together hold them. */
export interface RawWindow {
  /** The histogram's layout (log-histogram.ts): windows of another layout are not added up. */
  layout: string;
  windowSec: number;
  stepMs: number;
  firstStep: number;
  /** Per slot: refused, errors, smallest and largest duration (µs), then the histogram's entries. */
  slots: number[][];
  /** The seconds the counts cover (the window, or less when the process started within it). */
  spanSec: number;
}

/**
 * Several processes' windows of the same function and length as one (counts add up). A window of
 * another histogram layout (a worker of another islet version, during a rolling restart) is left out.
 */
export function mergeWindows(windows: RawWindow[]): RawWindow {
  const [first, ...rest] = windows;
  if (!first) throw new Error('no window to merge');
  const slots = first.slots.map((slot) => [...slot]);
  let spanSec = first.spanSec;
  for (const w of rest) {
    if (w.layout !== first.layout) continue;
    spanSec = Math.max(spanSec, w.spanSec);
    const shift = w.firstStep - first.firstStep;
    w.slots.forEach((slot, i) => {
      const into = slots[i + shift];
      if (!into || slot.length === 0) return;
      slots[i + shift] = into.length === 0 ? [...slot] : Array.from(addSlots(into, slot));
    });
  }
  return { ...first, slots, spanSec };
}

/** Two slots as one. */
function addSlots(a: ArrayLike<number>, b: ArrayLike<number>): Uint32Array {
  return addSample(a, { refused: b[REFUSED]!, errors: b[ERRORS]!, calls: countCalls(b), minUs: b[MIN_US]!, maxUs: b[MAX_US]!, entries: Array.prototype.slice.call(b, ENTRIES_AT) as number[] });
}

/** A window's figures: totals, rate, error rate, percentiles, and a point per slot. */
export function summarize(w: RawWindow): HistoryWindow {
  let total: ArrayLike<number> = EMPTY_SLOT;
  const series = w.slots.map((slot, i) => {
    if (slot.length) total = addSlots(total, slot);
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
  const calls = countCalls(slot);
  return { t, calls, errors: slot[ERRORS]!, refused: slot[REFUSED]!, p50Ms: quantileMs(slot, calls, 0.5), p99Ms: quantileMs(slot, calls, 0.99) };
}

/** The q-quantile of a slot's durations in ms (null without calls); see log-histogram.ts for its error. */
export function quantileMs(slot: ArrayLike<number>, calls: number, q: number): number | null {
  const us = quantileUs(slot, ENTRIES_AT, calls, slot[MIN_US]!, slot[MAX_US]!, q);
  return us === undefined ? null : us / 1000;
}
