import type { InvokeResponse, WholeResponse } from './engine';
import { ServiceError } from './errors';
import { serverLog } from './server-log';

/** All headers of a response as the client receives them, the X-Service-* ones included. */
export function responseHeaders(res: InvokeResponse): Record<string, string> {
  return {
    ...res.headers,
    'X-Service-Request-ID': res.requestId,
    'X-Service-Duration-Usecs': res.durationUs.toFixed(3),
    ...(res.version === undefined ? {} : { 'X-Service-Version': String(res.version) }),
  };
}

/** ERR_INTERNAL errors made generic already (their detail is in the server's log). */
const concealed = new WeakSet<ServiceError>();

/**
 * What a caller (and the function's logs) may see of an error. An error of the contract is itself;
 * anything else, and any ERR_INTERNAL, whose message may carry host paths or host error text (the
 * file system's, the store's, isolated-vm's), becomes an ERR_INTERNAL that names only the request
 * id; its detail goes to the server's log with that id. The answer to a call whose code folder was
 * gone read "internal error: ENOENT: no such file or directory, open '<data>/functions/…'".
 */
export function clientError(err: unknown, requestId: string): ServiceError {
  if (err instanceof ServiceError && (err.code !== 'ERR_INTERNAL' || concealed.has(err))) return err;
  serverLog.error({ code: 'ERR_INTERNAL', requestId, err }, `internal error in request ${requestId}: ${(err as Error)?.message ?? String(err)}`);
  const generic = new ServiceError('ERR_INTERNAL', `internal error (request ${requestId}); the server's log has the details`);
  concealed.add(generic);
  return generic;
}

/**
 * The JSON error body of SPEC §2: `{errorCode, message, requestId}` plus details (the user's
 * `stack`; a deploy error's `key`, `file`, `line`; a rate limit's `retryAfter`, also sent as the
 * Retry-After header).
 */
export function errorResponse(err: unknown, requestId: string, durationUs: number, version?: number): WholeResponse {
  const error = clientError(err, requestId);
  const body: Record<string, unknown> = { errorCode: error.code, message: error.message, requestId, ...error.details };
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (typeof error.details?.retryAfter === 'number') headers['retry-after'] = String(error.details.retryAfter);
  return { status: error.status, headers, body: JSON.stringify(body), requestId, durationUs, version };
}
