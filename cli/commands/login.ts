import { createInterface } from 'node:readline/promises';
import { apiRequest } from '../api';
import { loadCredentials, saveCredentials, type Credentials } from '../config';
import { CliError } from '../errors';

export interface LoginOptions {
  url?: string;
  account?: string;
  key?: string;
  env?: NodeJS.ProcessEnv;
  /** Whether standard input is a terminal to ask on (by default, whether process.stdin is). */
  terminal?: boolean;
}

/** `islet login`: asks for what the flags do not give, checks it with the server, stores it (0600). */
export async function login(options: LoginOptions = {}): Promise<string> {
  const env = options.env ?? process.env;
  const current = loadCredentials(env);
  let { url, account, key } = options;
  if (url === undefined || account === undefined || key === undefined) {
    if (!(options.terminal ?? process.stdin.isTTY) && (url === undefined || key === undefined)) {
      throw new CliError('login needs --url, --account and --key when not run in a terminal');
    }
    const rl = createInterface({ input: process.stdin, output: process.stderr });
    try {
      url ??= (await rl.question(`Server URL [${current.url}]: `)).trim() || current.url;
      account ??= (await rl.question(`Account id${current.accountId ? ` [${current.accountId}]` : ''}: `)).trim() || current.accountId;
      key ??= (await rl.question('API key: ')).trim();
    } finally {
      rl.close();
    }
  }
  if (!key) throw new CliError('an API key is needed');
  const base = url.replace(/\/+$/, '');
  const { accountId } = await apiRequest<{ accountId: string }>(base, 'GET', '/v2/whoami', key);
  if (account && account !== accountId) throw new CliError(`that key belongs to account ${accountId}, not ${account}`);
  const file = saveCredentials({ url: base, accountId, apiKey: key }, env);
  return `Logged in to ${base} as account ${accountId} (saved in ${file})\n`;
}

const SHOWABLE: Record<string, keyof Credentials> = { apikey: 'apiKey', accountid: 'accountId', url: 'url' };

/** `islet show apiKey|accountId|url`. */
export function show(what: string, env: NodeJS.ProcessEnv = process.env): string {
  const field = SHOWABLE[what.toLowerCase()];
  if (!field) throw new CliError(`show ${what}: expected apiKey, accountId or url`);
  const value = loadCredentials(env)[field];
  if (!value) throw new CliError(`no ${field} yet: run "islet login" (or set ISLET_${field === 'apiKey' ? 'API_KEY' : 'ACCOUNT'})`);
  return `${value}\n`;
}
