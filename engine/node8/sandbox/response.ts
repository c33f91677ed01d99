import type { ChunkSource } from '../../capabilities/streams/guest/response-streams';
import { toArrayBuffer, toBytes } from '../../sandbox/guest/text';
import { EXPLICIT_TAG, ISLET_FRAME, JSON_TAG, type CallResult, type ResultHeaders } from '../../sandbox/protocol';

/** Registers a streamed body's reader with the runtime (set by the runtime when it starts). */
let openStream: (source: ChunkSource) => number = () => {
  throw new Error('streams are not ready');
};
export function setStreamOpener(opener: (source: ChunkSource) => number): void {
  openStream = opener;
}

/** `context.HTTPResponse`: an explicit response. Defaults: status 200, no headers, empty body. */
export class HTTPResponse {
  statusCode: unknown;
  headers: unknown;
  body: unknown;
  constructor(options?: { statusCode?: unknown; headers?: unknown; body?: unknown }) {
    const o = options ?? {};
    this.statusCode = o.statusCode === undefined ? 200 : o.statusCode;
    this.headers = o.headers === undefined || o.headers === null ? {} : o.headers;
    this.body = o.body === undefined || o.body === null ? '' : o.body;
  }
}

class BadResponse extends Error {}

/** The user's stack: their frames only, none of the runtime's. */
export function userStack(err: Error): string | undefined {
  if (typeof err.stack !== 'string') return undefined;
  return err.stack
    .split('\n')
    .filter((line) => !ISLET_FRAME.test(line))
    .join('\n');
}

export function encodeError(err: unknown): CallResult {
  if (err instanceof BadResponse) return { t: 'e', c: 'ERR_BAD_RESPONSE', m: err.message };
  if (err instanceof Error) {
    // Out of memory in the isolate, or a native call's output over its bound (a decompression bomb).
    const outOfMemory = err instanceof RangeError && (/Array buffer allocation failed/.test(err.message) || (err as { code?: unknown }).code === 'ERR_BUFFER_TOO_LARGE');
    const code = outOfMemory ? 'ERR_RESOURCE_LIMIT' : 'ERR_FUNCTION_FAILED';
    let message: string;
    try {
      // With the error's name, as a deploy-time error has it (`TypeError: …`); a plain Error has none.
      const name = String(err.name);
      message = name && name !== 'Error' ? `${name}: ${String(err.message)}` : String(err.message);
    } catch {
      message = 'the handler threw an error';
    }
    const stack = userStack(err);
    return stack === undefined ? { t: 'e', c: code, m: message } : { t: 'e', c: code, m: message, k: stack };
  }
  let message: string;
  try {
    message = typeof err === 'string' ? err : (JSON.stringify(err) ?? String(err));
  } catch {
    message = String(err);
  }
  return { t: 'e', c: 'ERR_FUNCTION_FAILED', m: `the handler threw a non-Error value: ${message}` };
}

/** An explicit answer's headers: a value is a string, or an array of them for a header sent several times (Set-Cookie). */
function explicitHeaders(headers: unknown): ResultHeaders {
  if (typeof headers !== 'object' || headers === null || Array.isArray(headers)) {
    throw new BadResponse('HTTPResponse headers must be an object of header names to string values');
  }
  const out: ResultHeaders = {};
  for (const name of Object.keys(headers)) {
    const value = (headers as Record<string, unknown>)[name];
    const strings = Array.isArray(value) && value.every((v) => typeof v === 'string');
    if (typeof value !== 'string' && !strings)
      throw new BadResponse(`HTTPResponse header ${JSON.stringify(name)} must be a string or an array of strings, got ${value === null ? 'null' : typeof value}`);
    out[name] = strings ? [...(value as string[])] : (value as string);
  }
  return out;
}

function encodeExplicit(res: HTTPResponse): CallResult {
  const status = res.statusCode;
  if (typeof status !== 'number' || !Number.isInteger(status) || status < 100 || status > 599) {
    throw new BadResponse(`HTTPResponse statusCode must be an integer from 100 to 599, got ${JSON.stringify(status) ?? String(status)}`);
  }
  const headers = explicitHeaders(res.headers);
  const body = res.body;
  if (typeof body === 'string') return `${EXPLICIT_TAG}${status}\n${JSON.stringify(headers)}\n${body}`;
  const bytes = toBytes(body);
  if (bytes) return { t: 'b', s: status, h: headers, b: toArrayBuffer(bytes) };
  const source = chunkSourceOf(body);
  if (!source)
    throw new BadResponse(`HTTPResponse body must be a string, bytes, a ReadableStream, a Node Readable or an async iterable of strings or bytes, got ${Array.isArray(body) ? 'array' : typeof body}`);
  return { t: 's', s: status, h: headers, k: openStream(source) };
}

/**
 * What a streamed body is read from: a web ReadableStream (its reader), a Node Readable or any
 * async iterable (its iterator); undefined for anything else.
 */
function chunkSourceOf(body: unknown): ChunkSource | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const stream = body as { getReader?: () => { read(): Promise<{ done: boolean; value?: unknown }>; cancel(reason?: unknown): Promise<void> } };
  if (typeof stream.getReader === 'function') {
    const reader = stream.getReader();
    return { next: () => reader.read(), cancel: (reason) => void reader.cancel(reason).catch(() => undefined) };
  }
  const iterable = body as { [Symbol.asyncIterator]?: () => AsyncIterator<unknown>; destroy?: (err?: Error) => void };
  if (typeof iterable[Symbol.asyncIterator] !== 'function') return undefined;
  const iterator = iterable[Symbol.asyncIterator]!();
  return {
    next: () => iterator.next() as Promise<{ done: boolean; value?: unknown }>,
    cancel: (reason) => {
      // A Node Readable stops at once; an async generator runs its finally blocks.
      if (typeof iterable.destroy === 'function') iterable.destroy();
      else void iterator.return?.(reason)?.catch?.(() => undefined);
    },
  };
}

export function encodeResult(value: unknown): CallResult {
  if (value instanceof HTTPResponse) return encodeExplicit(value);
  if (typeof value === 'object' && value !== null) {
    // Uint8Array (Buffer included) and ArrayBuffer are sent raw; other views serialise as JSON.
    if (value instanceof Uint8Array || value instanceof ArrayBuffer) {
      return { t: 'b', s: 200, h: { 'content-type': 'application/octet-stream' }, b: toArrayBuffer(toBytes(value)!) };
    }
  }
  const json = JSON.stringify(value);
  return `${JSON_TAG}${json === undefined ? 'null' : json}`;
}
