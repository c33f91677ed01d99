import type { LogEntry } from '../../engine/logs';
import { apiRequest } from '../api';
import { requireAccount } from '../config';
import { CliError } from '../errors';

const UNITS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/** `--since`: an ISO date, unix seconds, or a duration back from now (`30s`, `15m`, `2h`, `3d`). */
export function parseSince(value: string, now = Date.now()): number {
  const relative = /^(\d+)\s*([smhdw])$/.exec(value.trim());
  if (relative) return now - Number(relative[1]) * UNITS[relative[2]!]!;
  if (/^\d+(\.\d+)?$/.test(value.trim())) return Math.round(Number(value) * 1000);
  const date = Date.parse(value);
  if (!Number.isNaN(date)) return date;
  throw new CliError(`--since ${value}: expected an ISO date (2026-01-31T12:00:00Z), unix seconds, or a duration such as 30s, 15m, 2h, 3d`);
}

/** One entry as text; a failed call's error shows its code, then its stack indented below. */
export function formatEntry(e: LogEntry): string {
  const head = `${new Date(e.t).toISOString()} ${e.node ? `[${e.node}] ` : ''}${e.requestId || '-'} ${e.level.toUpperCase().padEnd(5)} ${e.code ? `${e.code} ` : ''}${e.message}`;
  if (!e.stack) return head;
  // The stack's first line repeats the message.
  const frames = e.stack.split('\n').filter((line) => /^\s+at /.test(line) || /^\s*File "/.test(line));
  return frames.length ? `${head}\n${frames.map((f) => `    ${f.trim()}`).join('\n')}` : head;
}

export interface LogsOptions {
  since?: string;
  tail?: boolean;
  /** Only this level and more severe ones (debug, log, info, call, warn, error). */
  level?: string;
  /** One JSON object per line. */
  json?: boolean;
  env?: NodeJS.ProcessEnv;
  write?: (text: string) => void;
  /** Poll interval for --tail, ms. */
  intervalMs?: number;
}

/** `islet logs <name> [--since <time>] [--tail] [--level L] [--json]`. */
export async function logs(name: string, options: LogsOptions = {}): Promise<void> {
  const c = requireAccount(options.env ?? process.env);
  const write = options.write ?? ((text: string) => process.stdout.write(text));
  let since = options.since ? parseSince(options.since) : undefined;
  const seenAtLast = new Set<string>();
  const fetchOnce = async (): Promise<void> => {
    const params = new URLSearchParams();
    if (since !== undefined) params.set('since', String(since));
    if (options.level !== undefined) params.set('level', options.level);
    const query = params.size ? `?${params}` : '';
    const { entries } = await apiRequest<{ entries: LogEntry[] }>(c.url, 'GET', `/v2/accounts/${c.accountId}/functions/${encodeURIComponent(name)}/logs${query}`, c.apiKey);
    for (const entry of entries) {
      const id = `${entry.t}|${entry.requestId}|${entry.level}|${entry.message}`;
      if (since !== undefined && entry.t === since && seenAtLast.has(id)) continue;
      if (since === undefined || entry.t > since) seenAtLast.clear();
      since = entry.t;
      seenAtLast.add(id);
      write(`${options.json ? JSON.stringify(entry) : formatEntry(entry)}\n`);
    }
  };
  await fetchOnce();
  if (!options.tail) return;
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, options.intervalMs ?? 1000));
    await fetchOnce();
  }
}
