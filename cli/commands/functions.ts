import type { FunctionDescription } from '../../engine/manifest';
import { apiRequest } from '../api';
import { requireAccount } from '../config';

/** `islet remove <name>`. */
export async function remove(name: string, env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const c = requireAccount(env);
  await apiRequest(c.url, 'DELETE', `/v2/accounts/${c.accountId}/functions/${encodeURIComponent(name)}`, c.apiKey);
  return `Removed function ${name}\n`;
}

/** `islet list [--json]`: a table, or the JSON list. */
export async function list(json: boolean, env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const c = requireAccount(env);
  const { functions } = await apiRequest<{ functions: FunctionDescription[] }>(c.url, 'GET', `/v2/accounts/${c.accountId}/functions`, c.apiKey);
  if (json) return `${JSON.stringify(functions, null, 2)}\n`;
  if (functions.length === 0) return 'No functions deployed (use "islet create" and "islet deploy")\n';
  const rows = [['NAME', 'RUNTIME', 'VERSION', 'DEPLOYED', 'ACCESS'], ...functions.map((f) => [f.name, f.runtime, f.version, f.deployedAt, f.public ? 'public' : 'key'])];
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((r) => r.map((cell, i) => cell.padEnd(widths[i]!)).join('  ').trimEnd()).join('\n') + '\n';
}
