// What Node checks of an outgoing message (header names and values, written chunks) and the
// errors it throws, with Node's codes and messages.
declare const require: (id: string) => unknown;
const { Buffer } = require('buffer') as { Buffer: { from(v: unknown, enc?: string): Uint8Array } };

export type HeaderValue = string | number | readonly string[];
export type Chunk = string | Uint8Array;

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const BAD_VALUE = /[^\t\x20-\x7e\x80-\xff]/;

export function nodeError<E extends Error>(error: E, code: string): E & { code: string } {
  return Object.assign(error, { code });
}
export const headersSentError = (what: 'set' | 'write' | 'remove' | 'append') => nodeError(new Error(`Cannot ${what} headers after they are sent to the client`), 'ERR_HTTP_HEADERS_SENT');

export function checkHeader(name: unknown, value: unknown): void {
  if (typeof name !== 'string' || !TOKEN.test(name)) throw nodeError(new TypeError(`Header name must be a valid HTTP token ["${String(name)}"]`), 'ERR_INVALID_HTTP_TOKEN');
  if (value === undefined) throw nodeError(new TypeError(`Invalid value "undefined" for header "${name}"`), 'ERR_HTTP_INVALID_HEADER_VALUE');
  const values = Array.isArray(value) ? value : [value];
  for (const v of values) if (BAD_VALUE.test(String(v))) throw nodeError(new TypeError(`Invalid character in header content ["${name}"]`), 'ERR_INVALID_CHAR');
}

/** A written chunk as it is held: text (UTF-8) as it is, bytes as a view. */
export function chunkOf(chunk: unknown, encoding: string | undefined): Chunk {
  if (typeof chunk === 'string') return encoding === undefined || encoding === 'utf8' || encoding === 'utf-8' ? chunk : Buffer.from(chunk, encoding);
  if (chunk instanceof Uint8Array) return chunk;
  if (chunk instanceof ArrayBuffer) return new Uint8Array(chunk);
  if (ArrayBuffer.isView(chunk)) return new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  throw nodeError(new TypeError(`The "chunk" argument must be of type string or an instance of Buffer or Uint8Array. Received ${chunk === null ? 'null' : typeof chunk}`), 'ERR_INVALID_ARG_TYPE');
}
