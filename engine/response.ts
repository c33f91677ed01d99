import { ServiceError } from './errors';
import type { FunctionResponse } from './runtime';

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const FIELD_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;
/**
 * Headers the server owns: a function cannot set them. Every `X-Service-*` name is the server's:
 * a function that answers with a Response it fetched from islet (another function's) would
 * otherwise send that call's X-Service-Version and request id beside its own.
 */
const RESERVED = new Set(['content-length', 'transfer-encoding', 'connection', 'keep-alive', 'upgrade', 'date']);
const SERVER_PREFIX = 'x-service-';

/**
 * How an answer keeps the values of a `Set-Cookie` sent several times: joined by a newline, which
 * no header value holds, and sent as a line each (http/answer.ts). Other repeated headers are
 * joined with `, `, which HTTP makes the same as several lines; cookies hold commas.
 */
export const HEADER_LINES = '\n';

/** Whether a header name is `Set-Cookie`, whatever its case. */
export function isSetCookie(name: string): boolean {
  return name.length === 10 && name.toLowerCase() === 'set-cookie';
}

/**
 * Validates the headers of an explicit response (untrusted: they come from user code) and drops
 * the ones the server manages. Names must be HTTP tokens and values must not contain CR, LF or NUL.
 * A value may be an array of such values: a header sent several times (see HEADER_LINES).
 */
export function checkResponseHeaders(headers: unknown): Record<string, string> {
  if (typeof headers !== 'object' || headers === null || Array.isArray(headers)) {
    throw new ServiceError('ERR_BAD_RESPONSE', 'response headers must be an object of names to string values');
  }
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers as Record<string, unknown>)) {
    if (!TOKEN.test(name)) throw new ServiceError('ERR_BAD_RESPONSE', `response header name ${JSON.stringify(name)} is not a valid HTTP header name`);
    const values = Array.isArray(value) ? (value as unknown[]) : [value];
    for (const one of values) {
      if (typeof one !== 'string')
        throw new ServiceError('ERR_BAD_RESPONSE', `response header ${JSON.stringify(name)} must be a string or an array of strings, got ${one === null ? 'null' : typeof one}`);
      if (!FIELD_VALUE.test(one)) throw new ServiceError('ERR_BAD_RESPONSE', `response header ${JSON.stringify(name)} contains characters not allowed in a header value`);
    }
    const lower = name.toLowerCase();
    if (RESERVED.has(lower) || lower.startsWith(SERVER_PREFIX) || values.length === 0) continue;
    out[name] = values.length === 1 ? (values[0] as string) : values.join(lower === 'set-cookie' ? HEADER_LINES : ', ');
  }
  return out;
}

export function checkStatus(status: unknown): number {
  if (typeof status !== 'number' || !Number.isInteger(status) || status < 100 || status > 599) {
    throw new ServiceError('ERR_BAD_RESPONSE', `statusCode must be an integer from 100 to 599, got ${JSON.stringify(status) ?? String(status)}`);
  }
  return status;
}

export function checkBodySize(body: string | Uint8Array, limit: number): void {
  const size = typeof body === 'string' ? (body.length * 3 > limit ? Buffer.byteLength(body) : body.length) : body.byteLength;
  if (size > limit) {
    throw new ServiceError('ERR_BAD_RESPONSE', `the response body is ${size} bytes, over the limit of ${limit} bytes`);
  }
}

/** The value of a response's Content-Type, whatever the case of its name (headers from user code keep theirs). */
export function contentTypeOf(headers: Record<string, string>): string | undefined {
  for (const name in headers) if (name.length === 12 && name.toLowerCase() === 'content-type') return headers[name];
  return undefined;
}

/** Shared by every implicit JSON response: nothing writes to a response's headers after this. */
export const JSON_HEADERS: Record<string, string> = Object.freeze({ 'content-type': 'application/json' });

export function jsonResponse(json: string): FunctionResponse {
  return { status: 200, headers: JSON_HEADERS, body: json };
}
