import type { Limits } from '../engine/limits';
import { LOG_LEVELS } from '../engine/server-log';

/**
 * Every setting of `islet serve`, declared once: its flag, the environment variable read when the
 * flag is not given, its type and bounds, its default as help and the README show it, what it is
 * for, and who reads it. The supervisor's parser (options.ts), the CLI's `serve` options
 * (cli/index.ts), the workers' engine limits and the README's table are all made from this list;
 * a test fails when the README's table and this list disagree.
 */
export interface Setting {
  /** The flag, without `--`. */
  flag: string;
  /** The environment variable read when the flag is not given. */
  env?: string;
  /** `int` (whole numbers within min and max), `text`, or `switch` (a flag without a value). */
  type: 'int' | 'text' | 'switch';
  /** What the flag takes, for help (`<port>`); none for a switch. */
  arg?: string;
  min?: number;
  max?: number;
  /** For a `text` setting that takes one of a few words: those words. */
  choices?: readonly string[];
  /** The default, as help and the README say it. */
  shown: string;
  help: string;
  /** Who reads it: the supervisor (processes, ports, files), the workers' engines (as a limit), or both. */
  reader: 'supervisor' | 'workers' | 'both';
  /**
   * For a setting that is an engine limit: the limit, and the factor from the flag's unit to the
   * limit's (MB to bytes, say). Its value reaches every worker's engine as given (each process
   * holds it whole unless `share` says the workers split it).
   */
  limit?: { name: keyof Limits; factor?: number; share?: boolean };
}

const MiB = 1024 * 1024;

