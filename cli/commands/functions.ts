import type { FunctionDescription } from '../../engine/manifest';
import { apiRequest } from '../api';
import { requireAccount } from '../config';
import { table, trafficText } from '../table';

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
  return table([['NAME', 'RUNTIME', 'VERSION', 'DEPLOYED', 'ACCESS'], ...functions.map((f) => [f.name, f.runtime, trafficText(f.traffic), f.deployedAt, f.public ? 'public' : 'key'])]);
}
