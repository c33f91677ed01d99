/**
 * The management API, as the console uses it: JSON over fetch with the key in the
 * X-Service-Api-Key header (never in a URL or a cookie), errors as `ApiError` with the server's code.
 */

import type { ConsoleAnswer, ConsoleCall, KeyScope } from '../../engine/wire';

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
  /** How the entry is called (absent for versions deployed before islet kept it). */
  style?: 'handler' | 'fetch';
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

/** A function's answer as the invoke form shows it. */
export interface FunctionAnswer {
  status: number;
  statusText: string;
  headers: [string, string][];
  body: Uint8Array;
}

/**
 * Calls a function through the console's port (POST /console/invoke): the request and the answer
 * travel as JSON, so no answer of a function is ever a response of the console's origin. Throws
 * ApiError when the console's port refuses the request itself (not when the function refuses it).
 */
export async function invokeFunction(call: Omit<ConsoleCall, 'body'> & { body: Uint8Array }): Promise<FunctionAnswer> {
  let response: Response;
  try {
    response = await fetch('/console/invoke', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ...call, body: toBase64(call.body) } satisfies ConsoleCall),
      cache: 'no-store',
    });
  } catch (err) {
    throw new ApiError(0, 'ERR_NETWORK', `the server cannot be reached (${(err as Error).message})`);
  }
  const answer = await readAnswer<ConsoleAnswer>(response);
  return { ...answer, body: fromBase64(answer.body) };
}

function toBase64(bytes: Uint8Array): string {
  let binary = '';
  // In slices: String.fromCharCode takes its arguments on the stack.
  for (let at = 0; at < bytes.length; at += 0x8000) binary += String.fromCharCode(...bytes.subarray(at, at + 0x8000));
  return btoa(binary);
}

function fromBase64(text: string): Uint8Array {
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}
