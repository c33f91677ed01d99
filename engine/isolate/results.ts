import ivm from 'isolated-vm';
import { ServiceError } from '../errors';
import { checkBodySize, checkResponseHeaders, checkStatus, contentTypeOf, jsonResponse } from '../response';
import type { BodyStream } from '../body-stream';
import { MAX_STREAMS } from '../capabilities/streams/ops';
import type { FunctionSocket } from '../capabilities/websockets/host';
import type { CallOutcome, FunctionResponse } from '../runtime';
import { EXPLICIT_TAG, JSON_TAG, LONG_TEXT } from '../sandbox/protocol';

/** Result shapes produced by the sandboxes (CallResult in the protocol), as received: untrusted. */
export type RawResult = string | { t?: unknown; s?: unknown; h?: unknown; b?: unknown; c?: unknown; m?: unknown; k?: unknown };

/** The status of an answer that gives a WebSocket (and only of such an answer). */
const SWITCHING_PROTOCOLS = 101;

/**
 * A whole answer as the client gets it, its body within `responseBodyBytes`; its failure as the
 * call's error. `overLimit` is called when the answer is over a resource limit (the instance retires).
 */
export function wholeOutcome(result: RawResult, responseBodyBytes: number, mapStack: ((stack: string) => string) | undefined, overLimit: () => void): CallOutcome {
  try {
    const response = toResponse(result, mapStack);
    checkBodySize(response.body as string | Uint8Array, responseBodyBytes);
    return { ok: true, response };
  } catch (err) {
    if (err instanceof ServiceError) {
      if (err.code === 'ERR_RESOURCE_LIMIT') overLimit();
      return { ok: false, error: err };
    }
    return { ok: false, error: new ServiceError('ERR_INTERNAL', `unreadable function result: ${(err as Error).message}`) };
  }
}

/** An answer of status 101 that gives the client end of the pair `k`, whose server end the sandbox accepted (`give`). */
export function socketOutcome(result: { h?: unknown; k?: unknown }, give: (key: number) => FunctionSocket | undefined): CallOutcome {
  try {
    const headers = checkResponseHeaders(result.h);
    const webSocket = give(Number(result.k));
    if (!webSocket) throw new ServiceError('ERR_BAD_RESPONSE', "the answer's WebSocket is not one this instance accepted");
    return { ok: true, response: { status: SWITCHING_PROTOCOLS, headers, body: '', webSocket } };
  } catch (err) {
    return { ok: false, error: err instanceof ServiceError ? err : new ServiceError('ERR_BAD_RESPONSE', (err as Error).message) };
  }
}

/** The answer of a streamed head: its status and headers, and its body from the stream `start` opens for key `k`; throws when it is bad. */
export function streamedResponse(head: { s?: unknown; h?: unknown; k?: unknown }, start: (key: number) => BodyStream | undefined): FunctionResponse {
  const status = answerStatus(head.s);
  // A stream's length is not known yet: it is typed as a body that has bytes.
  const headers = withDefaultType(checkResponseHeaders(head.h), 'application/octet-stream', Number.POSITIVE_INFINITY);
  const stream = start(Number(head.k));
  if (!stream) throw new ServiceError('ERR_BAD_RESPONSE', `the instance already streams ${MAX_STREAMS} answers`);
  return { status, headers, body: stream };
}

function toResponse(result: RawResult, mapStack: ((stack: string) => string) | undefined): FunctionResponse {
  if (typeof result === 'string') {
    if (result.startsWith(JSON_TAG)) return jsonResponse(result.slice(1));
    if (result.startsWith(EXPLICIT_TAG)) {
      const a = result.indexOf('\n');
      const b = result.indexOf('\n', a + 1);
      if (a < 0 || b < 0) throw new Error('malformed explicit response');
      const headers = checkResponseHeaders(JSON.parse(result.slice(a + 1, b)));
      const body = result.slice(b + 1);
      return { status: answerStatus(Number(result.slice(1, a))), headers: withDefaultType(headers, 'text/plain; charset=utf-8', body.length), body };
    }
    throw new Error('unknown result tag');
  }
  if (typeof result !== 'object' || result === null) throw new Error('result is not an object');
  if (result.t === 'e') {
    const code = result.c === 'ERR_BAD_RESPONSE' || result.c === 'ERR_RESOURCE_LIMIT' ? result.c : 'ERR_FUNCTION_FAILED';
    const stack = typeof result.k === 'string' ? (mapStack?.(result.k) ?? result.k) : undefined;
    throw new ServiceError(code, String(result.m), stack === undefined ? undefined : { stack });
  }
  if (result.t === 'b' && (result.b instanceof ArrayBuffer || typeof result.b === 'string')) {
    const headers = checkResponseHeaders(result.h);
    const body = typeof result.b === 'string' ? result.b : new Uint8Array(result.b);
    return { status: answerStatus(result.s), headers: withDefaultType(headers, 'application/octet-stream', body.length), body };
  }
  throw new Error('unknown result shape');
}

/**
 * A text for an isolate. isolated-vm hands a string of 1,024 characters or more to an isolate as an
 * external string and counts its bytes against the isolate's memory limit, but V8 is not told of
 * them: once such strings outlive a young-generation collection (a batch of POST bodies does),
 * nothing collects them until a full collection: a function that keeps nothing, taking 10 KB
 * bodies 64 at a time, was measured at up to 120 MB of its 128 MB limit. So a
 * long text goes as a one-element array, which isolated-vm serialises: the isolate gets an
 * ordinary string in its heap. The sandbox unwraps it (`fromHost` in the protocol).
 */
export function textArgument(text: string | undefined): string | ivm.Copy<string[]> | undefined {
  return text !== undefined && text.length >= LONG_TEXT ? new ivm.ExternalCopy([text]).copyInto({ release: true }) : text;
}

/**
 * The status of an answer that gives no WebSocket: 100–599 but 101, which would leave the client
 * waiting for another protocol on a connection that goes on speaking HTTP.
 */
export function answerStatus(status: unknown): number {
  const checked = checkStatus(status);
  if (checked === SWITCHING_PROTOCOLS) throw new ServiceError('ERR_BAD_RESPONSE', 'status 101 answers only with a WebSocket: new Response(null, { status: 101, webSocket: client })');
  return checked;
}

/** A body's type when the function named none; an empty body (a 204, a `new Response(null)`) gets none. */
export function withDefaultType(headers: Record<string, string>, type: string, bodyLength: number): Record<string, string> {
  if (bodyLength > 0 && contentTypeOf(headers) === undefined) headers['content-type'] = type;
  return headers;
}
