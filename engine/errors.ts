/** Error codes of the invocation contract (SPEC §2) and of the management API. */
export type ErrorCode =
  | 'ERR_NO_KEY'
  | 'ERR_BAD_KEY'
  | 'ERR_NO_SUCH_FUNCTION'
  | 'ERR_PAYLOAD_TOO_LARGE'
  | 'ERR_FUNCTION_FAILED'
  | 'ERR_RESOURCE_LIMIT'
  | 'ERR_BAD_RESPONSE'
  | 'ERR_OVERLOADED'
  | 'ERR_TIMEOUT'
  | 'ERR_INTERNAL'
  | 'ERR_BAD_REQUEST'
  | 'ERR_INVALID_FUNCTION'
  | 'ERR_NOT_FOUND'
  | 'ERR_STORE_UNAVAILABLE'
  | 'ERR_FORBIDDEN'
  | 'ERR_RATE_LIMITED'
  | 'ERR_CONFLICT'
  | 'ERR_QUOTA_EXCEEDED'
  | 'ERR_CLIENT_GONE';

export const STATUS_OF: Record<ErrorCode, number> = {
  ERR_NO_KEY: 401,
  ERR_BAD_KEY: 403,
  ERR_NO_SUCH_FUNCTION: 404,
  ERR_PAYLOAD_TOO_LARGE: 413,
  ERR_FUNCTION_FAILED: 500,
  ERR_RESOURCE_LIMIT: 500,
  ERR_BAD_RESPONSE: 502,
  ERR_OVERLOADED: 503,
  ERR_TIMEOUT: 504,
  ERR_INTERNAL: 500,
  ERR_BAD_REQUEST: 400,
  ERR_INVALID_FUNCTION: 400,
  ERR_NOT_FOUND: 404,
  ERR_STORE_UNAVAILABLE: 503,
  ERR_FORBIDDEN: 403,
  ERR_RATE_LIMITED: 429,
  ERR_CONFLICT: 409,
  // 403, not 413 (a one-line deploy can be over the function count) nor 507 (a 5xx says the server
  // failed, and clients and proxies retry those): the account must remove something first.
  ERR_QUOTA_EXCEEDED: 403,
  // Never sent (the client is gone): what a call's log line and metrics say of a streamed answer its
  // client left before its end (nginx's 499).
  ERR_CLIENT_GONE: 499,
};

/** An error that is part of islet's contract: it carries a code and becomes a JSON error response. */
export class ServiceError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  /** Extra fields for the JSON body (e.g. the user's `stack`, or `file`/`line` of a deploy error). */
  readonly details: Record<string, unknown> | undefined;

  constructor(code: ErrorCode, message: string, details?: Record<string, unknown>) {
    super(message);
    this.name = 'ServiceError';
    this.code = code;
    this.status = STATUS_OF[code];
    this.details = details;
  }
}

export function isServiceError(value: unknown): value is ServiceError {
  return value instanceof ServiceError;
}
