// node8's `zlib`: the host's zlib and brotli on copied bytes (host.ts in this folder).
// Synchronous calls, callbacks and streams; a stream compresses or decompresses its whole input
// when it ends. Output is bounded: a decompression bomb throws ERR_BUFFER_TOO_LARGE.
import { LazyTransform } from '../../streams/guest/lazy-transform';
import { nativeAsync, nativeSync } from '../../guest/native';
import type { ZlibMethod } from '../ops';
import { concat, zlibBytes } from './zlib-native';

declare const require: (id: string) => unknown;
const { Buffer } = require('buffer') as { Buffer: { from(b: ArrayBuffer | Uint8Array | string, enc?: string): Uint8Array; isBuffer(v: unknown): boolean } };
// zlib's streams load the stream module on first use as streams (see lazy-transform.ts).
const Transform = LazyTransform as unknown as new (options?: object) => TransformLike;

interface TransformLike {
  push(chunk: unknown): boolean;
  on(event: string, fn: (...args: unknown[]) => void): this;
}

type Input = string | ArrayBuffer | ArrayBufferView;
type Callback = (err: Error | null, result?: Uint8Array) => void;

const OPS = ['gzip', 'gunzip', 'deflate', 'inflate', 'deflateRaw', 'inflateRaw', 'unzip', 'brotliCompress', 'brotliDecompress'] as const satisfies readonly ZlibMethod[];
const CLASSES: Record<string, (typeof OPS)[number]> = {
  Gzip: 'gzip',
  Gunzip: 'gunzip',
  Deflate: 'deflate',
  Inflate: 'inflate',
  DeflateRaw: 'deflateRaw',
  InflateRaw: 'inflateRaw',
  Unzip: 'unzip',
  BrotliCompress: 'brotliCompress',
  BrotliDecompress: 'brotliDecompress',
};

function bytesOf(input: Input): Uint8Array {
  if (typeof input === 'string') return Buffer.from(input, 'utf8');
  if (input instanceof ArrayBuffer) return new Uint8Array(input);
  if (ArrayBuffer.isView(input)) return new Uint8Array(input.buffer, input.byteOffset, input.byteLength);
  const err = new TypeError('The "buffer" argument must be of type string or an instance of Buffer, TypedArray, DataView, or ArrayBuffer');
  throw Object.assign(err, { code: 'ERR_INVALID_ARG_TYPE' });
}

const zlib: Record<string, unknown> = {};

for (const op of OPS) {
  zlib[`${op}Sync`] = (input: Input, options: Record<string, unknown> = {}) => Buffer.from(zlibBytes(op, options, [bytesOf(input)]));
  const async = (input: Input, options: Record<string, unknown> | Callback | undefined, callback?: Callback) => {
    const cb = typeof options === 'function' ? options : callback;
    const opts = typeof options === 'object' && options !== null ? options : {};
    if (typeof cb !== 'function') throw Object.assign(new TypeError('The "callback" argument must be of type function'), { code: 'ERR_INVALID_ARG_TYPE' });
    const bytes = bytesOf(input);
    nativeAsync('zlib', { op, options: opts }, [bytes]).then(
      (answer) => cb(null, Buffer.from(answer.bytes[0] ?? new Uint8Array(0))),
      (err: Error) => cb(err),
    );
  };
  zlib[op] = async;
  // util.promisify(zlib.gzip) works as in Node.
  Object.defineProperty(async, Symbol.for('nodejs.util.promisify.custom'), {
    value: (input: Input, options: Record<string, unknown> = {}) => nativeAsync('zlib', { op, options }, [bytesOf(input)]).then((a) => Buffer.from(a.bytes[0] ?? new Uint8Array(0))),
  });
}

/** A zlib stream: takes the whole input, answers its (de)compression when it ends. */
function streamClass(name: string, op: (typeof OPS)[number]) {
  const Class = class extends Transform {
    private readonly chunks: Uint8Array[] = [];
    constructor(private readonly zlibOptions: Record<string, unknown> = {}) {
      super();
    }
    _transform(chunk: Input, _encoding: string, callback: (err?: Error | null) => void): void {
      try {
        this.chunks.push(bytesOf(chunk).slice());
        callback();
      } catch (err) {
        callback(err as Error);
      }
    }
    _flush(callback: (err?: Error | null, data?: unknown) => void): void {
      nativeAsync('zlib', { op, options: this.zlibOptions }, [concat(this.chunks)]).then(
        (answer) => callback(null, Buffer.from(answer.bytes[0] ?? new Uint8Array(0))),
        (err: Error) => callback(err),
      );
    }
  };
  Object.defineProperty(Class, 'name', { value: name });
  return Class;
}

for (const [name, op] of Object.entries(CLASSES)) {
  const Class = streamClass(name, op);
  zlib[name] = Class;
  zlib[`create${name}`] = (options?: Record<string, unknown>) => new Class(options);
}

let constants: Record<string, number> | undefined;
Object.defineProperty(zlib, 'constants', {
  enumerable: true,
  get: () => (constants ??= nativeSync('zlib', { op: 'constants' }).json as Record<string, number>),
});
zlib.crc32 = (data: Input, value = 0): number => {
  let crc = ~value >>> 0;
  for (const byte of bytesOf(data)) {
    crc ^= byte;
    for (let k = 0; k < 8; k++) crc = crc & 1 ? (crc >>> 1) ^ 0xedb88320 : crc >>> 1;
  }
  return ~crc >>> 0;
};

export default zlib;
