// Web streams for node8 functions (web-streams-polyfill), with CompressionStream/DecompressionStream
// (over the host's zlib); `node` is `stream/web` (its text streams are the web/encoding library's globals).
import * as streams from 'web-streams-polyfill';
import { ByteLengthQueuingStrategy, CountQueuingStrategy, ReadableStream, TransformStream, WritableStream } from 'web-streams-polyfill';
import { zlibBytes } from '../../zlib/guest/zlib-native';

export * from 'web-streams-polyfill';


const FORMATS = { gzip: ['gzip', 'gunzip'], deflate: ['deflate', 'inflate'], 'deflate-raw': ['deflateRaw', 'inflateRaw'] } as const;
type Format = keyof typeof FORMATS;

/** The whole input goes through the host's zlib at the end (compression formats are not framed by chunk). */
function zlibStream(format: unknown, direction: 0 | 1, name: string): Transformer<BufferSource, Uint8Array> {
  if (typeof format !== 'string' || !(format in FORMATS)) throw new TypeError(`${name}: unsupported format ${JSON.stringify(format)} (use gzip, deflate or deflate-raw)`);
  const op = FORMATS[format as Format][direction];
  const chunks: Uint8Array[] = [];
  return {
    transform(chunk) {
      const bytes = chunk instanceof ArrayBuffer ? new Uint8Array(chunk) : ArrayBuffer.isView(chunk) ? new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength) : undefined;
      if (!bytes) throw new TypeError(`${name}: chunks must be ArrayBuffer or ArrayBufferView`);
      chunks.push(bytes.slice());
    },
    flush(controller) {
      controller.enqueue(zlibBytes(op, {}, chunks));
    },
  };
}

type Transformer<I, O> = ConstructorParameters<typeof TransformStream<I, O>>[0];

export class CompressionStream extends TransformStream<BufferSource, Uint8Array> {
  constructor(format: 'gzip' | 'deflate' | 'deflate-raw') {
    super(zlibStream(format, 0, 'CompressionStream'));
  }
}

export class DecompressionStream extends TransformStream<BufferSource, Uint8Array> {
  constructor(format: 'gzip' | 'deflate' | 'deflate-raw') {
    super(zlibStream(format, 1, 'DecompressionStream'));
  }
}

/** node8's `stream/web` module. */
export const node: Record<string, unknown> = { ...streams, CompressionStream, DecompressionStream, ByteLengthQueuingStrategy, CountQueuingStrategy, ReadableStream, WritableStream, TransformStream };
for (const name of ['TextEncoderStream', 'TextDecoderStream']) Object.defineProperty(node, name, { enumerable: true, get: () => (globalThis as unknown as Record<string, unknown>)[name] });
