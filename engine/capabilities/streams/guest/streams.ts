// Web streams for node8 functions (web-streams-polyfill), with CompressionStream/DecompressionStream
// (over the host's zlib); `node` is `stream/web` (its text streams are the web/encoding library's globals).
import * as streams from 'web-streams-polyfill';
import { ByteLengthQueuingStrategy, CountQueuingStrategy, ReadableStream, TransformStream, WritableStream } from 'web-streams-polyfill';
import { concat, zlibBytes, zlibBytesConsumed } from '../../zlib/guest/zlib-native';

export * from 'web-streams-polyfill';

const FORMATS = ['gzip', 'deflate', 'deflate-raw'] as const;
type Format = (typeof FORMATS)[number];
type Transformer<I, O> = ConstructorParameters<typeof TransformStream<I, O>>[0];
type Controller = { enqueue(chunk: Uint8Array): void };

const Z_SYNC_FLUSH = 2;
/** Input a CompressionStream holds before it compresses it (deflate's window is 32 KiB, so the ratio hardly changes). */
const SEGMENT = 64 * 1024;

/** WebIDL's enum: the value converted to a string (its toString's error goes through), then checked. */
function formatOf(format: unknown, name: string): Format {
  const text = String(format);
  if (!(FORMATS as readonly string[]).includes(text)) throw new TypeError(`${name}: unsupported format ${JSON.stringify(text)} (use gzip, deflate or deflate-raw)`);
  return text as Format;
}

function chunkBytes(chunk: unknown, name: string): Uint8Array {
  if (chunk instanceof ArrayBuffer) return new Uint8Array(chunk);
  if (ArrayBuffer.isView(chunk)) return new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  throw new TypeError(`${name}: chunks must be ArrayBuffer or ArrayBufferView`);
}

/**
 * Compression as input arrives, over the host's one-shot zlib: each 64 KiB of input is compressed
 * as raw deflate blocks ending in a sync flush (byte-aligned, not final), which concatenate into
 * one deflate stream; the end adds the final block and the format's header and trailer (CRC-32 and
 * size for gzip, Adler-32 for deflate), computed here.
 */
function compressor(format: Format): Transformer<BufferSource, Uint8Array> {
  let held: Uint8Array[] = [];
  let heldBytes = 0;
  let started = false;
  const check = format === 'gzip' ? crc32() : format === 'deflate' ? adler32() : undefined;
  let size = 0;
  const emit = (controller: Controller, final: boolean) => {
    const input = concat(held);
    held = [];
    heldBytes = 0;
    check?.update(input);
    size = (size + input.byteLength) >>> 0;
    const blocks = zlibBytes('deflateRaw', final ? {} : { finishFlush: Z_SYNC_FLUSH }, [input]);
    if (!started) {
      started = true;
      const header = format === 'gzip' ? [0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3] : format === 'deflate' ? [0x78, 0x9c] : [];
      controller.enqueue(concat([Uint8Array.from(header), blocks]));
    } else if (blocks.byteLength > 0) {
      controller.enqueue(blocks);
    }
    if (!final || !check) return;
    const sum = check.value();
    controller.enqueue(format === 'gzip' ? Uint8Array.of(sum, sum >>> 8, sum >>> 16, sum >>> 24, size, size >>> 8, size >>> 16, size >>> 24) : Uint8Array.of(sum >>> 24, sum >>> 16, sum >>> 8, sum));
  };
  return {
    transform(chunk, controller) {
      const bytes = chunkBytes(chunk, 'CompressionStream').slice();
      held.push(bytes);
      heldBytes += bytes.byteLength;
      if (heldBytes >= SEGMENT) emit(controller, false);
    },
    flush(controller) {
      emit(controller, true);
    },
  };
}

/**
 * Decompression as input arrives, over the host's one-shot zlib: the input so far is decompressed
 * again with a sync flush (which accepts a stream cut short) whenever it has doubled since the last
 * time, and the output not yet given is enqueued, so the work is at most twice the input's. Data
 * after the compressed stream's end, or a stream that never ends, is a TypeError, as the
 * Compression Standard says.
 */
function decompressor(format: Format): Transformer<BufferSource, Uint8Array> {
  const op = format === 'gzip' ? 'gunzip' : format === 'deflate' ? 'inflate' : 'inflateRaw';
  let held: Uint8Array[] = [];
  let total = 0;
  let tried = 0;
  let given = 0;
  const run = (controller: Controller, final: boolean) => {
    const input = concat(held);
    held = [input];
    let answer: { bytes: Uint8Array; consumed: number };
    try {
      answer = zlibBytesConsumed(op, final ? {} : { finishFlush: Z_SYNC_FLUSH }, input);
    } catch (err) {
      const code = (err as { code?: unknown }).code;
      throw typeof code === 'string' && code.startsWith('Z_') ? new TypeError(`DecompressionStream: ${(err as Error).message}`) : err;
    }
    if (answer.bytes.byteLength > given) controller.enqueue(answer.bytes.slice(given));
    given = Math.max(given, answer.bytes.byteLength);
    // The output before the junk is given first (a reader waiting for it gets it), then the error.
    if (answer.consumed < input.byteLength) throw new TypeError('DecompressionStream: data after the end of the compressed stream');
    tried = total;
  };
  return {
    transform(chunk, controller) {
      const bytes = chunkBytes(chunk, 'DecompressionStream').slice();
      if (bytes.byteLength === 0) return;
      held.push(bytes);
      total += bytes.byteLength;
      if (total >= 2 * tried) run(controller, false);
    },
    flush(controller) {
      run(controller, true);
    },
  };
}

const tables: { crc?: Int32Array } = {};

function crc32() {
  const table = (tables.crc ??= Int32Array.from({ length: 256 }, (_, n) => {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    return c;
  }));
  let crc = -1;
  return {
    update(bytes: Uint8Array) {
      for (let i = 0; i < bytes.length; i++) crc = table[(crc ^ bytes[i]!) & 0xff]! ^ (crc >>> 8);
    },
    value: () => (crc ^ -1) >>> 0,
  };
}

function adler32() {
  let a = 1;
  let b = 0;
  return {
    update(bytes: Uint8Array) {
      // 5552 bytes at most between reductions keep the sums within 2^32 (zlib's NMAX).
      for (let i = 0; i < bytes.length; ) {
        const end = Math.min(i + 5552, bytes.length);
        for (; i < end; i++) {
          a += bytes[i]!;
          b += a;
        }
        a %= 65521;
        b %= 65521;
      }
    },
    value: () => ((b << 16) | a) >>> 0,
  };
}

export class CompressionStream extends TransformStream<BufferSource, Uint8Array> {
  constructor(format: 'gzip' | 'deflate' | 'deflate-raw') {
    super(compressor(formatOf(format, 'CompressionStream')));
  }
}

export class DecompressionStream extends TransformStream<BufferSource, Uint8Array> {
  constructor(format: 'gzip' | 'deflate' | 'deflate-raw') {
    super(decompressor(formatOf(format, 'DecompressionStream')));
  }
}

/** node8's `stream/web` module. */
export const node: Record<string, unknown> = { ...streams, CompressionStream, DecompressionStream, ByteLengthQueuingStrategy, CountQueuingStrategy, ReadableStream, WritableStream, TransformStream };
for (const name of ['TextEncoderStream', 'TextDecoderStream']) Object.defineProperty(node, name, { enumerable: true, get: () => (globalThis as unknown as Record<string, unknown>)[name] });
