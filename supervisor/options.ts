import { availableParallelism } from 'node:os';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { DEFAULT_LIMITS, type Limits } from '../engine/limits';

/** How `islet serve` runs (flags, then environment variables, then defaults). */
export interface ServeOptions {
  host: string;
  port: number;
  /** The console's own port (0: a free one, picked at start); undefined: no console. */
  consolePort: number | undefined;
  /** Where browsers reach the console, when a proxy puts it elsewhere (`https://console.example.com`). */
  consoleOrigin: string | undefined;
  dataDir: string;
  /** `postgres://…`: a store shared by several nodes (default: the data directory). */
  storeUrl: string | undefined;
  /** How other nodes reach this one (logs across nodes); default http://<host>:<port>. */
  advertiseUrl: string | undefined;
  /** Worker processes (default: the number of CPUs). */
  workers: number;
  allowPrivateEgress: boolean;
  /** The warm caches of all workers together, MB: each worker gets its share. */
  warmMemoryMb: number;
  /** A worker whose resident memory passes this (MB) is drained and replaced. */
  maxWorkerRssMb: number;
  /** Instances of one busy function version on the machine, all workers together. */
  maxInstances: number;
  /** The newest versions of a function kept (serving ones besides). */
  keepVersions: number | undefined;
  /** Count calls for /metrics and `islet stats`. */
  metrics: boolean;
  /** The bearer token that reads every metric at /metrics. */
  metricsToken: string | undefined;
  /** Each account's bounds, all workers together (each worker holds its share). */
  accountLimits: Partial<Pick<Limits, 'accountMaxInFlight' | 'accountRatePerSec' | 'accountBurst' | 'accountMaxFunctions' | 'accountMaxCodeBytes' | 'accountMaxLogBytes'>>;
}

const MiB = 1024 * 1024;

function whole(value: string, flag: string, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < min || n > max) throw new Error(`${flag}: ${JSON.stringify(value)} is not a whole number from ${min} to ${max}`);
  return n;
}

export function parseServeOptions(argv: string[]): ServeOptions {
  const env = process.env;
  const { values } = parseArgs({
    args: argv,
    options: {
      port: { type: 'string', default: env.PORT ?? '8080' },
      host: { type: 'string', default: env.HOST ?? '127.0.0.1' },
      'console-port': { type: 'string', default: env.ISLET_CONSOLE_PORT || undefined },
      'console-origin': { type: 'string', default: env.ISLET_CONSOLE_ORIGIN || undefined },
      data: { type: 'string', default: env.ISLET_DATA ?? path.join(process.cwd(), '.islet-data') },
      store: { type: 'string', default: env.ISLET_STORE || undefined },
      'advertise-url': { type: 'string', default: env.ISLET_ADVERTISE_URL || undefined },
      workers: { type: 'string', default: env.ISLET_WORKERS ?? String(availableParallelism()) },
      'allow-private-egress': { type: 'boolean', default: false },
      'warm-memory': { type: 'string', default: env.ISLET_WARM_MEMORY ?? String(DEFAULT_LIMITS.maxWarmMemoryMb) },
      'max-worker-rss': { type: 'string', default: env.ISLET_MAX_WORKER_RSS },
      'max-instances': { type: 'string', default: env.ISLET_MAX_INSTANCES ?? String(availableParallelism()) },
      'keep-versions': { type: 'string', default: env.ISLET_KEEP_VERSIONS },
      'no-metrics': { type: 'boolean', default: false },
      'metrics-token': { type: 'string', default: env.ISLET_METRICS_TOKEN },
      'account-max-inflight': { type: 'string', default: env.ISLET_ACCOUNT_MAX_INFLIGHT },
      'account-rate': { type: 'string', default: env.ISLET_ACCOUNT_RATE },
      'account-burst': { type: 'string', default: env.ISLET_ACCOUNT_BURST },
      'account-max-functions': { type: 'string', default: env.ISLET_ACCOUNT_MAX_FUNCTIONS },
      'account-max-code-mb': { type: 'string', default: env.ISLET_ACCOUNT_MAX_CODE_MB },
      'account-max-log-mb': { type: 'string', default: env.ISLET_ACCOUNT_MAX_LOG_MB },
    },
    allowPositionals: false,
  });
  const port = whole(values.port!, '--port', 0, 65535);
  const workers = whole(values.workers!, '--workers', 1, 256);
  const warmMemoryMb = whole(values['warm-memory']!, '--warm-memory', 64);
  const share = Math.floor(warmMemoryMb / workers);
  return {
    host: values.host!,
    port,
    consolePort: consolePortOf(values['console-port'], port),
    consoleOrigin: values['console-origin'] === undefined ? undefined : originOf(values['console-origin']),
    dataDir: path.resolve(values.data!),
    storeUrl: values.store,
    advertiseUrl: values['advertise-url'],
    workers,
    allowPrivateEgress: Boolean(values['allow-private-egress']),
    warmMemoryMb,
    // What a worker holds beyond its warm cache: Node and islet (~150 MB), a Python spare (~90 MB).
    maxWorkerRssMb: values['max-worker-rss'] === undefined ? 2 * share + 512 : whole(values['max-worker-rss'], '--max-worker-rss', 128),
    maxInstances: whole(values['max-instances']!, '--max-instances', 1, 1024),
    keepVersions: values['keep-versions'] === undefined ? undefined : whole(values['keep-versions'], '--keep-versions', 1, 10_000),
    metrics: !values['no-metrics'],
    metricsToken: values['metrics-token'] || undefined,
    accountLimits: {
      ...(values['account-max-inflight'] === undefined ? {} : { accountMaxInFlight: whole(values['account-max-inflight'], '--account-max-inflight', 1) }),
      ...(values['account-rate'] === undefined ? {} : { accountRatePerSec: whole(values['account-rate'], '--account-rate', 0) }),
      ...(values['account-burst'] === undefined ? {} : { accountBurst: whole(values['account-burst'], '--account-burst', 0) }),
      ...(values['account-max-functions'] === undefined ? {} : { accountMaxFunctions: whole(values['account-max-functions'], '--account-max-functions', 1) }),
      ...(values['account-max-code-mb'] === undefined ? {} : { accountMaxCodeBytes: whole(values['account-max-code-mb'], '--account-max-code-mb', 1) * MiB }),
      ...(values['account-max-log-mb'] === undefined ? {} : { accountMaxLogBytes: whole(values['account-max-log-mb'], '--account-max-log-mb', 1) * MiB }),
    },
  };
}

/**
 * `--console-port`: default the port + 1 (a free port when the port is 0, picked at start); 0
 * turns the console off.
 */
function consolePortOf(value: string | undefined, port: number): number | undefined {
  if (value === undefined) {
    if (port === 0) return 0;
    if (port === 65535) throw new Error('--console-port: the default, the port + 1, is past 65535: choose one (0: no console)');
    return port + 1;
  }
  const consolePort = whole(value, '--console-port', 0, 65535);
  if (consolePort !== 0 && consolePort === port) throw new Error(`--console-port: ${consolePort} is the function port; the console needs a port of its own (0: no console)`);
  return consolePort === 0 ? undefined : consolePort;
}

/** `--console-origin`: scheme, host and port only (`https://console.example.com`), as browsers name an origin. */
function originOf(value: string): string {
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.pathname !== '/' || url.search || url.hash || url.username || url.password || value.includes('?') || value.includes('#')) {
    throw new Error(`--console-origin: ${JSON.stringify(value)} is not an origin: scheme, host and port only, as in https://console.example.com`);
  }
  return url.origin;
}
