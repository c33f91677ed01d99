/**
 * `npm run bench [-- --quick] [-- --compare old.json] [-- --tool wrk|autocannon]`
 *
 * Starts the islet server and the in-process baseline in their own processes, runs each scenario
 * with the same load generator, connections, duration and warm-up, and prints a table and the
 * targets; the figures go to bench/results/<timestamp>.json. See bench/README.md.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { Pool } from 'undici';
import { SERVER_V8_FLAGS } from '../engine/node-flags';
import { countingCostUs } from './counting-cost';
import { IO_TARGETS, runIoScenarios } from './io';
import { rssMb, startProcess } from './process';
import { pickTool, runLoad, type LoadResult, type LoadSpec, type LoadTool } from './load';
import { tenKilobyteJson } from './payloads';
import { queueThroughput, recordQueue } from './queue';
import { runClusterScenarios } from './cluster';
import { startSupervised, withCpu, type SupervisedServer } from './scale';
import { BENCH_FUNCTIONS, type BenchServerConfig } from './server';

interface Ready {
  url: string;
  accountId?: string;
  apiKey?: string;
  flood?: { accountId: string; apiKey: string };
}

type Figures = Record<string, number>;
/** A load without its host, connections and duration, which the run supplies. */
type Load = Omit<LoadSpec, 'base' | 'connections' | 'durationSec'>;

const ROOT = path.resolve(__dirname, '..', '..');

