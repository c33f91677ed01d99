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

export function configFile(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_CONFIG_HOME || path.join(homedir(), '.config');
  return path.join(base, 'islet', 'credentials.json');
}

/** Stored credentials, overridden by SERVICE_URL, SERVICE_ACCOUNT_ID and SERVICE_API_KEY. */
export function loadCredentials(env: NodeJS.ProcessEnv = process.env): Credentials {
  let stored: Partial<Credentials> = {};
  try {
    stored = JSON.parse(readFileSync(configFile(env), 'utf8')) as Partial<Credentials>;
  } catch {
    stored = {};
  }
  return {
    url: (env.SERVICE_URL || stored.url || DEFAULT_URL).replace(/\/+$/, ''),
    accountId: env.SERVICE_ACCOUNT_ID || stored.accountId,
    apiKey: env.SERVICE_API_KEY || stored.apiKey,
  };
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
    throw new CliError('not logged in: run "islet login" (or set SERVICE_ACCOUNT_ID and SERVICE_API_KEY)');
  }
  return c as Required<Credentials>;
}
