import { DEFAULT_LIMITS } from '../engine/limits';
import { configureServerLog, serverLog } from '../engine/server-log';
import { nodeId } from './cluster-logs';
import { openStore } from './compose';
import { parseServeOptions, type ServeOptions } from './options';
import { claimPorts } from './port';
import { Supervisor } from './supervisor';

/**
 * `islet serve` and `npm start`: checks the port, creates the first account on an empty store
 * (printed once; only the key's hash is kept), then runs the supervisor and its workers until
 * SIGTERM/SIGINT. SIGHUP restarts the workers one at a time.
 */
export async function serve(argv: string[] = process.argv.slice(2)): Promise<void> {
  const options = parseServeOptions(argv);
  configureServerLog({ level: options.logLevel, worker: 'supervisor', node: options.storeUrl === undefined ? undefined : nodeId(options.dataDir) });
  Object.assign(options, await claimPorts(options.host, options.port, options.consolePort));
  await ensureFirstAccount(options);
  const supervisor = new Supervisor(options, DEFAULT_LIMITS.maxTimeoutMs);
  const { port, consolePort } = await supervisor.start();
  const host = options.host === '0.0.0.0' || options.host === '::' ? '127.0.0.1' : options.host;
  const urlOf = (p: number) => `http://${host.includes(':') ? `[${host}]` : host}:${p}`;
  const store = options.storeUrl === undefined ? `data: ${options.dataDir}` : `store: ${redact(options.storeUrl)}, cache: ${options.dataDir}`;
  console.log(`islet listening on ${urlOf(port)} (${options.workers} worker${options.workers === 1 ? '' : 's'}, ${store})`);
  console.log(consoleLine(options.consoleOrigin, consolePort === undefined ? undefined : urlOf(consolePort)));
  let signals = 0;
  const stop = (signal: NodeJS.Signals) => {
    if (++signals > 1) {
      serverLog.warn({ signal }, `${signal} again: stopping the workers at once`);
      supervisor.kill();
      process.exit(1);
    }
    serverLog.info({ signal }, `${signal}: finishing the calls in flight, then stopping`);
    void supervisor.stop(signal).then(() => process.exit(0));
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  process.on('SIGHUP', () => {
    serverLog.info({ signal: 'SIGHUP' }, 'SIGHUP: restarting the workers one at a time');
    void supervisor.rollingRestart().then(() => serverLog.info({}, 'rolling restart done'));
  });
}

/**
 * Creates the first account once, here, before any worker starts (workers never create accounts;
 * nodes on one PostgreSQL create it once between them).
 */
async function ensureFirstAccount(options: ServeOptions): Promise<void> {
  // The only process on the data directory now: crashed deploys' leftovers can go.
  const store = await openStore({ dataDir: options.dataDir, storeUrl: options.storeUrl, clean: true });
  try {
    const account = await store.ensureFirstAccount();
    if (!account) return;
    console.log('Created the first account (the key is shown only now; keep it):');
    console.log(`  account id: ${account.accountId}`);
    console.log(`  API key:    ${account.apiKey}`);
  } finally {
    await store.close();
  }
}

/** Where to open the console, printed at start. */
function consoleLine(origin: string | undefined, local: string | undefined): string {
  if (local === undefined) return `console: none on this server (--console-port 0)${origin ? `; /console leads to ${origin}/console/` : ''}`;
  if (origin === undefined) return `console on ${local}/console/ (an origin of its own: function pages never share it)`;
  return `console on ${origin}/console/ (its port here: ${local})`;
}

function redact(url: string): string {
  return url.replace(/\/\/([^:@/]+):[^@/]*@/, '//$1:***@');
}

if (require.main === module) {
  serve().catch((err: unknown) => {
    console.error(`islet: ${(err as Error).message}`);
    process.exit(1);
  });
}
