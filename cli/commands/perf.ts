import { requireAccount } from '../config';
import { CliError } from '../errors';

export interface PerfOptions {
  number?: number;
  concurrency?: number;
  data?: string;
  env?: NodeJS.ProcessEnv;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

/** `islet perf <name> [-n N] [-c C]`: N calls over C keep-alive connections; rate and latency percentiles. */
export async function perf(name: string, options: PerfOptions = {}): Promise<string> {
  const c = requireAccount(options.env ?? process.env);
  const n = options.number ?? 5000;
  const concurrency = options.concurrency ?? 1;
  if (!Number.isInteger(n) || n < 1) throw new CliError('-n must be a whole number of calls');
  if (!Number.isInteger(concurrency) || concurrency < 1) throw new CliError('-c must be a whole number of connections');
  const url = `${c.url}/v2/run/${c.accountId}/${encodeURIComponent(name)}`;
  const init = { method: 'POST', headers: { 'X-Service-Api-Key': c.apiKey, 'Content-Type': 'application/json' }, body: options.data ?? '' };
  const latencies: number[] = [];
  let errors = 0;
  let started = 0;
  const begin = performance.now();
  await Promise.all(
    Array.from({ length: Math.min(concurrency, n) }, async () => {
      while (started < n) {
        started++;
        const t = performance.now();
        try {
          const res = await fetch(url, init);
          await res.arrayBuffer();
          if (res.status >= 400) errors++;
        } catch {
          errors++;
        }
        latencies.push(performance.now() - t);
      }
    }),
  );
  const totalMs = performance.now() - begin;
  latencies.sort((a, b) => a - b);
  const mean = latencies.reduce((a, b) => a + b, 0) / latencies.length;
  const f = (ms: number) => ms.toFixed(3);
  return [
    `Total time:   ${(totalMs / 1000).toFixed(3)} s`,
    `Invocations:  ${latencies.length}`,
    `Errors:       ${errors}`,
    `Rate:         ${((latencies.length / totalMs) * 1000).toFixed(1)} invocations/s`,
    `Latency (ms): mean ${f(mean)}  min ${f(latencies[0]!)}  max ${f(latencies[latencies.length - 1]!)}`,
    `              p50 ${f(percentile(latencies, 50))}  p90 ${f(percentile(latencies, 90))}  p95 ${f(percentile(latencies, 95))}  p99 ${f(percentile(latencies, 99))}`,
    '',
  ].join('\n');
}
