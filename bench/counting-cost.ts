/**
 * What counting metrics adds to each call on the HTTP thread, in µs, measured in this process: the
 * observers the engine runs with metrics on (the call's log line and its counters) against those it
 * runs with them off (the log line alone), over the same stream of calls. The bench divides it by
 * the hello's CPU per request. Comparing two servers' rates cannot resolve a few percent on a
 * 2-core machine that also runs the load: rounds of one server differ by up to 20%.
 */
import type { LogStore } from '../engine/logs';
import type { FunctionManifest } from '../engine/manifest';
import { logObserver, metricsObserver, observers, type CallObserver } from '../engine/observer';
import { FunctionStats } from '../engine/stats/function-stats';

const MANIFEST = { account: 'bench', name: 'hello', version: 1 } as FunctionManifest;
/** Written nowhere: both variants build the same log line, which is all that matters here. */
const DISCARD = { appendLine: () => undefined } as unknown as LogStore;

function timeCalls(observer: CallObserver, calls: number): number {
  const stats = new FunctionStats('bench', 'hello');
  const started = process.hrtime.bigint();
  for (let i = 0; i < calls; i++) {
    // Durations across the histogram's first buckets; one call in 500 answers 500.
    const failed = i % 500 === 0;
    observer.callEnded(stats, MANIFEST, 'req', 'GET', failed ? 500 : 200, undefined, 40 + (i % 9) * 60, 150 + (i % 7) * 120);
  }
  return Number(process.hrtime.bigint() - started) / 1000 / calls;
}

/** The median over alternating rounds of what the metrics observer adds per call, µs (0 at least). */
export function countingCostUs(rounds = 7, calls = 300_000): number {
  const on = observers(logObserver(DISCARD), metricsObserver());
  const off = logObserver(DISCARD);
  // Warmed up first, so that both are optimized before they are timed.
  timeCalls(on, calls);
  timeCalls(off, calls);
  const added: number[] = [];
  for (let round = 0; round < rounds; round++) {
    const [a, b] = round % 2 === 0 ? [on, off] : [off, on];
    const first = timeCalls(a, calls);
    const second = timeCalls(b, calls);
    added.push(a === on ? first - second : second - first);
  }
  added.sort((x, y) => x - y);
  return Math.max(0, added[Math.floor(added.length / 2)]!);
}
