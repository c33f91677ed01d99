import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import * as path from 'node:path';
import { CliError } from './errors';

export interface Credentials {
  url: string;
  accountId?: string;
  apiKey?: string;
}

export const DEFAULT_URL = 'http://127.0.0.1:8080';

/**
 * The CLI's own variables, and the names it read before them. The old ones are also what a
 * function's env calls its key (`SERVICE_API_KEY` in service.yml, read from the deploying shell),
 * so exporting a function's invoke key for a deploy used to make it the CLI's key too.
 */
const VARIABLES: { field: keyof Credentials; name: string; old: string }[] = [
  { field: 'url', name: 'ISLET_URL', old: 'SERVICE_URL' },
  { field: 'accountId', name: 'ISLET_ACCOUNT', old: 'SERVICE_ACCOUNT_ID' },
  { field: 'apiKey', name: 'ISLET_API_KEY', old: 'SERVICE_API_KEY' },
];

export function configFile(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_CONFIG_HOME || path.join(homedir(), '.config');
  return path.join(base, 'islet', 'credentials.json');
}

/** Where each credential came from: a variable's name, the login file, or the default. */
export type Origins = Partial<Record<keyof Credentials, string>>;

/**
 * The origins of the credentials a run loaded last, by the environment it read them from (for the
 * errors it reports): a test runs several commands at once in one process, each with its own env.
 */
const lastOrigins = new WeakMap<NodeJS.ProcessEnv, Origins>();

/** Where the notices of a run go, by the environment it reads (a test's runs in its own process); stderr otherwise. */
const noticeSinks = new WeakMap<NodeJS.ProcessEnv, (line: string) => void>();

export function sendNotices(env: NodeJS.ProcessEnv, sink: (line: string) => void): void {
  noticeSinks.set(env, sink);
}

/**
 * Credentials: ISLET_URL, ISLET_ACCOUNT and ISLET_API_KEY, else the old SERVICE_URL,
 * SERVICE_ACCOUNT_ID and SERVICE_API_KEY (still read, with a one-line notice), else what `islet
 * login` stored. `notice` gets that line (stderr by default).
 */
export function loadCredentials(env: NodeJS.ProcessEnv = process.env, notice: (line: string) => void = noticeSinks.get(env) ?? ((line) => process.stderr.write(line))): Credentials {
  let stored: Partial<Credentials> = {};
  const file = configFile(env);
  try {
    stored = JSON.parse(readFileSync(file, 'utf8')) as Partial<Credentials>;
  } catch {
    stored = {};
  }
  const values: Partial<Credentials> = {};
  const origins: Origins = {};
  const oldUsed: string[] = [];
  const ignored: string[] = [];
  for (const v of VARIABLES) {
    const own = env[v.name];
    const old = env[v.old];
    if (own) {
      values[v.field] = own;
      origins[v.field] = v.name;
      if (old && old !== own) ignored.push(`${v.old} (${v.name} is set)`);
    } else if (old) {
      values[v.field] = old;
      origins[v.field] = v.old;
      oldUsed.push(v.old);
    } else if (stored[v.field]) {
      values[v.field] = stored[v.field];
      origins[v.field] = `the login file ${file}`;
    }
  }
  if (oldUsed.length) {
    const own = oldUsed.map((old) => VARIABLES.find((v) => v.old === old)!.name);
    notice(
      `islet: using ${list(oldUsed)}, the old name${oldUsed.length > 1 ? 's' : ''} of ${list(own)}${oldUsed.includes('SERVICE_API_KEY') ? ' (SERVICE_API_KEY is also what service.yml hands to functions)' : ''}\n`,
    );
  }
  if (ignored.length) notice(`islet: ignoring ${list(ignored)}\n`);
  lastOrigins.set(env, origins);
  return { url: (values.url || DEFAULT_URL).replace(/\/+$/, ''), accountId: values.accountId, apiKey: values.apiKey };
}

function list(names: string[]): string {
  return names.length <= 1 ? names.join('') : `${names.slice(0, -1).join(', ')} and ${names[names.length - 1]}`;
}

/** Where the key of the credentials last loaded from `env` came from, for a refusal's message (undefined: no key was loaded). */
export function keyOrigin(env: NodeJS.ProcessEnv = process.env): string | undefined {
  return lastOrigins.get(env)?.apiKey;
}

export function saveCredentials(credentials: Credentials, env: NodeJS.ProcessEnv = process.env): string {
  const file = configFile(env);
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  writeFileSync(file, JSON.stringify(credentials, null, 2) + '\n', { mode: 0o600 });
  chmodSync(file, 0o600);
  return file;
}

/** Credentials with an account and a key, or an error saying how to get them. */
export function requireAccount(env: NodeJS.ProcessEnv = process.env): Required<Credentials> {
  const c = loadCredentials(env);
  if (!c.accountId || !c.apiKey) {
    throw new CliError('not logged in: run "islet login" (or set ISLET_ACCOUNT and ISLET_API_KEY)');
  }
  return c as Required<Credentials>;
}
