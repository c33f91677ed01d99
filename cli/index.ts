import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { isatty } from 'node:tty';
import { format } from 'node:util';
import { cac } from 'cac';
import { flagUsage, SETTINGS } from '../supervisor/settings';
import { ServerError } from './api';
import { create } from './commands/create';
import { list, remove } from './commands/functions';
import { invoke } from './commands/invoke';
import { invocations, invokeAsync } from './commands/invocations';
import { schedules } from './commands/schedules';
import { login, show } from './commands/login';
import { logs } from './commands/logs';
import { perf } from './commands/perf';
import { createKey, listKeys, revokeKey } from './commands/keys';
import { stats } from './commands/stats';
import { promote, rollback, traffic, versions } from './commands/versions';
import { keyOrigin, sendNotices } from './config';
import { CliError } from './errors';

// eslint-disable-next-line @typescript-eslint/no-var-requires
const { version } = require('../../package.json') as { version: string };

/**
 * What a run of the CLI reads and writes: the process's own (bin/islet), or a test's, which runs
 * commands in its own process (a process per command cost the suite about 0.4 s of CPU each).
 */
export interface CliIo {
  env: NodeJS.ProcessEnv;
  /** What relative paths (--dir, --data, @file) are relative to. */
  cwd: string;
  stdout(chunk: string | Uint8Array): void;
  stderr(text: string): void;
  /** Whether stderr is a terminal: upload progress is drawn there only. */
  stderrIsTTY: boolean;
  /** Whether stdin is a terminal: `login` asks there for what its flags do not give. */
  stdinIsTTY: boolean;
  /** Standard input, whole (`invoke --data @-`). */
  stdin(): Buffer;
}

export function processIo(): CliIo {
  return {
    env: process.env,
    cwd: process.cwd(),
    stdout: (chunk) => process.stdout.write(chunk),
    stderr: (text) => process.stderr.write(text),
    stderrIsTTY: Boolean(process.stderr.isTTY),
    // Not process.stdin.isTTY: making process.stdin turns a piped fd 0 non-blocking, and the read
    // of `--data @-` then fails with EAGAIN.
    stdinIsTTY: isatty(0),
    stdin: () => readFileSync(0),
  };
}

/** A data directory relative to the run's folder; a postgres:// URL as it is. */
function storePlace(io: CliIo, where: string | undefined): string | undefined {
  return where === undefined || /^postgres(ql)?:\/\//.test(where) ? where : path.resolve(io.cwd, where);
}

/** The `serve` options cac read, back as flags for the supervisor's parser (see supervisor/settings.ts). */
function serveArgs(options: Record<string, unknown>): string[] {
  const args: string[] = [];
  const camel = (flag: string) => flag.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
  for (const setting of SETTINGS) {
    if (setting.type === 'switch') {
      // cac reads --no-x as x: false.
      const on = setting.flag.startsWith('no-') ? options[camel(setting.flag.slice(3))] === false : options[camel(setting.flag)] === true;
      if (on) args.push(`--${setting.flag}`);
    } else if (options[camel(setting.flag)] !== undefined) args.push(`--${setting.flag}`, String(options[camel(setting.flag)]));
  }
  return args;
}