export const SETTINGS: readonly Setting[] = [
  { flag: 'port', env: 'PORT', type: 'int', arg: 'port', min: 0, max: 65535, shown: '8080', help: 'The port functions and the management API are served on (0: a free one)', reader: 'supervisor' },
  { flag: 'host', env: 'HOST', type: 'text', arg: 'host', shown: '127.0.0.1', help: 'The address to listen on', reader: 'supervisor' },
  { flag: 'console-port', env: 'ISLET_CONSOLE_PORT', type: 'int', arg: 'port', min: 0, max: 65535, shown: 'the port + 1', help: "The web console's own port (0: no console)", reader: 'supervisor' },
  {
    flag: 'console-origin',
    env: 'ISLET_CONSOLE_ORIGIN',
    type: 'text',
    arg: 'url',
    shown: 'none',
    help: 'Where browsers reach the console behind a proxy, as https://console.example.com',
    reader: 'supervisor',
  },
  { flag: 'data', env: 'ISLET_DATA', type: 'text', arg: 'dir', shown: './.islet-data', help: "The data directory (with --store: this node's caches and logs)", reader: 'both' },
  { flag: 'store', env: 'ISLET_STORE', type: 'text', arg: 'url', shown: 'the data directory', help: 'postgres://… shared by several nodes', reader: 'both' },
  { flag: 'advertise-url', env: 'ISLET_ADVERTISE_URL', type: 'text', arg: 'url', shown: 'http://<host>:<port>', help: 'How other nodes reach this one (logs across nodes)', reader: 'both' },
  { flag: 'workers', env: 'ISLET_WORKERS', type: 'int', arg: 'n', min: 1, max: 256, shown: 'the number of CPUs', help: 'Worker processes', reader: 'supervisor' },
  { flag: 'allow-private-egress', type: 'switch', shown: 'off', help: "Let functions' fetch and TCP sockets reach private and loopback addresses", reader: 'workers' },
  { flag: 'warm-memory', env: 'ISLET_WARM_MEMORY', type: 'int', arg: 'mb', min: 64, shown: '4096', help: 'Memory for warm instances, all workers together (MB)', reader: 'both' },
  {
    flag: 'max-worker-rss',
    env: 'ISLET_MAX_WORKER_RSS',
    type: 'int',
    arg: 'mb',
    min: 128,
    shown: "twice a worker's warm memory + 512",
    help: 'A worker over this resident memory (MB) is drained and replaced',
    reader: 'supervisor',
  },
  {
    flag: 'max-instances',
    env: 'ISLET_MAX_INSTANCES',
    type: 'int',
    arg: 'n',
    min: 1,
    max: 1024,
    shown: 'the number of CPUs',
    help: 'Instances of one busy function version, all workers together',
    reader: 'both',
  },
  {
    flag: 'keep-versions',
    env: 'ISLET_KEEP_VERSIONS',
    type: 'int',
    arg: 'n',
    min: 1,
    max: 10_000,
    shown: '10',
    help: 'The newest versions of each function kept, serving ones besides',
    reader: 'workers',
  },
  {
    flag: 'log-level',
    env: 'ISLET_LOG_LEVEL',
    type: 'text',
    arg: 'level',
    choices: LOG_LEVELS,
    shown: 'info',
    help: `The server's log (JSON lines on stderr) from this level on: ${LOG_LEVELS.join(', ')}`,
    reader: 'both',
  },
  { flag: 'no-metrics', type: 'switch', shown: 'off', help: 'Count nothing for /metrics and islet stats', reader: 'workers' },
  {
    flag: 'metrics-token',
    env: 'ISLET_METRICS_TOKEN',
    type: 'text',
    arg: 'token',
    shown: 'none',
    help: "The bearer token that reads every metric at /metrics and /healthz's details",
    reader: 'workers',
  },
  {
    flag: 'account-max-inflight',
    env: 'ISLET_ACCOUNT_MAX_INFLIGHT',
    type: 'int',
    arg: 'n',
    min: 1,
    shown: '1000',
    help: "Calls of one account's functions running at once",
    reader: 'workers',
    limit: { name: 'accountMaxInFlight' },
  },
  {
    flag: 'account-rate',
    env: 'ISLET_ACCOUNT_RATE',
    type: 'int',
    arg: 'n',
    min: 0,
    shown: 'no bound',
    help: 'Calls per second of one account, over time (0: no bound)',
    reader: 'workers',
    limit: { name: 'accountRatePerSec' },
  },
  {
    flag: 'account-burst',
    env: 'ISLET_ACCOUNT_BURST',
    type: 'int',
    arg: 'n',
    min: 0,
    shown: 'one second of the rate',
    help: 'Calls an account may make at once above its rate',
    reader: 'workers',
    limit: { name: 'accountBurst' },
  },
  {
    flag: 'account-max-functions',
    env: 'ISLET_ACCOUNT_MAX_FUNCTIONS',
    type: 'int',
    arg: 'n',
    min: 1,
    shown: '1000',
    help: 'Functions one account may have',
    reader: 'workers',
    limit: { name: 'accountMaxFunctions' },
  },
  {
    flag: 'account-max-code-mb',
    env: 'ISLET_ACCOUNT_MAX_CODE_MB',
    type: 'int',
    arg: 'mb',
    min: 1,
    shown: '1024',
    help: "Code one account may keep: its functions' kept versions, unpacked (MB)",
    reader: 'workers',
    limit: { name: 'accountMaxCodeBytes', factor: MiB },
  },
  {
    flag: 'account-max-log-mb',
    env: 'ISLET_ACCOUNT_MAX_LOG_MB',
    type: 'int',
    arg: 'mb',
    min: 1,
    shown: '64',
    help: 'Log files one account may keep on this node; past it its oldest are deleted (MB)',
    reader: 'workers',
    limit: { name: 'accountMaxLogBytes', factor: MiB },
  },
  {
    flag: 'account-log-rate',
    env: 'ISLET_ACCOUNT_LOG_RATE',
    type: 'int',
    arg: 'chars',
    min: 1024,
    shown: '1048576',
    help: "Characters of log text one account's functions may hand each worker per second (4 seconds' worth at once); past it lines are dropped and counted",
    reader: 'workers',
    limit: { name: 'accountLogCharsPerSec' },
  },
  {
    flag: 'account-egress-mb',
    env: 'ISLET_ACCOUNT_EGRESS_MB',
    type: 'int',
    arg: 'mb',
    min: 1,
    shown: '16',
    help: "Response bodies one account's fetches may read per second in each worker (MB); past it they read more slowly",
    reader: 'workers',
    limit: { name: 'accountEgressBytesPerSec', factor: MiB },
  },
  {
    flag: 'async-max-queued',
    env: 'ISLET_ASYNC_MAX_QUEUED',
    type: 'int',
    arg: 'n',
    min: 1,
    shown: '10000',
    help: 'Asynchronous invocations one account may have queued or running; past it POST /v2/async answers ERR_QUOTA_EXCEEDED',
    reader: 'workers',
    limit: { name: 'asyncMaxQueued' },
  },
  {
    flag: 'async-concurrency',
    env: 'ISLET_ASYNC_CONCURRENCY',
    type: 'int',
    arg: 'n',
    min: 1,
    max: 4096,
    shown: '32',
    help: 'Asynchronous invocations each worker runs at once (an account holds half of them at most)',
    reader: 'workers',
    limit: { name: 'asyncConcurrency' },
  },
  {
    flag: 'async-keep-hours',
    env: 'ISLET_ASYNC_KEEP_HOURS',
    type: 'int',
    arg: 'h',
    min: 1,
    max: 8760,
    shown: '24',
    help: "A finished asynchronous invocation's record and result are kept this long (hours)",
    reader: 'workers',
    limit: { name: 'asyncKeepMs', factor: 3_600_000 },
  },
  {
    flag: 'max-body-mb',
    env: 'ISLET_MAX_BODY_MB',
    type: 'int',
    arg: 'mb',
    min: 1,
    max: 1024,
    shown: '6',
    help: "A request body read whole: request.json(), text(), arrayBuffer(), a seed handler's body, Python's req.body (MB); past it the call answers 413",
    reader: 'workers',
    limit: { name: 'requestBodyBytes', factor: MiB },
  },
  {
    flag: 'max-stream-body-mb',
    env: 'ISLET_MAX_STREAM_BODY_MB',
    type: 'int',
    arg: 'mb',
    min: 1,
    max: 65_536,
    shown: '100',
    help: "A request body a function reads as a stream: node8's request.body and a server app's req, Python's req.stream and req.iter_chunks() (MB); past it the read fails and the call answers 413",
    reader: 'workers',
    limit: { name: 'streamedRequestBodyBytes', factor: MiB },
  },
  {
    flag: 'host-work-threads',
    env: 'ISLET_HOST_WORK_THREADS',
    type: 'int',
    arg: 'n',
    min: 1,
    max: 64,
    shown: '2',
    help: "Threads of each worker for functions' crypto, compression and key derivation (an account holds half of them at most)",
    reader: 'workers',
    limit: { name: 'hostWorkThreads' },
  },
];

/** A setting's flag as help shows it: `--port <port>`, or `--no-metrics`. */
export function flagUsage(setting: Setting): string {
  return setting.type === 'switch' ? `--${setting.flag}` : `--${setting.flag} <${setting.arg}>`;
}

/** The README's table of settings (between its `settings` markers), made from SETTINGS. */
export function settingsTable(): string {
  const rows = SETTINGS.map((s) => `| \`${flagUsage(s)}\` | ${s.env ? `\`${s.env}\`` : ''} | ${s.shown} | ${s.help} | ${s.reader} |`);
  return ['| flag | environment | default | what it is | read by |', '|---|---|---|---|---|', ...rows].join('\n');
}
