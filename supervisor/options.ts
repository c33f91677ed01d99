import { availableParallelism } from 'node:os';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { DEFAULT_LIMITS, type Limits } from '../engine/limits';
import type { LogLevel } from '../engine/server-log';
import { SETTINGS } from './settings';

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
  /** The server's log: lines of this level and more severe ones. */
  logLevel: LogLevel;
  /** Count calls for /metrics and `islet stats`. */
  metrics: boolean;
  /** The bearer token that reads every metric at /metrics. */
  metricsToken: string | undefined;
  /**
   * The engine limits the settings give (see SETTINGS' `limit`): each worker's engine gets them,
   * and holds its share of the account limits.
   */
  limits: Partial<Limits>;
}

function whole(value: string, flag: string, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < min || n > max) throw new Error(`${flag}: ${JSON.stringify(value)} is not a whole number from ${min} to ${max}`);
  return n;
}

/** The settings as given (flags, then environment variables), read from SETTINGS. */
function readSettings(argv: string[]): { text(flag: string): string | undefined; int(flag: string): number | undefined; on(flag: string): boolean } {
  const { values } = parseArgs({
    args: argv,
    options: Object.fromEntries(SETTINGS.map((s) => [s.flag, { type: s.type === 'switch' ? ('boolean' as const) : ('string' as const) }])),
    allowPositionals: false,
  });
  const settingOf = (flag: string) => SETTINGS.find((s) => s.flag === flag)!;
  const text = (flag: string): string | undefined => {
    const given = values[flag];
    const setting = settingOf(flag);
    const value = typeof given === 'string' ? given : setting.env === undefined ? undefined : process.env[setting.env] || undefined;
    if (value !== undefined && setting.choices && !setting.choices.includes(value)) throw new Error(`--${flag}: ${JSON.stringify(value)} is not one of ${setting.choices.join(', ')}`);
    return value;
  };
  return {
    text,
    int: (flag) => {
      const value = text(flag);
      const setting = settingOf(flag);
      return value === undefined ? undefined : whole(value, `--${flag}`, setting.min ?? 0, setting.max);
    },
    on: (flag) => values[flag] === true,
  };
}

export function parseServeOptions(argv: string[]): ServeOptions {
  const read = readSettings(argv);
  const port = read.int('port') ?? 8080;
  const workers = read.int('workers') ?? availableParallelism();
  const warmMemoryMb = read.int('warm-memory') ?? DEFAULT_LIMITS.maxWarmMemoryMb;
  const share = Math.floor(warmMemoryMb / workers);
  const limits: Partial<Limits> = {};
  for (const setting of SETTINGS) {
    const value = setting.limit && read.int(setting.flag);
    if (setting.limit && value !== undefined) (limits as Record<string, number>)[setting.limit.name] = value * (setting.limit.factor ?? 1);
  }
  return {
    host: read.text('host') ?? '127.0.0.1',
    port,
    consolePort: consolePortOf(read.text('console-port'), port),
    consoleOrigin: read.text('console-origin') === undefined ? undefined : originOf(read.text('console-origin')!),
    dataDir: path.resolve(read.text('data') ?? path.join(process.cwd(), '.islet-data')),
    storeUrl: read.text('store'),
    advertiseUrl: read.text('advertise-url'),
    workers,
    allowPrivateEgress: read.on('allow-private-egress'),
    warmMemoryMb,
    // What a worker holds beyond its warm cache: Node and islet (~150 MB), a Python spare (~90 MB).
    maxWorkerRssMb: read.int('max-worker-rss') ?? 2 * share + 512,
    maxInstances: read.int('max-instances') ?? availableParallelism(),
    keepVersions: read.int('keep-versions'),
    logLevel: (read.text('log-level') ?? 'info') as LogLevel,
    metrics: !read.on('no-metrics'),
    metricsToken: read.text('metrics-token'),
    limits,
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
