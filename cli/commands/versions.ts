import { apiRequest } from '../api';
import { requireAccount } from '../config';
import { CliError } from '../errors';
import { table } from '../table';

interface Share {
  version: number;
  percent: number;
}

interface VersionRow {
  version: number;
  deployedAt: string;
  message?: string;
  contentHash: string;
  percent: number;
}

function functionPath(accountId: string, name: string, rest = ''): string {
  return `/v2/accounts/${accountId}/functions/${encodeURIComponent(name)}${rest}`;
}

/** `4 serves all calls` / `4 serves 90% of calls, 5 serves 10%`. */
export function servingText(name: string, traffic: Share[]): string {
  if (traffic.length === 1) return `${name}: version ${traffic[0]!.version} serves all calls\n`;
  return `${name}: ${traffic.map((s, i) => `version ${s.version} serves ${s.percent}%${i === 0 ? ' of calls' : ''}`).join(', ')}\n`;
}

/** `islet versions <name> [--json]`: the kept versions, newest first, and which serve. */
export async function versions(name: string, json: boolean, env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const c = requireAccount(env);
  const list = await apiRequest<{ latest: number; traffic: Share[]; versions: VersionRow[] }>(c.url, 'GET', functionPath(c.accountId, name, '/versions'), c.apiKey);
  if (json) return `${JSON.stringify(list, null, 2)}\n`;
  return table([
    ['VERSION', 'SERVING', 'DEPLOYED', 'HASH', 'MESSAGE'],
    ...list.versions.map((v) => [String(v.version), v.percent > 0 ? `${v.percent}%` : '', v.deployedAt, v.contentHash.slice(0, 12), v.message ?? '']),
  ]);
}

/** `islet rollback <name> [--to N]`. */
export async function rollback(name: string, to: string | undefined, env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const c = requireAccount(env);
  const body: { to?: number } = {};
  if (to !== undefined) {
    if (!/^\d+$/.test(to)) throw new CliError(`--to ${to}: expected a version number (see "islet versions ${name}")`);
    body.to = Number(to);
  }
  const { traffic } = await apiRequest<{ traffic: Share[] }>(c.url, 'POST', functionPath(c.accountId, name, '/rollback'), c.apiKey, body);
  return servingText(name, traffic);
}

/** `islet traffic <name> 4=90 5=10`. */
export async function traffic(name: string, pairs: string[], env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const c = requireAccount(env);
  if (pairs.length === 0) throw new CliError(`traffic: give VERSION=PERCENT pairs, such as "islet traffic ${name} 4=90 5=10"`);
  const shares = pairs.map((pair) => {
    const m = /^(\d+)=(-?[\d.]+)%?$/.exec(pair);
    if (!m) throw new CliError(`traffic: ${JSON.stringify(pair)} is not VERSION=PERCENT (such as 4=90)`);
    return { version: Number(m[1]), percent: Number(m[2]) };
  });
  const answer = await apiRequest<{ traffic: Share[] }>(c.url, 'PUT', functionPath(c.accountId, name, '/traffic'), c.apiKey, { traffic: shares });
  return servingText(name, answer.traffic);
}

/** `islet promote <name>`: every call to the newest version. */
export async function promote(name: string, env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const c = requireAccount(env);
  const { traffic } = await apiRequest<{ traffic: Share[] }>(c.url, 'POST', functionPath(c.accountId, name, '/promote'), c.apiKey);
  return servingText(name, traffic);
}
