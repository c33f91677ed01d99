import { hostname } from 'node:os';
import type { Logger } from 'pino';

/**
 * The server's own log (not the functions' logs, which are the LogStore's): one JSON object per
 * line on stderr, made by pino, each with its level, time, pid, host name and the process's
 * `worker` (its slot, or `supervisor`), a line about a call with its `requestId`, a failure with
 * its `code` and `err`. `jq` reads it: `islet serve 2>&1 >/dev/null | jq -r 'select(.level != "info") | .msg'`.
 *
 * pino is loaded with the first line (it takes about 50 ms to load, which the CLI's commands that
 * open a store and log nothing need not pay).
 */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** What a line says besides its message. */
export interface LogFields {
  /** What failed, as a code an operator can grep: an error code, or ERR_BACKGROUND with `task`. */
  code?: string;
  requestId?: string;
  /** The error: its type, message, stack and code are written. */
  err?: unknown;
  [field: string]: unknown;
}

let level: LogLevel = 'info';
let bindings: Record<string, unknown> = {};
let logger: Logger | undefined;

/** Sets this process's level and what every line names (its worker, its node), before its first line or after. */
export function configureServerLog(options: { level?: LogLevel; worker?: number | 'supervisor'; node?: string }): void {
  if (options.level !== undefined) level = options.level;
  bindings = { ...bindings, ...(options.worker === undefined ? {} : { worker: options.worker }), ...(options.node === undefined ? {} : { node: options.node }) };
  logger = undefined;
}

function current(): Logger {
  if (logger) return logger;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const pino = require('pino') as typeof import('pino');
  // process.stderr is looked up at each line (a test may stand in for it); its writes to a pipe or
  // a file are synchronous, so a line written just before process.exit() is not lost.
  logger = pino(
    { level, base: { pid: process.pid, hostname: hostname(), ...bindings }, timestamp: pino.stdTimeFunctions.isoTime, formatters: { level: (label) => ({ level: label }) } },
    { write: (line: string) => process.stderr.write(line) },
  );
  return logger;
}

export const serverLog = {
  fatal: (fields: LogFields, message: string): void => current().fatal(fields, message),
  error: (fields: LogFields, message: string): void => current().error(fields, message),
  warn: (fields: LogFields, message: string): void => current().warn(fields, message),
  info: (fields: LogFields, message: string): void => current().info(fields, message),
  debug: (fields: LogFields, message: string): void => current().debug(fields, message),
};

/**
 * Work no caller waits on (a catalog refresh, key-use writes, heartbeats, pruning): the tasks whose
 * failures are logged and counted, as `islet_background_errors_total{task}`.
 */
export const BACKGROUND_TASKS = [
  'catalog-refresh',
  'key-use-write',
  'node-heartbeat',
  'node-list',
  'job-claim',
  'job-prune',
  'job-recover',
  'schedule-tick',
  'code-cache-write',
  'code-adopt',
  'log-write',
  'log-flush',
  'change-broadcast',
  'peer-figures',
] as const;
export type BackgroundTask = (typeof BACKGROUND_TASKS)[number];

/**
 * A task that keeps failing (a database out of reach fails the job claim every second, a full disk
 * every log write of every function every 250 ms) writes one line per task this often, saying how
 * many failures it did not write; every failure is counted.
 */
const QUIET_MS = 10_000;

const tasks = new Map(BACKGROUND_TASKS.map((task) => [task, { count: 0, loggedAt: -Infinity, unlogged: 0 }]));

/** A background task failed: a warning in the server's log (ERR_BACKGROUND, the task, the error), and one more in its count. */
export function backgroundFailed(task: BackgroundTask, err: unknown, message: string, fields: LogFields = {}): void {
  const state = tasks.get(task)!;
  state.count++;
  const now = performance.now();
  if (now - state.loggedAt < QUIET_MS) {
    state.unlogged++;
    return;
  }
  const unlogged = state.unlogged;
  state.loggedAt = now;
  state.unlogged = 0;
  serverLog.warn({ code: 'ERR_BACKGROUND', task, err, ...fields, ...(unlogged ? { failuresNotLogged: unlogged } : {}) }, `${message}: ${(err as Error)?.message ?? String(err)}`);
}

/** The failures of each background task in this process so far (every task, 0 included). */
export function backgroundErrorCounts(): [BackgroundTask, number][] {
  return [...tasks].map(([task, state]) => [task, state.count]);
}
