import type { InvocationView } from '../../engine/jobs/records';
import { apiRequest } from '../api';
import { requireAccount } from '../config';
import { CliError } from '../errors';
import { table } from '../table';
import { queryString, type InvokeOptions } from './invoke';

/** `islet invoke <name> --async`: queues the call and prints its invocation id (`islet invocations <name> <id>` shows how it went). */
export async function invokeAsync(name: string, options: InvokeOptions = {}): Promise<string> {
  const c = requireAccount(options.env ?? process.env);
  const method = (options.method ?? 'POST').toUpperCase();
  if (options.data !== undefined) {
    try {
      JSON.parse(options.data);
    } catch {
      throw new CliError(`--data is not valid JSON: ${options.data}`);
    }
  }
  const rest = options.path ? (options.path.startsWith('/') ? options.path : `/${options.path}`) : '';
  const url = `${c.url}/v2/async/${c.accountId}/${encodeURIComponent(name)}${rest}${queryString(options.query)}`;
  let response: Response;
  try {
    response = await fetch(url, {
      method,
      headers: { 'X-Service-Api-Key': c.apiKey, 'Content-Type': 'application/json' },
      body: method === 'GET' || method === 'HEAD' ? undefined : (options.data ?? ''),
    });
  } catch (err) {
    throw new CliError(`cannot reach the islet server at ${c.url}: ${((err as Error & { cause?: Error }).cause ?? (err as Error)).message}`);
  }
  const text = await response.text();
  let body: { invocationId?: string; errorCode?: string; message?: string } = {};
  try {
    body = JSON.parse(text) as typeof body;
  } catch {
    // shown as is below
  }
  if (response.status !== 202 || !body.invocationId) throw new CliError(`${response.status} ${body.errorCode ? `${body.errorCode}: ${body.message}` : text}`);
  return `${body.invocationId}\n`;
}

/** `islet invocations <name> [id] [--limit N] [--json]`: a function's recent asynchronous invocations, or one with its result. */
export async function invocations(name: string, id: string | undefined, options: { limit?: string; json?: boolean } = {}, env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const c = requireAccount(env);
  if (id !== undefined) {
    const one = await apiRequest<InvocationView>(c.url, 'GET', `/v2/accounts/${c.accountId}/invocations/${encodeURIComponent(id)}`, c.apiKey);
    if (one.function !== name) throw new CliError(`invocation ${id} is of function ${one.function}, not ${name}`);
    if (options.json) return `${JSON.stringify(one, null, 2)}\n`;
    const lines = [`${one.invocationId}  ${one.status}  attempts ${one.attempts}  accepted ${one.createdAt}${one.finishedAt ? `  finished ${one.finishedAt}` : ''}`];
    if (one.requestId) lines.push(`  request id ${one.requestId} (islet logs ${name})`);
    if (one.error) lines.push(`  error ${one.error.errorCode}: ${one.error.message}`);
    if (one.result) lines.push(`  answered ${one.result.status}`, ...one.result.body.split('\n').map((l) => `  ${l}`));
    return `${lines.join('\n')}\n`;
  }
  const limit = options.limit ?? '20';
  const { invocations: list } = await apiRequest<{ invocations: InvocationView[] }>(
    c.url,
    'GET',
    `/v2/accounts/${c.accountId}/functions/${encodeURIComponent(name)}/invocations?limit=${encodeURIComponent(limit)}`,
    c.apiKey,
  );
  if (options.json) return `${JSON.stringify(list, null, 2)}\n`;
  if (list.length === 0) return `No asynchronous invocations of ${name} (use "islet invoke ${name} --async")\n`;
  return table([
    ['ID', 'STATUS', 'ATTEMPTS', 'ACCEPTED', 'FINISHED', 'ERROR'],
    ...list.map((i) => [i.invocationId, i.status, String(i.attempts), i.createdAt, i.finishedAt ?? '-', i.error?.errorCode ?? '-']),
  ]);
}
