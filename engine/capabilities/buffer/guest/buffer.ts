// Node's Buffer for code inside isolates (the buffer package), evaluated on first use of Buffer or
// request.body; `node` is node8's `buffer` module.
import * as buffer from 'buffer/';
import { decodeUtf8, encodeUtf8, encodeUtf8Into } from '../../../sandbox/guest/utf8';

const { Buffer } = buffer;
// The polyfill's own marker: Node's Buffer has none, and packages that find it refuse to load
// (jsdom: "Unexpected Buffer polyfill"). The package reads it only while it loads.
delete (Buffer as unknown as { TYPED_ARRAY_SUPPORT?: boolean }).TYPED_ARRAY_SUPPORT;
const extra = buffer as unknown as { SlowBuffer: unknown; INSPECT_MAX_BYTES: number; kMaxLength: number };

// The package's Buffer.from calls itself again with a value's Symbol.toPrimitive result, which for
// a symbol is the symbol itself: a stack overflow. Node throws this TypeError instead.
const from = Buffer.from;
Buffer.from = function (this: typeof Buffer, value: unknown, ...rest: unknown[]) {
  if (typeof value === 'symbol') {
    const error = new TypeError(`The first argument must be of type string or an instance of Buffer, ArrayBuffer, or Array or an Array-like Object. Received type symbol (${String(value)})`);
    (error as TypeError & { code: string }).code = 'ERR_INVALID_ARG_TYPE';
    throw error;
  }
  return (from as (...args: unknown[]) => unknown).call(this, value, ...rest);
} as typeof Buffer.from;

// UTF-8 through islet's typed-array codec: the package's builds an array of numbers per byte
// (5 MB took seconds). Node's own buffers also have the per-encoding slice and write methods that
// packages call directly (busboy calls latin1Slice).
type Bytes = Uint8Array & { toString(encoding?: string, start?: number, end?: number): string };
const proto = Buffer.prototype as unknown as Record<string, unknown> & Bytes;
const toString = proto.toString;
const write = proto.write as (this: Bytes, ...args: unknown[]) => number;
const isUtf8Name = (encoding: unknown) => encoding === undefined || encoding === 'utf8' || encoding === 'utf-8' || (typeof encoding === 'string' && /^utf-?8$/i.test(encoding));

function clampRange(length: number, start: unknown, end: unknown): [number, number] {
  const from = start === undefined ? 0 : Math.max(0, Math.min(length, Math.trunc(Number(start)) || 0));
  const to = end === undefined ? length : Math.max(from, Math.min(length, Math.trunc(Number(end)) || 0));
  return [from, to];
}

proto.toString = function (this: Bytes, encoding?: string, start?: number, end?: number): string {
  if (!isUtf8Name(encoding)) return toString.call(this, encoding, start, end);
  const [from, to] = clampRange(this.length, start, end);
  return decodeUtf8(this.subarray(from, to));
};
proto.utf8Slice = function (this: Bytes, start?: number, end?: number): string {
  const [from, to] = clampRange(this.length, start, end);
  return decodeUtf8(this.subarray(from, to));
};
for (const encoding of ['latin1', 'ascii', 'hex', 'base64', 'ucs2']) {
  proto[`${encoding}Slice`] = function (this: Bytes, start?: number, end?: number): string {
    return toString.call(this, encoding, start, end);
  };
}
proto.write = function (this: Bytes, ...args: unknown[]): number {
  const [text, offset, length, encoding] = args;
  const named = [offset, length, encoding].find((arg) => typeof arg === 'string');
  if (typeof text !== 'string' || !isUtf8Name(named)) return write.apply(this, args);
  const at = typeof offset === 'number' ? offset : 0;
  if (at < 0 || at > this.length) throw new RangeError('The value of "offset" is out of range.');
  const room = typeof length === 'number' ? Math.min(length, this.length - at) : this.length - at;
  return encodeUtf8Into(text, this.subarray(at, at + Math.max(0, room))).written;
};
proto.utf8Write = function (this: Bytes, text: string, offset?: number, length?: number): number {
  return (proto.write as (...args: unknown[]) => number).call(this, text, offset ?? 0, length ?? this.length - (offset ?? 0), 'utf8');
};
const fromValue = Buffer.from;
Buffer.from = function (this: typeof Buffer, value: unknown, ...rest: unknown[]) {
  if (typeof value === 'string' && isUtf8Name(rest[0])) {
    const bytes = encodeUtf8(value);
    return (fromValue as (...args: unknown[]) => unknown).call(this, bytes.buffer, 0, bytes.length);
  }
  return (fromValue as (...args: unknown[]) => unknown).call(this, value, ...rest);
} as typeof Buffer.from;

const g = globalThis as unknown as Record<string, unknown>;

function isUtf8(input: ArrayBuffer | ArrayBufferView): boolean {
  const bytes = input instanceof ArrayBuffer ? new Uint8Array(input) : new Uint8Array(input.buffer, input.byteOffset, input.byteLength);
  try {
    new (g.TextDecoder as typeof TextDecoder)('utf-8', { fatal: true }).decode(bytes);
    return true;
  } catch {
    return false;
  }
}

function isAscii(input: ArrayBuffer | ArrayBufferView): boolean {
  const bytes = input instanceof ArrayBuffer ? new Uint8Array(input) : new Uint8Array(input.buffer, input.byteOffset, input.byteLength);
  for (const b of bytes) if (b > 0x7f) return false;
  return true;
}

/** node8's `buffer` module. */
const node: Record<string, unknown> = {
  Buffer,
  SlowBuffer: extra.SlowBuffer,
  INSPECT_MAX_BYTES: extra.INSPECT_MAX_BYTES,
  kMaxLength: extra.kMaxLength,
  kStringMaxLength: 2 ** 29 - 24,
  constants: { MAX_LENGTH: extra.kMaxLength, MAX_STRING_LENGTH: 2 ** 29 - 24 },
  isUtf8,
  isAscii,
  atob: (s: string) => (g.atob as (s: string) => string)(s),
  btoa: (s: string) => (g.btoa as (s: string) => string)(s),
};
for (const name of ['Blob', 'File']) Object.defineProperty(node, name, { enumerable: true, get: () => g[name] });

export { Buffer, node };
