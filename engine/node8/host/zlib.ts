import { promisify } from 'node:util';
import * as zlib from 'node:zlib';
import { MAX_NATIVE_BYTES } from '../../sandbox/protocol';
import { NativeError, type NativeInput, type NativeOutput } from './native';

/**
 * The host half of node8's `zlib` module: Node's zlib and brotli on copied bytes. Output is bounded
 * (`maxOutputLength`, at most MAX_NATIVE_BYTES) so a decompression bomb ends in an error, not in
 * a host holding gigabytes.
 */
const SYNC = {
  gzip: zlib.gzipSync,
  gunzip: zlib.gunzipSync,
  deflate: zlib.deflateSync,
  inflate: zlib.inflateSync,
  deflateRaw: zlib.deflateRawSync,
  inflateRaw: zlib.inflateRawSync,
  unzip: zlib.unzipSync,
  brotliCompress: zlib.brotliCompressSync,
  brotliDecompress: zlib.brotliDecompressSync,
} as const;

const ASYNC = {
  gzip: promisify(zlib.gzip),
  gunzip: promisify(zlib.gunzip),
  deflate: promisify(zlib.deflate),
  inflate: promisify(zlib.inflate),
  deflateRaw: promisify(zlib.deflateRaw),
  inflateRaw: promisify(zlib.inflateRaw),
  unzip: promisify(zlib.unzip),
  brotliCompress: promisify(zlib.brotliCompress),
  brotliDecompress: promisify(zlib.brotliDecompress),
} as const;

type ZlibOp = keyof typeof SYNC;

/** Options the sandbox may set (numbers only; Node validates their ranges). */
const NUMBER_OPTIONS = ['level', 'windowBits', 'memLevel', 'strategy', 'chunkSize', 'flush', 'finishFlush'] as const;

function options(p: Record<string, unknown>): zlib.ZlibOptions & zlib.BrotliOptions {
  const given = (typeof p.options === 'object' && p.options !== null ? p.options : {}) as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const name of NUMBER_OPTIONS) if (typeof given[name] === 'number') out[name] = given[name];
  if (typeof given.params === 'object' && given.params !== null) {
    const params: Record<number, number> = {};
    for (const [k, v] of Object.entries(given.params)) if (typeof v === 'number') params[Number(k)] = v;
    out.params = params;
  }
  const max = typeof given.maxOutputLength === 'number' ? Math.min(given.maxOutputLength, MAX_NATIVE_BYTES) : MAX_NATIVE_BYTES;
  out.maxOutputLength = Math.max(1, max);
  return out;
}

function op(p: Record<string, unknown>): ZlibOp {
  if (typeof p.op !== 'string' || !(p.op in SYNC)) throw new NativeError(`unknown zlib operation ${String(p.op)}`);
  return p.op as ZlibOp;
}

export function zlibCall({ payload, parts }: NativeInput): NativeOutput {
  if (payload.op === 'constants') return { json: { ...zlib.constants } };
  const fn = SYNC[op(payload)] as (data: Buffer, options: object) => Buffer;
  return { json: {}, bytes: [fn(parts[0] ?? Buffer.alloc(0), options(payload))] };
}

export async function zlibCallAsync({ payload, parts }: NativeInput): Promise<NativeOutput> {
  const fn = ASYNC[op(payload)] as (data: Buffer, options: object) => Promise<Buffer>;
  return { json: {}, bytes: [await fn(parts[0] ?? Buffer.alloc(0), options(payload))] };
}
