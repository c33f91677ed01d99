import { cac } from 'cac';
import { ServerError } from './api';
import { create } from './commands/create';
import { deploy } from './commands/deploy';
import { list, remove } from './commands/functions';
import { invoke } from './commands/invoke';
import { login, show } from './commands/login';
import { logs } from './commands/logs';
import { perf } from './commands/perf';
import { CliError } from './errors';

// eslint-disable-next-line @typescript-eslint/no-var-requires
const { version } = require('../../package.json') as { version: string };

const out = (text: string) => process.stdout.write(text);

function serveArgs(options: Record<string, unknown>): string[] {
  const args: string[] = [];
  for (const key of ['port', 'host', 'data', 'store', 'advertiseUrl', 'workers', 'warmMemory', 'maxWorkerRss', 'maxInstances'] as const) {
    if (options[key] !== undefined) args.push(`--${key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`, String(options[key]));
  }
  if (options.allowPrivateEgress) args.push('--allow-private-egress');
  return args;
}

export function buildCli() {
  const cli = cac('islet');

  cli.command('create <runtime> <name>', 'Create a function folder with a starter handler and service.yml (runtime: node8, python2, python3)')
    .example('islet create node8 hello')
    .action((runtime: string, name: string) => out(create(runtime, name)));

  cli.command('deploy <name>', 'Deploy a function described in service.yml')
    .option('--dir <dir>', 'Function folder (default: ./<name> if it has a service.yml, else the current folder)')
    .action(async (name: string, options: { dir?: string }) => out(await deploy(name, { dir: options.dir })));

  cli.command('invoke <name>', 'Call a function and print its response body')
    .option('--data <json>', 'JSON request body')
    .option('--query <key=value>', 'Query parameter (repeatable)')
    .option('--method <method>', 'HTTP method', { default: 'POST' })
    .option('--path <path>', 'Path after the function name, e.g. /items/42')
    .action(async (name: string, options: { data?: string; query?: string | string[]; method?: string; path?: string }) => out(await invoke(name, options)));

  cli.command('remove <name>', 'Remove a deployed function')
    .action(async (name: string) => out(await remove(name)));

  cli.command('list', 'List deployed functions')
    .option('--json', 'Print JSON')
    .action(async (options: { json?: boolean }) => out(await list(Boolean(options.json))));

  cli.command('logs <name>', "Print a function's logs")
    .option('--since <time>', 'ISO date, unix seconds, or a duration back from now (30s, 15m, 2h, 3d)')
    .option('--tail', 'Keep printing new lines')
    .action(async (name: string, options: { since?: string; tail?: boolean }) => logs(name, { since: options.since === undefined ? undefined : String(options.since), tail: options.tail }));

  cli.command('login', 'Store the server URL, account id and API key (checked against the server)')
    .option('--url <url>', 'Server URL')
    .option('--account <id>', 'Account id')
    .option('--key <key>', 'API key')
    .action(async (options: { url?: string; account?: string; key?: string }) => out(await login({ url: options.url, account: options.account === undefined ? undefined : String(options.account), key: options.key })));

  cli.command('show <what>', 'Print apiKey, accountId or url')
    .action((what: string) => out(show(what)));

  cli.command('perf <name>', 'Measure call latency and rate')
    .option('-n, --number <n>', 'Number of calls', { default: 5000 })
    .option('-c, --concurrency <c>', 'Calls in flight at once', { default: 1 })
    .option('--data <json>', 'JSON request body')
    .action(async (name: string, options: { number: number; concurrency: number; data?: string }) =>
      out(await perf(name, { number: Number(options.number), concurrency: Number(options.concurrency), data: options.data })));

  cli.command('serve', 'Run the islet server')
    .option('--port <port>', 'Port (default 8080, or $PORT)')
    .option('--host <host>', 'Address to listen on (default 127.0.0.1, or $HOST)')
    .option('--data <dir>', 'Data directory (default ./.islet-data, or $ISLET_DATA)')
    .option('--store <url>', 'postgres://… shared by several nodes (default: the data directory, or $ISLET_STORE)')
    .option('--advertise-url <url>', 'How other nodes reach this one (logs across nodes; default http://<host>:<port>)')
    .option('--workers <n>', 'Worker processes (default: the number of CPUs, or $ISLET_WORKERS)')
    .option('--warm-memory <mb>', 'Memory for warm instances, all workers together (default 4096)')
    .option('--max-worker-rss <mb>', 'A worker over this resident memory is drained and replaced')
    .option('--max-instances <n>', 'Instances of one busy function version at most (default: the number of CPUs)')
    .option('--allow-private-egress', "Let functions' fetch reach private and loopback addresses")
    // The server, the stores and the runtimes load only for the verbs that use them.
    .action(async (options: Record<string, unknown>) => (await import('../supervisor/main')).serve(serveArgs(options)));

  cli.command('account <action>', 'Offline admin: "account create" adds an account to a data directory and prints its id and key')
    .option('--data <dir>', 'Data directory', { default: '.islet-data' })
    .option('--json', 'Print {"accountId", "apiKey"} as JSON')
    .action(async (action: string, options: { data: string; json?: boolean }) => {
      if (action !== 'create') throw new CliError(`account ${action}: unknown action (expected "account create")`);
      out(await (await import('./commands/account')).createAccount(String(options.data), Boolean(options.json)));
    });

  cli.command('store <action>', '"store copy --from <data-dir|postgres://…> --to <data-dir|postgres://…>" copies accounts, keys and functions between stores')
    .option('--from <store>', 'A data directory or a postgres:// URL')
    .option('--to <store>', 'A data directory or a postgres:// URL')
    .action(async (action: string, options: { from?: string; to?: string }) => {
      if (action !== 'copy') throw new CliError(`store ${action}: unknown action (expected "store copy")`);
      out(await (await import('./commands/store')).copyStore(options.from, options.to));
    });

  cli.help();
  cli.version(version);
  return cli;
}

export async function main(argv: string[]): Promise<void> {
  const cli = buildCli();
  try {
    cli.parse(['node', 'islet', ...argv], { run: false });
    if (!cli.matchedCommand) {
      if (cli.args.length > 0) throw new CliError(`unknown command "${cli.args[0]}" (see "islet --help")`);
      if (!cli.options.help && !cli.options.version) cli.outputHelp();
      return;
    }
    await cli.runMatchedCommand();
  } catch (err) {
    const message = err instanceof CliError || err instanceof ServerError ? err.message : err instanceof Error ? err.message : String(err);
    const detail = err instanceof CliError && err.detail ? `${err.detail.replace(/\n*$/, '')}\n` : '';
    process.stderr.write(`islet: ${message.split('\n')[0]}\n${detail}`);
    process.exitCode = err instanceof CliError ? err.exitCode : 1;
  }
}
