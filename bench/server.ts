/**
 * The islet server under benchmark, in its own process: a fresh data directory, one account, and
 * the scenario functions deployed before it prints `{url, accountId, apiKey}` on one line.
 * Configured by BENCH_CONFIG; the run starts one per group of scenarios (core, many functions,
 * Python) so that no group's warm instances weigh on another's figures.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import type { Limits } from '../engine/limits';
import { startServer } from '../http/server';
import { openEngine } from '../supervisor/compose';

export interface BenchServerConfig {
  /** hello, post, spin and the callers. */
  core: boolean;
  /** fails and hungry, for the soak. */
  soak?: boolean;
  coldFunctions: number;
  manyFunctions: number;
  pythonColdFunctions: number;
  python: boolean;
  /** crunch: about 2 ms of computation per call (the scale-out scenario). */
  crunch?: boolean;
  /** sse, relay, json and ws_echo: streams and WebSockets (bench/io.ts). */
  io?: boolean;
  limits?: Partial<Limits>;
  /** A postgres:// store instead of a fresh data directory. */
  storeUrl?: string;
  cacheDir: string;
  /** Count metrics (default true; the A/B's other server runs without). */
  metrics?: boolean;
  /** The token that reads /metrics. */
  metricsToken?: string;
  /**
   * A second account, `flood`, with its own hello and this rate bound (calls per second): the
   * neighbour whose flood the main account's hello must withstand. Also `split`: hello as version
   * 1 and version 2 at 10%.
   */
  floodRate?: number;
}

export const BENCH_FUNCTIONS = path.resolve(__dirname, '..', '..', 'bench', 'functions');
const SEED = path.resolve(__dirname, '..', '..', 'test', 'fixtures', 'seed-node8');

async function main(): Promise<void> {
  const config = JSON.parse(process.env.BENCH_CONFIG ?? '{}') as BenchServerConfig;
  const dataDir = mkdtempSync(path.join(tmpdir(), 'islet-bench-'));
  const { engine } = await openEngine({
    dataDir,
    storeUrl: config.storeUrl,
    cacheDir: config.cacheDir,
    limits: { maxInFlightPerFunction: 1024, timeoutMs: 10_000, ...config.limits },
    metrics: config.metrics,
  });
  const { accountId, apiKey } = await engine.createAccount();
  const server = await startServer({ engine, host: '127.0.0.1', port: 0, metricsToken: config.metricsToken });
  const node8 = (name: string, entrypoint: string, extra: Record<string, unknown> = {}, dir = BENCH_FUNCTIONS, percent?: number, account = accountId) =>
    engine.deploy(account, { name, runtime: 'node8', file: 'function.js', entrypoint, env: {}, ...extra }, { dir }, { percent });
  const python = (name: string, entrypoint = 'hello', env: Record<string, string> = {}) =>
    engine.deploy(accountId, { name, runtime: 'python2', file: 'function.py', entrypoint, env }, { dir: BENCH_FUNCTIONS });

  let flood: { accountId: string; apiKey: string } | undefined;
  if (config.core) {
    await node8('hello', 'hello');
    await node8('split', 'hello');
    await node8('split', 'hello', {}, BENCH_FUNCTIONS, 10);
    await node8('post', 'post');
    await node8('spin', 'spin', { timeoutMs: 1000 });
    // Functions call others with a key that can only call.
    const { apiKey: invokeKey } = await engine.manage.createKey(accountId, { name: 'callers', scope: 'invoke' });
    await node8('caller_sdk', 'callerSdk', { env: { SERVICE_API_KEY: invokeKey } }, SEED);
    await node8('caller_fetch', 'callerFetch', { env: { SERVICE_API_KEY: invokeKey, SERVICE_URL: server.url } }, SEED);
    for (let i = 0; i < 20; i++) await node8(`burst_${i}`, 'hello');
  }
  if (config.soak) {
    await node8('fails', 'fails');
    await node8('hungry', 'hungry');
  }
  if (config.crunch) await node8('crunch', 'crunch');
  if (config.io) {
    await node8('sse', 'sse');
    await node8('relay', 'relay', { timeoutMs: 120_000 });
    await node8('json', 'json', { timeoutMs: 60_000 });
    // The same with 512 MB: isolated-vm sizes an isolate's young generation by its memory limit (2 MB at 128 MB, 16 MB at 512 MB; bench/io.ts, 19).
    await node8('json_512', 'json', { timeoutMs: 60_000, memoryMb: 512 });
    await node8('ws_echo', 'wsEcho', { timeoutMs: 120_000 });
  }
  if (config.floodRate !== undefined) {
    flood = await engine.createAccount();
    await engine.manage.setAccountLimits(flood.accountId, { ratePerSec: config.floodRate });
    await node8('hello', 'hello', {}, BENCH_FUNCTIONS, undefined, flood.accountId);
    await node8('heavy', 'heavy', { timeoutMs: 30_000 }, BENCH_FUNCTIONS, undefined, flood.accountId);
  }
  for (let i = 0; i < config.coldFunctions; i++) await node8(`cold_${i}`, 'hello');
  for (let i = 0; i < config.manyFunctions; i++) await node8(`many_${i}`, 'hello');
  if (config.python) {
    await python('py_hello');
    // The seed caller in Python (urllib through the egress to node8's hello), beside caller_fetch.
    if (!config.core) await node8('hello', 'hello');
    await python('py_caller_http', 'caller_http', { SERVICE_API_KEY: apiKey, SERVICE_URL: server.url });
    for (let i = 0; i < config.pythonColdFunctions; i++) await python(`py_cold_${i}`);
  }
  process.stdout.write(`${JSON.stringify({ url: server.url, accountId, apiKey, flood })}\n`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
