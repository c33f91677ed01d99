import { STATUS_CODES } from 'node:http';
import type { HttpResponse, TemplatedApp } from '@trufflesuite/uws-js-unofficial';
import type { CallApi, InvokeRequest, WholeResponse } from '../engine/api';
import { errorResponse } from '../engine/error-answer';
import { ServiceError } from '../engine/errors';
import { newRequestId } from '../engine/request-id';
import type { ConsoleAnswer, ConsoleCall } from '../engine/wire';
import { writeAnswerHeaders } from './answer';
import { readBody, readHeaders } from './body';
import type { ActiveCounter } from './in-flight';
import { type Connections, writeResponse, type ResponseState } from './respond';

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const FIELD_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;
/** A request target's path and query: visible ASCII, no space (the console percent-encodes the rest). */
const PATH = /^(\/[!-"$->@-~]*)?$/;
const QUERY = /^[!-"$-~]*$/;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
/** Set by the server from the body it hands on. */
const FRAMING = new Set(['content-length', 'transfer-encoding']);

/** The envelope's own headers: JSON, never sniffed, never a page (the sandbox, should a browser render it anyway), never cached. */
const ENVELOPE_HEADERS: Record<string, string> = {
  'content-type': 'application/json',
  'x-content-type-options': 'nosniff',
  'content-security-policy': "sandbox; default-src 'none'",
  'cache-control': 'no-store',
  'cross-origin-resource-policy': 'same-origin',
};

/**
 * POST /console/invoke, on the console's port only: the invoke form's call. The request comes as
 * JSON and the function's answer goes back as JSON (status, headers, body in base64), so nothing a
 * function answers is ever a response of the console's origin: no page of it renders there, and
 * none of its headers (Set-Cookie, Clear-Site-Data, Refresh, a redirect) acts on the console's tab.
 * A cross-origin page cannot send it (a JSON request needs a CORS preflight, which this port never
 * grants) nor read its answer.
 */
export function addConsoleInvokeRoute(app: TemplatedApp, engine: CallApi, counter: ActiveCounter, connections: Connections): void {
  app.post('/console/invoke', (res, req) => {
    const headers = readHeaders(req);
    const state: ResponseState = { aborted: false, connections };
    res.onAborted(() => (state.aborted = true));
    counter.begin();
    const refuse = (err: unknown) => {
      answerError(res, state, err);
      counter.end();
    };
    if (!/^application\/json\s*(;|$)/i.test(headers['content-type'] ?? '')) {
      refuse(new ServiceError('ERR_BAD_REQUEST', 'the console invoke route takes a JSON request (Content-Type: application/json)'));
      return;
    }
    const limit = envelopeLimit(engine.limits.requestBodyBytes);
    readBody(
      res,
      headers,
      limit,
      (bytes) => {
        let call: InvokeRequest;
        try {
          call = readConsoleCall(bytes);
        } catch (err) {
          refuse(err);
          return;
        }
        // The answer whole: a streamed body is read to its end (the console shows it then).
        void engine.invoke(call).then((response) => {
          const answer = toConsoleAnswer(response, call.method === 'HEAD');
          writeResponse(res, state, 200, ENVELOPE_HEADERS, JSON.stringify(answer), false);
          counter.end();
        });
      },
      () => refuse(new ServiceError('ERR_PAYLOAD_TOO_LARGE', `the invoke request is over the limit of ${limit} bytes (a body of ${engine.limits.requestBodyBytes} bytes in base64, and the rest)`)),
    );
  });
}

/** A body of `bodyLimit` bytes in base64, plus room for the method, path, query and headers. */
export function envelopeLimit(bodyLimit: number): number {
  return Math.ceil(bodyLimit / 3) * 4 + 256 * 1024;
}

/** Reads and checks the console's request: each field as an HTTP request could carry it. */
export function readConsoleCall(bytes: Uint8Array): InvokeRequest {
  let raw: unknown;
  try {
    raw = JSON.parse(Buffer.from(bytes).toString('utf8'));
  } catch {
    throw new ServiceError('ERR_BAD_REQUEST', 'the invoke request is not valid JSON');
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new ServiceError('ERR_BAD_REQUEST', 'the invoke request must be a JSON object');
  const call = raw as Partial<Record<keyof ConsoleCall, unknown>>;
  const account = text(call.account, 'account');
  const name = text(call.function, 'function');
  const method = text(call.method, 'method');
  if (!TOKEN.test(method) || method.length > 32) throw new ServiceError('ERR_BAD_REQUEST', `method ${JSON.stringify(method)} is not an HTTP method`);
  const path = call.path === undefined ? '' : text(call.path, 'path');
  if (!PATH.test(path)) throw new ServiceError('ERR_BAD_REQUEST', `path ${JSON.stringify(path)} must start with / and hold visible ASCII only, with no ? or # (percent-encode the rest)`);
  const query = call.query === undefined ? '' : text(call.query, 'query');
  if (!QUERY.test(query)) throw new ServiceError('ERR_BAD_REQUEST', `query ${JSON.stringify(query)} must hold visible ASCII only, with no # (percent-encode the rest)`);
  const body64 = call.body === undefined ? '' : text(call.body, 'body');
  if (body64.length % 4 !== 0 || !BASE64.test(body64)) throw new ServiceError('ERR_BAD_REQUEST', 'body must be base64');
  const body = Buffer.from(body64, 'base64');
  const headers = requestHeaders(call.headers);
  if (body.byteLength > 0) headers['content-length'] = String(body.byteLength);
  // The key goes on apart, as the function port hands it on: never to the function.
  const apiKey = headers['x-service-api-key'];
  delete headers['x-service-api-key'];
  return {
    method: method.toUpperCase(),
    accountId: account,
    functionName: name,
    apiKey,
    path: path === '' ? '/' : path,
    rawQuery: query,
    headers,
    body,
  };
}

function text(value: unknown, field: string): string {
  if (typeof value !== 'string') throw new ServiceError('ERR_BAD_REQUEST', `${field} must be a string`);
  return value;
}

/** Lower-case names, repeats joined with `, `, as the function port reads them (http/body.ts). */
function requestHeaders(value: unknown): Record<string, string> {
  if (value === undefined) return {};
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new ServiceError('ERR_BAD_REQUEST', 'headers must be an object of names to string values');
  const headers: Record<string, string> = {};
  for (const [name, v] of Object.entries(value as Record<string, unknown>)) {
    if (!TOKEN.test(name)) throw new ServiceError('ERR_BAD_REQUEST', `header name ${JSON.stringify(name)} is not a valid HTTP header name`);
    if (typeof v !== 'string' || !FIELD_VALUE.test(v)) throw new ServiceError('ERR_BAD_REQUEST', `header ${JSON.stringify(name)} must be a string without CR, LF or NUL`);
    const lower = name.toLowerCase();
    if (FRAMING.has(lower)) continue;
    const prior = headers[lower];
    headers[lower] = prior === undefined ? v.trim() : `${prior}, ${v.trim()}`;
  }
  return headers;
}

/** The answer as the function port would send it: its headers in order, Content-Length last (uWS writes it at the end). */
export function toConsoleAnswer(response: WholeResponse, head: boolean): ConsoleAnswer {
  const headers: [string, string][] = [];
  writeAnswerHeaders({ writeHeader: (name, value) => headers.push([name.toLowerCase(), value]) }, response);
  const bytes = typeof response.body === 'string' ? Buffer.from(response.body) : Buffer.from(response.body.buffer, response.body.byteOffset, response.body.byteLength);
  headers.push(['content-length', String(bytes.byteLength)]);
  return {
    status: response.status,
    statusText: STATUS_CODES[response.status] ?? '',
    headers,
    body: head ? '' : bytes.toString('base64'),
  };
}

function answerError(res: HttpResponse, state: ResponseState, err: unknown): void {
  const response = errorResponse(err, newRequestId(), 0);
  writeResponse(res, state, response.status, { ...ENVELOPE_HEADERS, 'x-service-request-id': response.requestId }, response.body, false);
}
