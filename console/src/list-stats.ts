import { useEffect, useState } from 'preact/hooks';
import { api, functionPath, type Session } from './api';

/** A function's figures over the last hour, as the list shows them. */
export interface HourFigures {
  calls: number;
  errors: number;
  p99Ms: number | null;
}

/** Requests in flight at once while the list's figures load (the server answers each from memory). */
const PARALLEL = 4;
const REFRESH_MS = 30_000;

/**
 * Each listed function's calls, errors and p99 over the last hour, from its stats route, loaded a
 * few at a time and again every 30 s. A function whose figures cannot be had (a server started
 * with --no-metrics) is simply absent from the map.
 */
export function useHourFigures(session: Session, names: string[] | undefined): Map<string, HourFigures> {
  const [figures, setFigures] = useState(() => new Map<string, HourFigures>());
  const joined = names?.join('\n') ?? '';
  useEffect(() => {
    if (!names || names.length === 0) return undefined;
    let cancelled = false;
    const load = async () => {
      const next = new Map<string, HourFigures>();
      const queue = [...names];
      const worker = async () => {
        for (let name = queue.shift(); name !== undefined; name = queue.shift()) {
          try {
            const s = await api<HourFigures>(session.key, 'GET', functionPath(session, name, '/stats?window=1h'));
            next.set(name, { calls: s.calls, errors: s.errors, p99Ms: s.p99Ms });
          } catch {
            // left out: the column shows a dash
          }
        }
      };
      await Promise.all(Array.from({ length: Math.min(PARALLEL, names.length) }, worker));
      if (!cancelled) setFigures(next);
    };
    void load();
    const timer = setInterval(() => void load(), REFRESH_MS);
    return () => {
      cancelled = true;
      clearInterval(timer);
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [session.key, joined]);
  return figures;
}
