import * as zlib from 'node:zlib';
import { HOST_WORK_LIMITS as LIMITS } from '../../host-work/limits';
import { OpError } from '../errors';
import { offThread, type NativeHosts } from '../native-call';
import type { ZLIB_CALLS, ZlibMethod } from './ops';

/**
 * The host half of node8's `zlib` module: Node's zlib and brotli on copied bytes. Output is bounded
 * (`maxOutputLength`, at most the host-work output limit) so a decompression bomb ends in an
 * error, not in a host holding gigabytes. Small inputs are worked on the server's thread, with
 * their output held to a small bound too (a larger one is worked again on a host-work thread);
 * brotli compression, whose time does not follow its size, always runs on a host-work thread.
 */
const SYNC: Record<ZlibMethod, (data: Buffer, options: object) => Buffer> = {
  gzip: zlib.gzipSync,
  gunzip: zlib.gunzipSync,
  deflate: zlib.deflateSync,
  inflate: zlib.inflateSync,
  deflateRaw: zlib.deflateRawSync,
  inflateRaw: zlib.inflateRawSync,
  unzip: zlib.unzipSync,
  brotliCompress: zlib.brotliCompressSync,
  brotliDecompress: zlib.brotliDecompressSync,
};

/** Options the sandbox may set (numbers only; Node validates their ranges). */
const NUMBER_OPTIONS = ['level', 'windowBits', 'memLevel', 'strategy', 'chunkSize', 'flush', 'finishFlush'] as const;

function options(given: Record<string, unknown> = {}): zlib.ZlibOptions & zlib.BrotliOptions {
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

/** Brotli's quality as asked (11, the slowest, by default). */
function brotliQuality(o: zlib.BrotliOptions): number {
  const q = o.params?.[zlib.constants.BROTLI_PARAM_QUALITY];
  return typeof q === 'number' ? q : zlib.constants.BROTLI_DEFAULT_QUALITY;
}

/** A zlib method run with Node's `info`: its output and the input bytes it consumed (`engine.bytesWritten`). */
function withConsumed(fn: (data: Buffer, options: object) => Buffer) {
  return (data: Buffer, o: object): { json: { consumed: number }; bytes: Buffer[] } => {
    const { buffer, engine } = fn(data, { ...o, info: true }) as unknown as { buffer: Buffer; engine: { bytesWritten: number } };
    return { json: { consumed: engine.bytesWritten }, bytes: [buffer] };
  };
}

export const zlibHost: NativeHosts<typeof ZLIB_CALLS> = {
  zlib: {
    light: (p, inputBytes) => p.op === 'constants' || (inputBytes <= LIMITS.mainThreadBytes && p.op !== 'brotliCompress'),
    run(p, parts, onMainThread) {
      if (p.op === 'constants') return { json: { ...zlib.constants } };
      const fn = SYNC[p.op];
      const input = parts[0] ?? Buffer.alloc(0);
      const asked = options(p.options);
      if (p.op === 'brotliCompress' && brotliQuality(asked) >= 10 && input.byteLength > LIMITS.brotliSlowInputBytes) {
        throw new OpError(
          'ERR_OUT_OF_RANGE',
          `brotli at quality ${brotliQuality(asked)} of ${input.byteLength} bytes is over islet's limit of ${LIMITS.brotliSlowInputBytes} bytes (a lower quality takes more)`,
        );
      }
      // `info: true` also answers how many input bytes the method consumed (what DecompressionStream needs to see trailing data).
      const work = p.options?.info === true && p.op !== 'brotliCompress' && p.op !== 'brotliDecompress' ? withConsumed(fn) : (data: Buffer, o: object) => ({ json: {}, bytes: [fn(data, o)] });
      if (!onMainThread) return work(input, asked);
      try {
        return work(input, { ...asked, maxOutputLength: Math.min(asked.maxOutputLength!, MAIN_THREAD_OUTPUT) });
      } catch (err) {
        // More output than the server's thread makes: worked again on a host-work thread, up to the asked limit.
        if ((err as { code?: unknown }).code === 'ERR_BUFFER_TOO_LARGE' && asked.maxOutputLength! > MAIN_THREAD_OUTPUT) throw offThread("more output than the server's thread makes");
        throw err;
      }
    },
  },
};