/** The median of each figure over rounds of the same load (errors are summed). */
function medianOf(rounds: LoadResult[]): LoadResult {
  const median = (pick: (r: LoadResult) => number) => percentile(rounds.map(pick), 50);
  const cpu = rounds[0]!.cpuUsPerRequest === undefined ? {} : { cpuUsPerRequest: median((r) => r.cpuUsPerRequest!) };
  return { rps: median((r) => r.rps), p50Ms: median((r) => r.p50Ms), p99Ms: median((r) => r.p99Ms), requests: median((r) => r.requests), errors: rounds.reduce((n, r) => n + r.errors, 0), ...cpu };
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

/** Calls per function before the 1,000-function scenario reads the server's RSS. */
const MANY_CALLS_PER_FUNCTION = 100;

/** Calls every path `rounds` times, round-robin, over 64 keep-alive connections; any answer but 200 fails the run. */
async function callEach(base: string, paths: string[], rounds: number, headers: Record<string, string>): Promise<void> {
  const client = new Pool(base, { connections: 64, pipelining: 1 });
  let next = 0;
  const total = paths.length * rounds;
  try {
    await Promise.all(
      Array.from({ length: 64 }, async () => {
        while (next < total) {
          const path = paths[next++ % paths.length]!;
          const res = await client.request({ method: 'GET', path, headers });
          await res.body.text();
          if (res.statusCode !== 200) throw new Error(`${path}: ${res.statusCode}`);
        }
      }),
    );
  } finally {
    await client.close();
  }
}

/**
 * Times calls one at a time, `gapMs` apart, on one keep-alive connection: the time from sending a
 * request to its last byte. undici's `request` is the client: `fetch` adds about 0.8 ms of its
 * own per call on the development machine, which is not the server's cost.
 */
async function timeCalls(base: string, accountId: string, apiKey: string, names: string[], gapMs: number): Promise<number[]> {
  const client = new Pool(base, { connections: 1 });
  const times: number[] = [];
  try {
    for (const name of names) {
      await new Promise((r) => setTimeout(r, gapMs));
      const started = performance.now();
      const res = await client.request({ method: 'GET', path: `/v2/run/${accountId}/${name}?name=cold`, headers: { 'X-Service-Api-Key': apiKey } });
      await res.body.text();
      if (res.statusCode !== 200) throw new Error(`${name}: ${res.statusCode}`);
      times.push(performance.now() - started);
    }
  } finally {
    await client.close();
  }
  return times;
}

/** The flooding account's rate bound, calls per second. */
const FLOOD_RATE = 1000;

/**
 * Calls the `split` function (version 2 serves 10%) 10,000 times over 16 connections and answers
 * the percent that version 2 answered (X-Service-Version); `sticky`: each call with a key of its own.
 */
async function splitShare(base: string, accountId: string, apiKey: string, sticky: boolean): Promise<number> {
  const client = new Pool(base, { connections: 16 });
  let next = 0;
  let second = 0;
  const worker = async () => {
    while (next < 10_000) {
      const i = next++;
      const headers: Record<string, string> = { 'X-Service-Api-Key': apiKey };
      if (sticky) headers['X-Service-Version-Key'] = `user-${i}`;
      const res = await client.request({ method: 'GET', path: `/v2/run/${accountId}/split`, headers });
      await res.body.text();
      if (res.statusCode !== 200) throw new Error(`split: ${res.statusCode}`);
      if (res.headers['x-service-version'] === '2') second++;
    }
  };
  try {
    await Promise.all(Array.from({ length: 16 }, worker));
  } finally {
    await client.close();
  }
  return second / 100;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { quick: { type: 'boolean', default: false }, compare: { type: 'string' }, tool: { type: 'string' }, 'no-python': { type: 'boolean', default: false }, out: { type: 'string' } },
  });
  const quick = Boolean(values.quick);
  const tool: LoadTool = pickTool(values.tool);
  const durationSec = quick ? 3 : 10;
  // The figures with ratio and p99 targets are the median of this many rounds (see bench/README.md).
  const rounds = quick ? 1 : 3;
  const warmupSec = quick ? 1 : 2;
  const connections = 64;
  const cacheDir = path.join(os.tmpdir(), 'islet-bench-cache');
  const none: BenchServerConfig = { core: false, coldFunctions: 0, manyFunctions: 0, pythonColdFunctions: 0, python: false, cacheDir };
  const serverConfig = {
    coldFunctions: quick ? 20 : 60,
    manyFunctions: quick ? 200 : 1000,
    pythonColdFunctions: quick ? 3 : 10,
    python: !values['no-python'],
  };
  console.log(
    `islet bench: ${quick ? 'quick' : 'full'} run, load tool ${tool}, c=${connections}, ${durationSec} s per figure after ${warmupSec} s warm-up; hello and Python hello: median of ${rounds} round${rounds > 1 ? 's' : ''}`,
  );
  console.log(`machine: ${os.cpus().length} cores (${os.cpus()[0]?.model ?? '?'}), Node ${process.version}`);
  console.log('starting the islet server and deploying the scenario functions...');
  const startIslet = (config: Partial<BenchServerConfig>) => startProcess<Ready>('server.js', { BENCH_CONFIG: JSON.stringify({ ...none, ...config }) }, SERVER_V8_FLAGS);
  const metricsToken = 'bench-metrics-token';
  let islet = await startIslet({ core: true, coldFunctions: serverConfig.coldFunctions, metricsToken, floodRate: FLOOD_RATE });
  let { url, accountId, apiKey } = islet.ready as Required<Ready>;
  const flood = islet.ready.flood!;
  const baseline = await startProcess<Ready>('baseline.js', { BENCH_KEY: apiKey });
  // The metrics A/B's other server: deployed as the first one is, so that the two differ only in
  // what they count (it was a server with hello alone, which differs in more than that).
  const quiet = await startIslet({ core: true, coldFunctions: serverConfig.coldFunctions, floodRate: FLOOD_RATE, metrics: false });
  /** Replaces the islet server by a fresh one deployed with `config` (a scenario group of its own). */
  const switchServer = async (config: Partial<BenchServerConfig>) => {
    islet.child.kill('SIGKILL');
    // The token too: scenario 4 reads the warm-cache figures from /healthz, which shows them with it only.
    islet = await startIslet({ metricsToken, ...config });
    ({ url, accountId, apiKey } = islet.ready as Required<Ready>);
    headers = { 'X-Service-Api-Key': apiKey };
  };
  const figures: Figures = {};
  let headers = { 'X-Service-Api-Key': apiKey };
  /** A load after its warm-up; with `pids`, also the CPU per request of those processes over it. */
  const run = (origin: string, spec: Load, conns = connections, pids?: () => number[], seconds = durationSec): Promise<LoadResult> =>
    runLoad(tool, { ...spec, base: origin, connections: conns, durationSec: warmupSec }).then(() => {
      const load = () => runLoad(tool, { ...spec, base: origin, connections: conns, durationSec: seconds });
      return pids ? withCpu(pids, load) : load();
    });
  const roundFigures: Record<string, LoadResult[]> = {};
  /** Runs `loads` (one per host) for `rounds` rounds, alternating the order (ABBA), and records the medians. */
  const runRounds = async (loads: [prefix: string, origin: string, spec: Load, pids?: () => number[]][]) => {
    for (let round = 0; round < rounds; round++) {
      for (const [prefix, origin, spec, pids] of round % 2 === 0 ? loads : [...loads].reverse()) {
        const r = await run(origin, spec, connections, pids);
        (roundFigures[prefix] ??= []).push(r);
        const cpu = r.cpuUsPerRequest === undefined ? '' : `, ${r.cpuUsPerRequest.toFixed(1)} us CPU per request`;
        if (rounds > 1) console.log(`   round ${round + 1} ${prefix}: ${Math.round(r.rps)} rps, p50 ${r.p50Ms} ms, p99 ${r.p99Ms} ms${cpu}`);
      }
    }
    for (const [prefix] of loads) record(prefix, medianOf(roundFigures[prefix]!));
  };
  const record = (prefix: string, r: LoadResult) => {
    figures[`${prefix}_rps`] = r.rps;
    figures[`${prefix}_p50_ms`] = r.p50Ms;
    figures[`${prefix}_p99_ms`] = r.p99Ms;
    figures[`${prefix}_errors`] = r.errors;
    if (r.cpuUsPerRequest !== undefined) figures[`${prefix}_cpu_us`] = r.cpuUsPerRequest;
  };
  const cores = os.availableParallelism();
  const supervised: SupervisedServer[] = [];
  const body10k = tenKilobyteJson();
  const queueCount = quick ? 300 : 1000;

  try {
    console.log(`1. warm node8 hello (GET ?name=): the baseline, islet in one process (and again counting no metrics), and islet serve with 1 and ${cores} workers`);
    // A scrape first, so the metrics' process collectors (event loop, GC) run during the load, as on a scraped server.
    const scrape = await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${metricsToken}` } });
    if (scrape.status !== 200) throw new Error(`/metrics answered ${scrape.status}`);
    await scrape.text();
    const hello = { paths: [`/v2/run/${accountId}/hello?name=abc`], headers };
    const quietReady = quiet.ready as Required<Ready>;
    const helloOf = (s: SupervisedServer) => ({ paths: [`/v2/run/${s.accountId}/hello?name=abc`], headers: { 'X-Service-Api-Key': s.apiKey } });
    for (const n of [1, cores]) {
      const s = await startSupervised(n);
      await s.deploy('hello', 'hello', BENCH_FUNCTIONS);
      supervised.push(s);
    }
    const [one, workersN] = supervised as [SupervisedServer, SupervisedServer];
    const [onePids, workersNPids] = [await one.pids(), await workersN.pids()];
    await runRounds([
      ['baseline_hello', baseline.ready.url, hello, () => [baseline.child.pid!]],
      ['hello', url, hello, () => [islet.child.pid!]],
      ['workers1_hello', one.url, helloOf(one), () => onePids],
      ['workers_n_hello', workersN.url, helloOf(workersN), () => workersNPids],
      ['hello_no_metrics', quietReady.url, { paths: [`/v2/run/${quietReady.accountId}/hello?name=abc`], headers: { 'X-Service-Api-Key': quietReady.apiKey } }, () => [quiet.child.pid!]],
    ]);
    quiet.child.kill('SIGKILL');
    figures.hello_ratio = figures.hello_rps! / figures.baseline_hello_rps!;
    // The A/B of two servers, for the record; the target reads the cost measured directly.
    figures.metrics_cost_ab = 1 - figures.hello_rps! / figures.hello_no_metrics_rps!;
    figures.metrics_counting_us = countingCostUs();
    figures.metrics_cost = figures.metrics_counting_us / figures.hello_cpu_us!;
    figures.workers_n = cores;
    figures.workers1_vs_inprocess_rps = figures.workers1_hello_rps! / figures.hello_rps!;
    figures.workers1_cpu_ratio = figures.workers1_hello_cpu_us! / figures.hello_cpu_us!;
    figures.workers_n_cpu_ratio = figures.workers_n_hello_cpu_us! / figures.hello_cpu_us!;
    figures.hello_cpu_vs_baseline = figures.hello_cpu_us! / figures.baseline_hello_cpu_us!;
    one.stop();

    console.log(`8. rolling restart (SIGHUP) of ${cores} workers under the warm hello load`);
    // SIGHUP 2 s into the timed load (after its warm-up).
    const restart = setTimeout(() => process.kill(workersN.child.pid!, 'SIGHUP'), (warmupSec + 2) * 1000);
    record('rolling', await run(workersN.url, helloOf(workersN), connections, undefined, Math.max(durationSec, 10)));
    clearTimeout(restart);
    const restarted = await workersN.pids();
    figures.rolling_workers_replaced = workersNPids.slice(1).filter((pid) => !restarted.includes(pid)).length;
    workersN.stop();

    console.log('9. CPU-bound scale-out: about 2 ms of computation per call at c=16, one instance per version, then the default bound');
    for (const [prefix, maxInstancesPerVersion] of [
      ['crunch_single', 1],
      ['crunch_scaled', cores],
    ] as const) {
      const server = await startIslet({ crunch: true, limits: { maxInstancesPerVersion } });
      const ready = server.ready as Required<Ready>;
      const crunch = { paths: [`/v2/run/${ready.accountId}/crunch`], headers: { 'X-Service-Api-Key': ready.apiKey } };
      record(prefix, await run(ready.url, crunch, 16, () => [server.child.pid!]));
      server.child.kill('SIGKILL');
    }
    figures.crunch_call_ms = 1000 / figures.crunch_single_rps!;
    figures.crunch_scale_ratio = figures.crunch_scaled_rps! / figures.crunch_single_rps!;
    figures.crunch_scale_per_core = figures.crunch_scale_ratio / cores;

    console.log(`2. warm node8 POST with a ${(body10k.length / 1024).toFixed(1)} KB JSON body`);
    const post = { paths: [`/v2/run/${accountId}/post`], method: 'POST', body: body10k, headers: { ...headers, 'Content-Type': 'application/json' } };
    record('baseline_post', await run(baseline.ready.url, post));
    record('post', await run(url, post));
    figures.post_ratio = figures.post_rps! / figures.baseline_post_rps!;

    console.log(`3. node8 cold start: first call of ${serverConfig.coldFunctions} freshly deployed functions, one every 20 ms`);
    const cold = await timeCalls(
      url,
      accountId,
      apiKey,
      Array.from({ length: serverConfig.coldFunctions }, (_, i) => `cold_${i}`),
      20,
    );
    figures.cold_p50_ms = percentile(cold, 50);
    figures.cold_p99_ms = percentile(cold, 99);
    // The same spaced calls to the baseline's in-process hello: what any call costs here when the
    // server has gone idle between calls (thread wake-ups, the client), with no cold start in it.
    const floor = await timeCalls(
      baseline.ready.url,
      accountId,
      apiKey,
      Array.from({ length: serverConfig.coldFunctions }, () => 'hello'),
      20,
    );
    figures.cold_floor_p50_ms = percentile(floor, 50);
    const coldBurst = await timeCalls(
      url,
      accountId,
      apiKey,
      Array.from({ length: 20 }, (_, i) => `burst_${i}`),
      0,
    );
    figures.cold_back_to_back_p50_ms = percentile(coldBurst, 50);

    console.log('6. noisy neighbour: the warm hello while another function spins until its 1 s timeout');
    let spinning = true;
    const spinner = (async () => {
      while (spinning) await (await fetch(`${url}/v2/run/${accountId}/spin`, { headers })).text();
    })();
    record('noisy_hello', await run(url, { paths: [`/v2/run/${accountId}/hello?name=abc`], headers }));
    spinning = false;
    await spinner;
    figures.noisy_p99_vs_warm = figures.noisy_hello_p99_ms! / figures.hello_p99_ms!;

    console.log(`13. account flood: the hello while another account floods its own hello (that account limited to ${FLOOD_RATE} calls/s)`);
    const [victim, flooder] = await Promise.all([
      run(url, { paths: [`/v2/run/${accountId}/hello?name=abc`], headers }),
      run(url, { paths: [`/v2/run/${flood.accountId}/hello?name=abc`], headers: { 'X-Service-Api-Key': flood.apiKey } }),
    ]);
    record('flood_hello', victim);
    figures.flood_p99_vs_warm = figures.flood_hello_p99_ms! / figures.hello_p99_ms!;
    figures.flood_attempts_rps = flooder.rps;
    figures.flood_refused_share = flooder.errors / Math.max(1, flooder.requests);

    console.log('15. host-work neighbour: the hello while another account runs heavy host work (brotli, PBKDF2) from 8 callers');
    let working = true;
    let heavyCalls = 0;
    const workers = Array.from({ length: 8 }, async () => {
      while (working) {
        const res = await fetch(`${url}/v2/run/${flood.accountId}/heavy`, { headers: { 'X-Service-Api-Key': flood.apiKey } });
        await res.text();
        if (res.status === 200) heavyCalls++;
      }
    });
    record('hostwork_hello', await run(url, { paths: [`/v2/run/${accountId}/hello?name=abc`], headers }));
    working = false;
    await Promise.all(workers);
    figures.hostwork_heavy_calls = heavyCalls;
    figures.hostwork_p99_vs_warm = figures.hostwork_hello_p99_ms! / figures.hello_p99_ms!;

    console.log('14. traffic split: 10,000 calls of a function whose version 2 gets 10%, at random and with sticky keys');
    figures.split_random_pct = await splitShare(url, accountId, apiKey, false);
    figures.split_sticky_pct = await splitShare(url, accountId, apiKey, true);

    console.log('7. function to function: the seed caller via sdk and via fetch');
    record('fn_sdk', await run(url, { paths: [`/v2/run/${accountId}/caller_sdk?name=abc`], headers }));
    record('fn_fetch', await run(url, { paths: [`/v2/run/${accountId}/caller_fetch?name=abc`], headers }));
    console.log(`16. asynchronous invocations through the queue, accept to done: ${queueCount} of the hello (file store; PostgreSQL below)`);
    recordQueue(figures, 'queue_file', await queueThroughput({ url, accountId, apiKey }, queueCount));
    const skipped = await runClusterScenarios({
      quick,
      figures,
      percentile,
      record,
      run,
      runRounds,
      fileServer: { url, accountId, apiKey, pid: islet.child.pid! },
      queueCount,
      startServer: async (storeUrl) => {
        const server = await startIslet({ core: true, storeUrl });
        const ready = server.ready as Required<Ready>;
        return { ...ready, pid: server.child.pid!, stop: () => server.child.kill('SIGKILL') };
      },
    });
    if (skipped) console.log(`10-12. skipped: ${skipped}`);
    console.log(`4. ${serverConfig.manyFunctions} distinct node8 functions, round-robin (a server of their own)`);
    await switchServer({ manyFunctions: serverConfig.manyFunctions });
    const manyNames = Array.from({ length: serverConfig.manyFunctions }, (_, i) => `many_${i}`);
    // Each function's first call, one after another, before the timed load: the figures below are
    // those of warm functions (the cold starts are scenario 3's figures), and the hit rate shows
    // whether the warm cache keeps them all under load.
    const firstCalls = await timeCalls(url, accountId, apiKey, manyNames, 0);
    figures.many_first_calls_s = firstCalls.reduce((a, b) => a + b, 0) / 1000;
    figures.many_rss_after_first_calls_mb = rssMb(islet.child.pid!);
    // Each warm isolate grows with the calls it has taken (young-generation pages), so the RSS
    // target is read after a fixed number of calls per function, whatever the machine's speed.
    await callEach(
      url,
      manyNames.map((name) => `/v2/run/${accountId}/${name}?name=abc`),
      MANY_CALLS_PER_FUNCTION - 1,
      headers,
    );
    figures.many_calls_per_function = MANY_CALLS_PER_FUNCTION;
    figures.many_rss_mb = rssMb(islet.child.pid!);
    const operator = { authorization: `Bearer ${metricsToken}` };
    const before = (await (await fetch(`${url}/healthz`, { headers: operator })).json()) as { hits: number; misses: number };
    const many = await run(url, { paths: manyNames.map((name) => `/v2/run/${accountId}/${name}?name=abc`), headers });
    const after = (await (await fetch(`${url}/healthz`, { headers: operator })).json()) as { hits: number; misses: number; warm: number };
    record('many', many);

    figures.many_hit_rate = (after.hits - before.hits) / Math.max(1, after.hits - before.hits + after.misses - before.misses);
    figures.many_warm_instances = after.warm;
    figures.many_rss_after_load_mb = rssMb(islet.child.pid!);

    if (serverConfig.python) {
      console.log('5. warm Python hello and Python cold start (a server of their own)');
      await switchServer({ python: true, pythonColdFunctions: serverConfig.pythonColdFunctions });
      await runRounds([['py_hello', url, { paths: [`/v2/run/${accountId}/py_hello?name=abc`], headers }]]);
      figures.py_hello_ratio = figures.py_hello_rps! / figures.baseline_hello_rps!;
      // One Python instance waits for each HTTP call it makes (its thread blocks while the host does
      // the request), so this is bounded by one call's latency; fn_fetch is node8's same caller.
      record('py_fetch', await run(url, { paths: [`/v2/run/${accountId}/py_caller_http?name=abc`], headers }));
      const pyCold = await timeCalls(
        url,
        accountId,
        apiKey,
        Array.from({ length: serverConfig.pythonColdFunctions }, (_, i) => `py_cold_${i}`),
        200,
      );
      figures.py_cold_p50_ms = percentile(pyCold, 50);
      figures.py_cold_p99_ms = percentile(pyCold, 99);
    }

    // 17-20, streams and WebSockets, on a server and a baseline of their own (bench/io.ts).
    islet.child.kill('SIGKILL');
    await runIoScenarios(quick, figures);
  } finally {
    islet.child.kill('SIGKILL');
    baseline.child.kill('SIGKILL');
    for (const s of supervised) s.stop();
    quiet.child.kill('SIGKILL');
  }

  const targets: [string, string, (f: Figures) => boolean, string][] = [
    ['warm node8 hello rps / baseline rps', 'hello_ratio', (f) => f.hello_ratio! >= 0.6, '>= 0.60'],
    ['warm node8 hello p99 at c=64 (ms)', 'hello_p99_ms', (f) => f.hello_p99_ms! <= 2.5, '<= 2.5'],
    ['node8 cold start p50 (ms)', 'cold_p50_ms', (f) => f.cold_p50_ms! <= 3, '<= 3'],
    ['python cold start p50 (ms)', 'py_cold_p50_ms', (f) => f.py_cold_p50_ms! <= 300, '<= 300'],
    ['warm python hello rps / baseline rps', 'py_hello_ratio', (f) => f.py_hello_ratio! >= 0.35, '>= 0.35'],
    [`RSS with ${serverConfig.manyFunctions} warm node8 functions (MB)`, 'many_rss_mb', (f) => f.many_rss_mb! <= 1536, '<= 1536'],
    ['hello p99 with a spinning neighbour (ms)', 'noisy_hello_p99_ms', (f) => f.noisy_hello_p99_ms! <= 20, '<= 20'],
    ['hello rps, 1 worker / in one process', 'workers1_vs_inprocess_rps', (f) => f.workers1_vs_inprocess_rps! >= 0.95, '>= 0.95'],
    ['hello CPU per request, 1 worker / in one process', 'workers1_cpu_ratio', (f) => f.workers1_cpu_ratio! <= 1.15, '<= 1.15'],
    [`hello CPU per request, ${cores} workers / in one process`, 'workers_n_cpu_ratio', (f) => f.workers_n_cpu_ratio! <= 1.15, '<= 1.15'],
    ['errors during a rolling restart under load', 'rolling_errors', (f) => f.rolling_errors === 0, '0'],
    [`CPU-bound scale-out: rps / single instance / ${cores} cores`, 'crunch_scale_per_core', (f) => f.crunch_scale_per_core! >= 0.8, '>= 0.80'],
    ['deploy propagation between two nodes, p99 (ms)', 'propagation_p99_ms', (f) => f.propagation_p99_ms! <= 1000, '<= 1000'],
    ['warm hello, PostgreSQL store / file store', 'pg_vs_file_hello', (f) => f.pg_vs_file_hello! >= 0.97, '>= 0.97'],
    ['hello CPU added by counting metrics (its µs / hello CPU per request)', 'metrics_cost', (f) => f.metrics_cost! <= 0.03, '<= 0.03'],
    ["hello p99 in another account's flood / unloaded", 'flood_p99_vs_warm', (f) => f.flood_p99_vs_warm! <= 2, '<= 2'],
    ["hello p99 beside another account's heavy host work / unloaded", 'hostwork_p99_vs_warm', (f) => f.hostwork_p99_vs_warm! <= 3, '<= 3'],
    ['split at random: % of 10,000 calls on the 10% version', 'split_random_pct', (f) => Math.abs(f.split_random_pct! - 10) <= 2, '10 +- 2'],
    ['split by sticky key: % of 10,000 keys on it', 'split_sticky_pct', (f) => Math.abs(f.split_sticky_pct! - 10) <= 2, '10 +- 2'],
    ...IO_TARGETS,
  ];

  console.log('\nfigure'.padEnd(34) + 'value');
  for (const [key, value] of Object.entries(figures)) console.log(`${key.padEnd(33)}${format(value)}`);
  console.log('\ntarget'.padEnd(52) + 'value'.padEnd(12) + 'target'.padEnd(10) + 'status');
  for (const [label, key, ok, goal] of targets) {
    if (figures[key] === undefined) continue;
    console.log(`${label.padEnd(51)}${format(figures[key]!).padEnd(12)}${goal.padEnd(10)}${ok(figures) ? 'met' : 'MISSED'}`);
  }

  const result = {
    date: new Date().toISOString(),
    quick,
    machine: { cores: os.cpus().length, cpu: os.cpus()[0]?.model, memoryGb: Math.round(os.totalmem() / 1e9), node: process.version, platform: `${os.platform()} ${os.release()}` },
    load: { tool, connections, durationSec, warmupSec },
    config: { ...serverConfig, rounds },
    figures,
    rounds: roundFigures,
    targets: Object.fromEntries(targets.filter(([, key]) => figures[key] !== undefined).map(([label, key, ok, goal]) => [key, { label, goal, met: ok(figures) }])),
  };
  const outFile = values.out ?? path.join(ROOT, 'bench', 'results', `${result.date.replace(/[:.]/g, '-')}.json`);
  mkdirSync(path.dirname(outFile), { recursive: true });
  writeFileSync(outFile, JSON.stringify(result, null, 2) + '\n');
  console.log(`\nresults: ${path.relative(process.cwd(), outFile)}`);
  if (values.compare) {
    const old = JSON.parse(readFileSync(values.compare, 'utf8')) as { figures: Figures; quick?: boolean; load?: { tool?: string } };
    if (old.quick !== quick || old.load?.tool !== tool) {
      console.log(
        `\nnote: the compared run was a ${old.quick ? 'quick' : 'full'} run with ${old.load?.tool ?? 'an unknown tool'}; this one is a ${quick ? 'quick' : 'full'} run with ${tool}, so the figures are not like for like`,
      );
    }
    compare(old, figures);
  }
}

function format(value: number | undefined): string {
  // A scenario that failed leaves its figures out: say so instead of stopping the report.
  if (typeof value !== 'number') return 'missing';
  return Math.abs(value) >= 100 ? value.toFixed(0) : value.toFixed(Math.abs(value) >= 10 ? 1 : 3);
}

function compare(old: { figures: Figures }, figures: Figures): void {
  console.log('\nchange against the compared run'.padEnd(34) + 'old'.padEnd(12) + 'new'.padEnd(12) + 'change');
  for (const [key, value] of Object.entries(figures)) {
    const before = old.figures[key];
    if (before === undefined) continue;
    const change = before === 0 ? 'n/a' : `${(((value - before) / Math.abs(before)) * 100).toFixed(1)}%`;
    console.log(`${key.padEnd(33)}${format(before).padEnd(12)}${format(value).padEnd(12)}${change}`);
  }
}

// Exits when the figures are written: a stopped server's keep-alive sockets must not hold the run open.
main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
