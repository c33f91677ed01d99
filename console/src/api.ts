/**
 * The management API, as the console uses it: JSON over fetch with the key in the
 * X-Service-Api-Key header (never in a URL or a cookie), errors as `ApiError` with the server's code.
 */

import type { KeyScope } from '../../engine/wire';

export type { KeyScope };

export interface Session {
  accountId: string;
  key: string;
  /** The key's scope; keys of a server without scopes can do everything. */
  scope: KeyScope;
  keyName: string | undefined;
}

/** A function as the management API describes it. */
export interface FunctionInfo {
  name: string;
  runtime: string;
  file: string;
  entrypoint: string;
  version: string | number;
  deployedAt: string;
  message?: string;
  contentHash: string;
  bytes: number;
  files: number;
  /** The names of its env variables (never their values). */
  env: string[];
  timeoutMs?: number;
  memoryMb?: number;
  public: boolean;
  traffic?: { version: number; percent: number }[];
}

export interface LogEntry {
  t: number;
  requestId: string;
  level: string;
  message: string;
  code?: string;
  stack?: string;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** `/v2/accounts/<account><rest>`. */
export function accountPath(session: Pick<Session, 'accountId'>, rest: string): string {
  return `/v2/accounts/${encodeURIComponent(session.accountId)}${rest}`;
}

export function functionPath(session: Pick<Session, 'accountId'>, name: string, rest = ''): string {
  return accountPath(session, `/functions/${encodeURIComponent(name)}${rest}`);
}

/** A JSON request to the management API; throws ApiError on an error answer. */
export async function api<T>(key: string, method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { 'X-Service-Api-Key': key };
  if (body !== undefined) headers['content-type'] = 'application/json';
  let response: Response;
  try {
    response = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), cache: 'no-store' });
  } catch (err) {
    throw new ApiError(0, 'ERR_NETWORK', `the server cannot be reached (${(err as Error).message})`);
  }
  return readAnswer<T>(response);
}

/** The JSON of an answer, or its error as an ApiError. */
export async function readAnswer<T>(response: Response): Promise<T> {
  const text = await response.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new ApiError(response.status, 'ERR_BAD_RESPONSE', `the server answered ${response.status} with a body that is not JSON`);
  }
  if (!response.ok) {
    const error = json as { errorCode?: string; message?: string };
    throw new ApiError(response.status, error.errorCode ?? `HTTP_${response.status}`, error.message ?? text);
  }
  return json as T;
}

/** Checks a key with the server: its account, and its name and scope when the server has scoped keys. */
export async function whoami(key: string): Promise<{ accountId: string; key?: { name: string; scope: KeyScope } }> {
  return api(key, 'GET', '/v2/whoami');
}
