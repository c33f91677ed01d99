import type { FunctionStatsAnswer } from '../../engine/wire';
import { apiRequest } from '../api';
import { requireAccount } from '../config';

const ms = (v: number | null) => (v === null ? '-' : `${v.toFixed(3)} ms`);

/** `islet stats <name> [--window 5m] [--json]`: rate, errors and latency over the last minutes. */
export async function stats(name: string, options: { window?: string; json?: boolean }, env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const c = requireAccount(env);
  const window = options.window ?? '5m';
  const s = await apiRequest<FunctionStatsAnswer>(c.url, 'GET', `/v2/accounts/${c.accountId}/functions/${encodeURIComponent(name)}/stats?window=${encodeURIComponent(window)}`, c.apiKey);
  if (options.json) return `${JSON.stringify(s, null, 2)}\n`;
  const rows: [string, string][] = [
    ['calls', `${s.calls} (${s.ratePerSec.toFixed(2)}/s)`],
    ['errors', `${s.errors} (${(s.errorRate * 100).toFixed(2)}%)`],
    ['refused', `${s.refused} (over a limit: 413, 429, 503)`],
    ['p50', ms(s.p50Ms)],
    ['p99', ms(s.p99Ms)],
    ['in flight', String(s.inFlight)],
    ['warm', `${s.warmInstances} instance${s.warmInstances === 1 ? '' : 's'} (${(s.warmMemoryBytes / 1048576).toFixed(1)} MB)`],
    ['cold starts', `${s.coldStarts} since the server started`],
  ];
  return `${name}, last ${window}:\n${rows.map(([k, v]) => `  ${k.padEnd(12)} ${v}`).join('\n')}\n`;
}