export function buildCli(io: CliIo = processIo()) {
  const cli = cac('islet');
  const out = (text: string) => io.stdout(text);
  const env = io.env;

  cli
    .command('create <runtime> <name>', 'Create a function folder with a starter handler and service.yml (runtime: node8, python2, python3)')
    .example('islet create node8 hello')
    .action((runtime: string, name: string) => out(create(runtime, name, io.cwd)));

  cli
    .command('deploy <name>', 'Deploy a function described in service.yml (a new numbered version)')
    .option('--dir <dir>', 'Function folder (default: ./<name> if it has a service.yml, else the current folder)')
    .option('--message <text>', 'A note kept with the version (shown by "islet versions")')
    .option('--percent <p>', 'Serve the new version to P% of calls, the previous one to the rest (0-100)')
    .option('--env <name=value>', "An env value for the function, over service.yml's and the shell's (repeatable)")
    .option('--whole-node-modules', 'Upload node_modules whole, without building here to find the packages the code uses')
    .action(async (name: string, options: { dir?: string; message?: string; percent?: string | number; env?: string | string[]; wholeNodeModules?: boolean }) =>
      out(
        // Loaded for a deploy only: tar, yaml and esbuild take about 320 ms, which every other
        // command (and each of the tests' hundreds of CLI runs) would pay at start.
        await (await import('./commands/deploy')).deploy(name, {
          dir: options.dir,
          message: options.message === undefined ? undefined : String(options.message),
          percent: options.percent === undefined ? undefined : String(options.percent),
          envValues: options.env === undefined ? undefined : [options.env].flat().map(String),
          wholeNodeModules: Boolean(options.wholeNodeModules),
          cwd: io.cwd,
          env,
          progress: io.stderrIsTTY ? io.stderr : null,
        }),
      ),
    );

  cli
    .command('versions <name>', 'List the kept versions of a function and which serve')
    .option('--json', 'Print JSON')
    .action(async (name: string, options: { json?: boolean }) => out(await versions(name, Boolean(options.json), env)));

  cli
    .command('rollback <name>', 'Serve an earlier version to every call, at once (default: the one before)')
    .option('--to <version>', 'The version to serve')
    .action(async (name: string, options: { to?: string | number }) => out(await rollback(name, options.to === undefined ? undefined : String(options.to), env)));

  cli
    .command('traffic <name> [...shares]', 'Share calls between up to two versions, e.g. "islet traffic hello 4=90 5=10"')
    .action(async (name: string, shares: string[]) => out(await traffic(name, shares.map(String), env)));

  cli.command('promote <name>', 'Send every call to the newest version').action(async (name: string) => out(await promote(name, env)));

  cli
    .command('keys <action> [name]', 'Manage API keys: "keys create", "keys list", "keys revoke <name>"')
    .option('--name <name>', "keys create: the key's name (default: its id)")
    .option('--scope <scope>', 'keys create: invoke (call functions only; the default) or admin (everything)')
    .option('--json', 'Print JSON')
    .option('--quiet', 'keys create: print only the key')
    .action(async (action: string, name: string | undefined, options: { name?: string; scope?: string; json?: boolean; quiet?: boolean }) => {
      if (action === 'create')
        return out(await createKey({ name: options.name === undefined ? undefined : String(options.name), scope: options.scope, json: options.json, quiet: options.quiet }, env));
      if (action === 'list') return out(await listKeys(Boolean(options.json), env));
      if (action === 'revoke') return out(await revokeKey(name === undefined ? undefined : String(name), env));
      throw new CliError(`keys ${action}: unknown action (expected create, list or revoke)`);
    });

  cli
    .command('stats <name>', "Print a function's rate, errors and p50/p99 latency over the last minutes")
    .option('--window <window>', 'How far back: 30s to 24h, e.g. 5m, 1h', { default: '5m' })
    .option('--json', 'Print JSON (with a series per time slot)')
    .action(async (name: string, options: { window: string; json?: boolean }) => out(await stats(name, { window: String(options.window), json: options.json }, env)));

  cli
    .command('invoke <name>', 'Call a function and print its response body (whatever its status; 400 and over also exit 1)')
    .option('--data <json>', 'JSON request body, or @file / @- (standard input) to send a file as it is')
    .option('--query <key=value>', 'Query parameter (repeatable)')
    .option('--method <method>', 'HTTP method', { default: 'POST' })
    .option('--path <path>', 'Path after the function name, e.g. /items/42')
    .option('-i, --include', 'Print the status line and the headers before the body')
    .option('--async', 'Queue the call to run later and print its invocation id (see "islet invocations")')
    .action(async (name: string, options: { data?: string | number; query?: string | string[]; method?: string; path?: string; include?: boolean; async?: boolean }) => {
      const data = options.data === undefined ? undefined : String(options.data);
      if (options.async) return out(await invokeAsync(name, { ...options, data, env }));
      return invoke(name, { ...options, data, include: Boolean(options.include), env, cwd: io.cwd, write: io.stdout, stdin: io.stdin });
    });

  cli
    .command('invocations <name> [id]', "List a function's recent asynchronous invocations, or show one with its result")
    .option('--limit <n>', 'How many (1-1000)', { default: 20 })
    .option('--json', 'Print JSON')
    .action(async (name: string, id: string | undefined, options: { limit: number; json?: boolean }) =>
      out(await invocations(name, id === undefined ? undefined : String(id), { limit: String(options.limit), json: options.json }, env)),
    );

  cli
    .command('schedules', "List the account's schedules: each one's next tick and its last run")
    .option('--json', 'Print JSON')
    .action(async (options: { json?: boolean }) => out(await schedules({ json: options.json }, env)));

  cli.command('remove <name>', 'Remove a deployed function').action(async (name: string) => out(await remove(name, env)));

  cli
    .command('list', 'List deployed functions')
    .option('--json', 'Print JSON')
    .action(async (options: { json?: boolean }) => out(await list(Boolean(options.json), env)));

  cli
    .command('logs <name>', "Print a function's logs")
    .option('--since <time>', 'ISO date, unix seconds, or a duration back from now (30s, 15m, 2h, 3d)')
    .option('--tail', 'Keep printing new lines')
    .option('--level <level>', 'Only this level and more severe ones: debug, log, info, call, warn, error')
    .option('--json', 'One JSON object per line')
    .action(async (name: string, options: { since?: string; tail?: boolean; level?: string; json?: boolean }) =>
      logs(name, { since: options.since === undefined ? undefined : String(options.since), tail: options.tail, level: options.level, json: options.json, env, write: io.stdout }),
    );

  cli
    .command('login', 'Store the server URL, account id and API key (checked against the server)')
    .option('--url <url>', 'Server URL')
    .option('--account <id>', 'Account id')
    .option('--key <key>', 'API key')
    .action(async (options: { url?: string; account?: string; key?: string }) =>
      out(await login({ url: options.url, account: options.account === undefined ? undefined : String(options.account), key: options.key, env, terminal: io.stdinIsTTY })),
    );

  cli.command('show <what>', 'Print apiKey, accountId or url').action((what: string) => out(show(what, env)));

  cli
    .command('perf <name>', 'Measure call latency and rate')
    .option('-n, --number <n>', 'Number of calls', { default: 5000 })
    .option('-c, --concurrency <c>', 'Calls in flight at once', { default: 1 })
    .option('--data <json>', 'JSON request body')
    .action(async (name: string, options: { number: number; concurrency: number; data?: string }) =>
      out(await perf(name, { number: Number(options.number), concurrency: Number(options.concurrency), data: options.data, env })),
    );

  const serve = cli.command('serve', 'Run the islet server');
  for (const setting of SETTINGS) serve.option(flagUsage(setting), `${setting.help} (default: ${setting.shown}${setting.env ? `, or $${setting.env}` : ''})`);
  serve
    // The server, the stores and the runtimes load only for the verbs that use them.
    .action(async (options: Record<string, unknown>) => (await import('../supervisor/main')).serve(serveArgs(options)));

  cli
    .command('account <action> [id]', 'Offline admin: "account create" adds an account and prints its id and key; "account limits <id>" sets its own limits')
    .option('--data <dir>', 'Data directory', { default: '.islet-data' })
    .option('--store <url>', 'postgres://… instead of the data directory (or $ISLET_STORE)')
    .option('--json', 'account create: print {"accountId", "apiKey"} as JSON')
    .option('--max-inflight <n>', "account limits: calls of the account's functions running at once")
    .option('--rate <n>', 'account limits: calls per second over time (0: no bound)')
    .option('--burst <n>', 'account limits: calls at once above the rate')
    .option('--max-functions <n>', 'account limits: functions the account may have')
    .option('--max-code-mb <mb>', "account limits: code the account may keep (its functions' kept versions, unpacked)")
    .option('--max-log-mb <mb>', 'account limits: log files the account may keep on a node')
    .option('--keep-versions <n>', 'account limits: the newest versions of each of its functions kept, serving ones besides')
    .option('--reset', "account limits: back to the server's defaults")
    .action(
      async (
        action: string,
        id: string | undefined,
        options: { data: string; store?: string; json?: boolean; reset?: boolean } & Record<'maxInflight' | 'rate' | 'burst' | 'maxFunctions' | 'maxCodeMb' | 'maxLogMb' | 'keepVersions', unknown>,
      ) => {
        const where = { dataDir: path.resolve(io.cwd, String(options.data)), storeUrl: options.store ?? (env.ISLET_STORE || undefined) };
        const account = await import('./commands/account');
        if (action === 'create') return out(await account.createAccount(where, Boolean(options.json)));
        if (action === 'limits') {
          const text = (v: unknown) => (v === undefined ? undefined : String(v));
          return out(
            await account.accountLimits(where, text(id), {
              maxInflight: text(options.maxInflight),
              rate: text(options.rate),
              burst: text(options.burst),
              maxFunctions: text(options.maxFunctions),
              maxCodeMb: text(options.maxCodeMb),
              maxLogMb: text(options.maxLogMb),
              keepVersions: text(options.keepVersions),
              reset: options.reset,
            }),
          );
        }
        throw new CliError(`account ${action}: unknown action (expected "account create" or "account limits <id>")`);
      },
    );

  cli
    .command('store <action>', '"store copy --from <data-dir|postgres://…> --to <data-dir|postgres://…>" copies accounts, keys, functions, their versions and splits between stores')
    .option('--from <store>', 'A data directory or a postgres:// URL')
    .option('--to <store>', 'A data directory or a postgres:// URL')
    .action(async (action: string, options: { from?: string; to?: string }) => {
      if (action !== 'copy') throw new CliError(`store ${action}: unknown action (expected "store copy")`);
      out(await (await import('./commands/store')).copyStore(storePlace(io, options.from), storePlace(io, options.to)));
    });

  cli.help();
  cli.version(version);
  return cli;
}

