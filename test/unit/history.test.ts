import t from 'tap';
import { FunctionStatsTable } from '../../engine/stats/function-stats';
import { History, summarize } from '../../engine/stats/history';
import type { FunctionManifest } from '../../engine/manifest';

// The in-memory history behind `islet stats` and the console's charts, driven with explicit times.
const MINUTE = 60_000;
const manifest = { account: 'acct', name: 'fn', version: 1 } as unknown as FunctionManifest;

const setUp = () => {
  const table = new FunctionStatsTable();
  const stats = table.of(manifest);
  return { history: new History(table), stats };
};

t.test('calls land in the slot of their sample; quiet slots read as zero, not as missing', async (t) => {
  const { history, stats } = setUp();
  const t0 = 1_000 * MINUTE;
  history.sample(t0); // nothing yet: no history is made
  for (let i = 0; i < 10; i++) stats.record(200, undefined, 800);
  stats.record(500, 'ERR_FUNCTION_FAILED', 1_500);
  history.sample(t0 + 5_000);
  history.sample(t0 + 10_000); // a quiet step
  for (let i = 0; i < 4; i++) stats.record(200, undefined, 800);
  history.sample(t0 + 15_000);
  const raw = history.window(stats, 60, t0 + 15_000);
  const rawAt = (at: number) => raw.slots[(at - raw.firstStep * raw.stepMs) / raw.stepMs]!;
  t.ok(rawAt(t0 + 10_000).length > 0, 'a sampled quiet slot is recorded (as zeros)');
  t.equal(rawAt(t0 - 5_000).length, 0, 'a slot before the first call is not');
  const w = summarize(raw);
  t.equal(w.calls, 15);
  t.equal(w.errors, 1);
  const byTime = new Map(w.series.map((p) => [p.t, p]));
  t.equal(byTime.get(t0 + 5_000)?.calls, 11, 'the first burst in its 5 s slot');
  t.equal(byTime.get(t0 + 10_000)?.calls, 0, 'the quiet slot counts zero calls');
  t.equal(byTime.get(t0 + 15_000)?.calls, 4, 'the open slot is read too');
  t.equal(byTime.get(t0 - 5_000)?.calls, 0, 'before the first call: nothing');
  t.equal(byTime.get(t0 - 5_000)?.p50Ms, null);
});

t.test('slots older than a tier keeps fall out of it; the coarser tiers still hold them', async (t) => {
  const { history, stats } = setUp();
  const t0 = 2_000 * MINUTE;
  stats.record(200, undefined, 800);
  history.sample(t0);
  history.sample(t0 + 5_000);
  // 20 minutes of quiet samples: the 5 s tier keeps 15 minutes.
  for (let at = t0 + 10_000; at <= t0 + 20 * MINUTE; at += 5_000) history.sample(at);
  const now = t0 + 20 * MINUTE;
  t.equal(summarize(history.window(stats, 15 * 60, now)).calls, 0, 'the 15-minute window no longer has the call');
  t.equal(summarize(history.window(stats, 60 * 60, now)).calls, 1, 'the hour window (1-minute slots) has it');
  t.equal(summarize(history.window(stats, 24 * 3600, now)).calls, 1, 'and the day window');
});

// Issue 26, item 2: percentiles are durations calls had, never past the largest one.
t.test('calls that all time out at 10 s read p50 and p99 of 10 s, not 20 s and 29.6 s', async (t) => {
  const t0 = 3_000 * MINUTE;
  const { history, stats } = setUp();
  history.sample(t0);
  for (let i = 0; i < 40; i++) stats.record(504, 'ERR_TIMEOUT', 10_000_000 + i * 250);
  const w = summarize(history.window(stats, 300, t0 + 5_000));
  t.equal(w.calls, 40);
  t.ok(w.p50Ms! >= 10_000 && w.p50Ms! <= 10_010, `p50 ${w.p50Ms} ms`);
  t.ok(w.p99Ms! >= 10_000 && w.p99Ms! <= 10_010, `p99 ${w.p99Ms} ms`);
  t.ok(w.p99Ms! <= 10_009.75, 'never past the longest call (10,009.75 ms)');
  // And 3 s timeouts, which read p50 3.75 s before.
  const three = setUp();
  three.history.sample(t0);
  for (let i = 0; i < 10; i++) three.stats.record(504, 'ERR_TIMEOUT', 3_000_400);
  const w3 = summarize(three.history.window(three.stats, 300, t0 + 5_000));
  t.equal(w3.p50Ms, 3000.4, 'every call took 3,000.4 ms: so does the median');
  t.equal(w3.p99Ms, 3000.4);
});
