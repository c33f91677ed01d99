import type { FunctionFigures } from '../../engine/api';
import { ServiceError } from '../../engine/errors';
import { mergeWindows, summarize } from '../../engine/stats/history';
import type { FunctionStatsAnswer } from '../../engine/wire';
import type { Routes } from './common';

const UNITS: Record<string, number> = { s: 1, m: 60, h: 3600 };
const MAX_WINDOW_SEC = 86_400;

/**
 * A function's recent figures: calls, errors, refusals, rate and p50/p99 over a window (`?window=`
 * 30s to 24h, default 5m), a series of them per slot (5 s up to 15 minutes, 1 minute up to an
 * hour, 5 minutes up to a day), and what is happening now (calls in flight, warm instances).
 * With workers, every worker's counts are added up.
 */
export function addStatsRoute(r: Routes): void {
  const { engine } = r;
  r.account('get', '/v2/accounts/:account/functions/:function/stats', 'admin', async ({ account, name, query }) => {
    engine.existing(account, name);
    if (!engine.countsMetrics) throw new ServiceError('ERR_NOT_FOUND', 'this server counts no metrics (it was started with --no-metrics)');
    const windowSec = parseWindow(query.get('window') ?? '5m');
    const own = engine.recentFigures(account, name, windowSec)!;
    const others = r.peers ? await r.peers.gather<PeerStats>('stats', { account, name, windowSec }) : [];
    const all = [own, ...others.filter((o): o is PeerStats => o !== undefined && o !== null)];
    const body: FunctionStatsAnswer = {
      name,
      ...summarize(mergeWindows(all.map((o) => o.window))),
      inFlight: sum(all, (o) => o.inFlight),
      coldStarts: sum(all, (o) => o.coldStarts),
      warmInstances: sum(all, (o) => o.warmInstances),
      warmMemoryBytes: Math.round(sum(all, (o) => o.warmMb) * 1024 * 1024),
    };
    return { status: 200, body };
  });
}

function parseWindow(text: string): number {
  const m = /^(\d+)([smh]?)$/.exec(text.trim());
  const seconds = m ? Number(m[1]) * UNITS[m[2] || 's']! : NaN;
  if (!(seconds >= 30 && seconds <= MAX_WINDOW_SEC)) throw new ServiceError('ERR_BAD_REQUEST', `window ${JSON.stringify(text)}: expected 30s to 24h, such as 5m or 1h`);
  return seconds;
}

/** One process's part of a function's figures. */
export type PeerStats = FunctionFigures;

function sum<T>(list: T[], pick: (item: T) => number): number {
  return list.reduce((n, item) => n + pick(item), 0);
}
