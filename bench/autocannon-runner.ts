/** Runs autocannon in its own process (the load must not share the measuring process) and prints a LoadResult. */
import autocannon from 'autocannon';
import type { LoadResult, LoadSpec } from './load';

const spec = JSON.parse(process.argv[2] ?? '{}') as LoadSpec;
autocannon(
  {
    url: spec.base,
    connections: spec.connections,
    duration: spec.durationSec,
    headers: spec.headers,
    requests: spec.paths.map((p) => ({ path: p, method: (spec.method ?? 'GET') as 'GET', body: spec.body })),
  },
  (err: Error | null, result: autocannon.Result) => {
    if (err) throw err;
    const out: LoadResult = {
      rps: result.requests.average,
      p50Ms: result.latency.p50,
      p99Ms: result.latency.p99,
      requests: result.requests.total,
      errors: result.errors + result.non2xx,
    };
    process.stdout.write(JSON.stringify(out));
  },
);
