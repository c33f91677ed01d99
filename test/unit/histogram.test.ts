import t from 'tap';
import type { FunctionManifest } from '../../engine/manifest';
import { FunctionStatsTable } from '../../engine/stats/function-stats';
import { History, mergeWindows, summarize } from '../../engine/stats/history';
import { bucketLowerUs, bucketOf, bucketWidthUs, BUCKETS, RELATIVE_ERROR } from '../../engine/stats/log-histogram';

// Issue 26, item 2: the percentiles of `islet stats`, the function list and the charts are
// durations calls had (within the histogram's stated error), never past the largest one.
const manifest = { account: 'acct', name: 'fn', version: 1 } as unknown as FunctionManifest;
const T0 = 5_000 * 60_000;

function setUp() {
  const table = new FunctionStatsTable();
  return { history: new History(table), stats: table.of(manifest) };
}

/** The nearest-rank q-quantile of `values`. */
function exact(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(1, Math.ceil(q * sorted.length)) - 1]!;
}

/** A deterministic stream of numbers in [0, 1). */
function random(seed: number): () => number {
  let x = seed;
  return () => ((x = Math.imul(x ^ (x >>> 15), 0x2c1b3c6d) + 0x6d2b79f5) >>> 0) / 2 ** 32;
}

t.test('buckets: exact below 16 µs, then 16 per power of two, each at most 1/16 of its start wide', async (t) => {
  t.equal(bucketOf(0), 0);
  t.equal(bucketOf(15.9), 15);
  t.equal(BUCKETS, 448, 'up to 2^31 µs');
  for (let b = 0; b < BUCKETS; b++) {
    const lower = bucketLowerUs(b);
    const width = bucketWidthUs(b);
    if (bucketOf(lower) !== b || bucketOf(lower + width - 1) !== b || (b + 1 < BUCKETS && bucketOf(lower + width) !== b + 1)) {
      t.fail(`bucket ${b}: [${lower}, ${lower + width}) does not map back`);
      return;
    }
    if (b >= 16 && width / lower > 1 / 16) t.fail(`bucket ${b} is ${width / lower} of its start wide`);
  }
  t.equal(RELATIVE_ERROR, 1 / 32);
});

t.test('p50 and p99 are within 3.125% (or 1 µs) of a duration a call had, never past the largest', async (t) => {
  const next = random(26);
  for (const [label, draw] of [
    ['log-uniform 50 µs to 5 s', () => 50 * Math.exp(next() * Math.log(100_000))],
    ['a warm function with a slow tail', () => (next() < 0.98 ? 120 + next() * 400 : 20_000 + next() * 2_000_000)],
    ['sub-16 µs calls', () => 1 + next() * 14],
  ] as const) {
    const { history, stats } = setUp();
    history.sample(T0);
    const all: number[] = [];
    // Over 6 samples (one slot of the hour tier): the table of each sample overflows into a full array for the wide cases.
    for (let s = 1; s <= 6; s++) {
      for (let i = 0; i < 500; i++) {
        const us = draw();
        all.push(us);
        stats.record(200, undefined, us);
      }
      history.sample(T0 + s * 5_000);
    }
    for (const windowSec of [60, 3600]) {
      const w = summarize(history.window(stats, windowSec, T0 + 6 * 5_000));
      t.equal(w.calls, all.length, `${label}: every call counted`);
      for (const [q, got] of [
        [0.5, w.p50Ms],
        [0.99, w.p99Ms],
      ] as const) {
        const want = exact(all, q) / 1000;
        const off = Math.abs(got! - want) / want;
        // Below 16 µs the buckets are 1 µs wide (and the slots keep whole µs): within 1 µs.
        t.ok(off <= RELATIVE_ERROR || Math.abs(got! - want) < 0.001, `${label}, ${windowSec} s window, p${q * 100}: ${got} ms against ${want} ms (${(off * 100).toFixed(2)}%)`);
        t.ok(got! <= Math.max(...all) / 1000, 'never past the largest');
        t.ok(got! > Math.min(...all) / 1000 - 0.001, 'nor under the smallest (to the µs)');
      }
    }
  }
});

t.test('the windows of several processes add up to the histogram of all their calls', async (t) => {
  const next = random(7);
  const a = setUp();
  const b = setUp();
  a.history.sample(T0);
  b.history.sample(T0);
  const all: number[] = [];
  for (let i = 0; i < 300; i++) {
    const us = 200 + next() * 800;
    all.push(us);
    a.stats.record(200, undefined, us);
  }
  for (let i = 0; i < 100; i++) {
    const us = 50_000 + next() * 50_000;
    all.push(us);
    b.stats.record(500, 'ERR_FUNCTION_FAILED', us);
  }
  const wa = a.history.window(a.stats, 60, T0 + 5_000);
  const wb = b.history.window(b.stats, 60, T0 + 5_000);
  const w = summarize(mergeWindows([wa, wb]));
  t.equal(w.calls, 400);
  t.equal(w.errors, 100);
  const p99 = exact(all, 0.99) / 1000;
  t.ok(Math.abs(w.p99Ms! - p99) / p99 <= RELATIVE_ERROR, `merged p99 ${w.p99Ms} against ${p99}`);
  t.ok(w.p99Ms! <= Math.max(...all) / 1000);
  const other = { ...wb, layout: 'another-layout' };
  t.equal(summarize(mergeWindows([wa, other])).calls, 300, 'a window of another layout is left out, not added up wrongly');
});
