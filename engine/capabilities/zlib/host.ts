import * as zlib from 'node:zlib';
import { HOST_WORK_LIMITS as LIMITS } from '../../host-work/limits';
import { NATIVE_OFF_THREAD } from '../../sandbox/protocol';
import { NativeError, type NativeInput, type NativeOutput } from '../../node8/host/native';

/**
 * The host half of node8's `zlib` module: Node's zlib and brotli on copied bytes. Output is bounded
 * (`maxOutputLength`, at most the host-work output limit) so a decompression bomb ends in an
 * error, not in a host holding gigabytes. Small inputs are worked on the server's thread, with
 * their output held to a small bound too (a larger one is worked again on a host-work thread);
 * brotli compression, whose time does not follow its size, always runs on a host-work thread.
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
  const max = typeof given.maxOutputLength === 'number' ? Math.min(given.maxOutputLength, LIMITS.outputBytes) : LIMITS.outputBytes;
  out.maxOutputLength = Math.max(1, max);
  return out;
}

/** Output a call on the server's thread may make before it is sent to a host-work thread. */
const MAIN_THREAD_OUTPUT = 16 * LIMITS.mainThreadBytes;

/** Whether a zlib call is light enough for the server's thread. */
export function zlibIsLight(p: Record<string, unknown>, inputBytes: number): boolean {
  return p.op === 'constants' || (inputBytes <= LIMITS.mainThreadBytes && p.op !== 'brotliCompress');
}

/** Brotli's quality as asked (11, the slowest, by default). */
function brotliQuality(o: zlib.BrotliOptions): number {
  const q = o.params?.[zlib.constants.BROTLI_PARAM_QUALITY];
  return typeof q === 'number' ? q : zlib.constants.BROTLI_DEFAULT_QUALITY;
}

function op(p: Record<string, unknown>): ZlibOp {
  if (typeof p.op !== 'string' || !(p.op in SYNC)) throw new NativeError(`unknown zlib operation ${String(p.op)}`);
  return p.op as ZlibOp;
}

export function zlibCall({ payload, parts }: NativeInput, onMainThread: boolean): NativeOutput {
  if (payload.op === 'constants') return { json: { ...zlib.constants } };
  const name = op(payload);
  const fn = SYNC[name] as (data: Buffer, options: object) => Buffer;
  const input = parts[0] ?? Buffer.alloc(0);
  const asked = options(payload);
  if (name === 'brotliCompress' && brotliQuality(asked) >= 10 && input.byteLength > LIMITS.brotliSlowInputBytes) {
    throw new NativeError(`brotli at quality ${brotliQuality(asked)} of ${input.byteLength} bytes is over islet's limit of ${LIMITS.brotliSlowInputBytes} bytes (a lower quality takes more)`, 'ERR_OUT_OF_RANGE');
  }
  if (!onMainThread) return { json: {}, bytes: [fn(input, asked)] };
  try {
    return { json: {}, bytes: [fn(input, { ...asked, maxOutputLength: Math.min(asked.maxOutputLength!, MAIN_THREAD_OUTPUT) })] };
  } catch (err) {
    // More output than the server's thread makes: worked again on a host-work thread, up to the asked limit.
    if ((err as { code?: unknown }).code === 'ERR_BUFFER_TOO_LARGE' && asked.maxOutputLength! > MAIN_THREAD_OUTPUT) throw new NativeError('more output than the server\'s thread makes', NATIVE_OFF_THREAD);
    throw err;
  }
}
