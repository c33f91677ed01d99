import type { KeyDescription } from '../../engine/wire';
import { apiRequest } from '../api';
import { requireAccount } from '../config';
import { CliError } from '../errors';
import { table } from '../table';

/** `islet keys create [--name N] [--scope invoke|admin] [--json|--quiet]`: prints the new key, once. */
export async function createKey(options: { name?: string; scope?: string; json?: boolean; quiet?: boolean }, env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const c = requireAccount(env);
  const { apiKey, key } = await apiRequest<{ apiKey: string; key: KeyDescription }>(c.url, 'POST', `/v2/accounts/${c.accountId}/keys`, c.apiKey, {
    name: options.name,
    scope: options.scope ?? 'invoke',
  });
  if (options.json) return `${JSON.stringify({ apiKey, ...key })}\n`;
  if (options.quiet) return `${apiKey}\n`;
  return `Created key ${key.name} (scope ${key.scope}); it is shown only now, only its hash is stored:\n${apiKey}\n`;
}

/** `islet keys list [--json]`: names, scopes, creation and last use; never the keys. */
export async function listKeys(json: boolean, env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const c = requireAccount(env);
  const { keys } = await apiRequest<{ keys: KeyDescription[] }>(c.url, 'GET', `/v2/accounts/${c.accountId}/keys`, c.apiKey);
  if (json) return `${JSON.stringify(keys, null, 2)}\n`;
  return table([['NAME', 'SCOPE', 'CREATED', 'LAST USED'], ...keys.map((k) => [k.name, k.scope, k.createdAt, k.lastUsedAt ?? 'never'])]);
}

/** `islet keys revoke <name>`. */
export async function revokeKey(name: string | undefined, env: NodeJS.ProcessEnv = process.env): Promise<string> {
  if (!name) throw new CliError('keys revoke: name the key to revoke (see "islet keys list")');
  const c = requireAccount(env);
  await apiRequest(c.url, 'DELETE', `/v2/accounts/${c.accountId}/keys/${encodeURIComponent(name)}`, c.apiKey);
  return `Revoked key ${name}\n`;
}
