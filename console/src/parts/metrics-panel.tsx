import { useMemo, useState } from 'preact/hooks';
import { api, functionPath, type Session } from '../api';
import { formatCount, formatMs, formatTime } from '../format';
import { useLoad } from '../use-load';
import { TimeChart, type ChartSeries } from './time-chart';
import { ErrorNote } from './feedback';
import type { FunctionStatsAnswer, HistoryPoint } from '../../../engine/wire';

/** The windows offered, and how often each is fetched again (about once a slot). */
const WINDOWS = [
  { value: '15m', label: '15 min', refreshMs: 5_000 },
  { value: '1h', label: '1 hour', refreshMs: 15_000 },
  { value: '24h', label: '24 hours', refreshMs: 60_000 },
];

export function statsPath(session: Session, name: string, window: string): string {
  return functionPath(session, name, `/stats?window=${window}`);
}

/** Calls and errors per second, and p50/p99 latency, over the chosen window, from the server's in-memory history. */
export function MetricsPanel({ session, name }: { session: Session; name: string }) {
  const [span, setSpan] = useState('15m');
  const choice = WINDOWS.find((w) => w.value === span)!;
  const stats = useLoad(() => api<FunctionStatsAnswer>(session.key, 'GET', statsPath(session, name, span)), [session.key, name, span], choice.refreshMs);
  const s = stats.data;

  const charts = useMemo(() => {
    if (!s) return undefined;
    const step = s.stepSec;
    const times = s.series.map((p) => p.t);
    const rates: ChartSeries[] = [
      { label: 'calls/s', color: '#0b57a4', values: s.series.map((p) => p.calls / step) },
      { label: 'errors/s', color: '#c0262d', values: s.series.map((p) => p.errors / step), dash: true },
    ];
    const latency: ChartSeries[] = [
      { label: 'p50', color: '#1d6b2f', values: s.series.map((p) => p.p50Ms) },
      { label: 'p99', color: '#8a4b00', values: s.series.map((p) => p.p99Ms), dash: true },
    ];
    return { times, rates, latency };
  }, [s]);

  return (
    <section aria-labelledby="metrics-title" class="card">
      <div class="title-row">
        <h2 id="metrics-title">Metrics</h2>
        <div role="group" aria-label="Time window" class="segmented">
          {WINDOWS.map((w) => (
            <button type="button" aria-pressed={w.value === span} onClick={() => setSpan(w.value)}>
              {w.label}
            </button>
          ))}
        </div>
      </div>
      <ErrorNote message={stats.error?.message} />
      {s && charts && (
        <>
          <dl class="figures" data-testid="figures">
            <Figure label="Calls" value={formatCount(s.calls)} note={`${s.ratePerSec.toFixed(2)}/s`} />
            <Figure label="Errors" value={formatCount(s.errors)} note={`${(s.errorRate * 100).toFixed(1)}%`} />
            <Figure label="p50" value={formatMs(s.p50Ms)} />
            <Figure label="p99" value={formatMs(s.p99Ms)} />
            <Figure label="Refused" value={formatCount(s.refused)} note="over limits" />
            <Figure label="In flight" value={formatCount(s.inFlight)} />
            <Figure label="Warm instances" value={formatCount(s.warmInstances)} note={`${(s.warmMemoryBytes / 1024 / 1024).toFixed(1)} MB`} />
            <Figure label="Cold starts" value={formatCount(s.coldStarts)} note="since start" />
          </dl>
          <div class="charts">
            <TimeChart title={`Calls and errors per second (${s.stepSec} s slots)`} times={charts.times} series={charts.rates} unit="/s" />
            <TimeChart title="Latency, p50 and p99" times={charts.times} series={charts.latency} unit="ms" />
          </div>
          <details>
            <summary>The charts' figures as a table</summary>
            <SeriesTable series={s.series} stepSec={s.stepSec} />
          </details>
        </>
      )}
    </section>
  );
}

function Figure({ label, value, note }: { label: string; value: string; note?: string }) {
  return (
    <div>
      <dt>{label}</dt>
      <dd>
        {value}
        {note && <span class="hint"> {note}</span>}
      </dd>
    </div>
  );
}

function SeriesTable({ series, stepSec }: { series: HistoryPoint[]; stepSec: number }) {
  const rows = series.filter((p) => p.calls > 0 || p.errors > 0 || p.refused > 0);
  if (rows.length === 0) return <p class="hint">No calls in this window.</p>;
  return (
    <table class="data compact">
      <thead>
        <tr>
          <th scope="col">Slot start</th>
          <th scope="col" class="num">
            Calls/s
          </th>
          <th scope="col" class="num">
            Errors/s
          </th>
          <th scope="col" class="num">
            p50
          </th>
          <th scope="col" class="num">
            p99
          </th>
        </tr>
      </thead>
      <tbody>
        {rows.map((p) => (
          <tr key={p.t}>
            <td>{formatTime(p.t).slice(0, 8)}</td>
            <td class="num">{(p.calls / stepSec).toFixed(2)}</td>
            <td class="num">{(p.errors / stepSec).toFixed(2)}</td>
            <td class="num">{formatMs(p.p50Ms)}</td>
            <td class="num">{formatMs(p.p99Ms)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