/** Refusals of the key that say which key it was, when the CLI knows where it came from. */
const KEY_REFUSALS = new Set(['ERR_FORBIDDEN', 'ERR_BAD_KEY', 'ERR_NO_KEY']);

/** A refusal of the key, with where that key came from (a variable, or the login file). */
function withKeyOrigin(err: ServerError, env: NodeJS.ProcessEnv): string {
  const origin = keyOrigin(env);
  if (!KEY_REFUSALS.has(err.body.errorCode) || origin === undefined) return err.message;
  return `${err.message} (the key came from ${origin})`;
}

/**
 * cac prints help and the version with console.log: for that synchronous call, its lines go to
 * the run's stdout.
 */
function printing<T>(io: CliIo, work: () => T): T {
  const log = console.log;
  console.log = (...args: unknown[]) => io.stdout(`${format(...args)}\n`);
  try {
    return work();
  } finally {
    console.log = log;
  }
}

/** Runs one command line; answers its exit code. */
export async function run(argv: string[], given: CliIo = processIo()): Promise<number> {
  // An env of its own: what a run remembers by its env (its notices, its key's origin) is its own.
  const io = { ...given, env: { ...given.env } };
  sendNotices(io.env, io.stderr);
  const cli = buildCli(io);
  try {
    printing(io, () => cli.parse(['node', 'islet', ...argv], { run: false }));
    if (!cli.matchedCommand) {
      if (cli.args.length > 0) throw new CliError(`unknown command "${cli.args[0]}" (see "islet --help")`);
      if (!cli.options.help && !cli.options.version) printing(io, () => cli.outputHelp());
      return 0;
    }
    await cli.runMatchedCommand();
    return 0;
  } catch (err) {
    const message = err instanceof ServerError ? withKeyOrigin(err, io.env) : err instanceof Error ? err.message : String(err);
    const detail = err instanceof CliError && err.detail ? `${err.detail.replace(/\n*$/, '')}\n` : '';
    io.stderr(`islet: ${message.split('\n')[0]}\n${detail}`);
    return err instanceof CliError ? err.exitCode : 1;
  }
}

/** bin/islet: a run on the process's own arguments, streams and folder. */
export async function main(argv: string[]): Promise<void> {
  const code = await run(argv);
  if (code !== 0) process.exitCode = code;
}
