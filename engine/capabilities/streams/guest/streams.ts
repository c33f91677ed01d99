// Web streams for node8 functions (web-streams-polyfill), with TextEncoderStream/TextDecoderStream
// and CompressionStream/DecompressionStream (over the host's zlib); `node` is `stream/web`.
import * as streams from 'web-streams-polyfill';
import { ByteLengthQueuingStrategy, CountQueuingStrategy, ReadableStream, TransformStream, WritableStream } from 'web-streams-polyfill';
import { zlibBytes } from '../../zlib/guest/zlib-native';

export * from 'web-streams-polyfill';


export class TextEncoderStream extends TransformStream<string, Uint8Array> {
  readonly encoding = 'utf-8';
  constructor() {
    const encoder = new TextEncoder();
    super({
      transform(chunk, controller) {
        const bytes = encoder.encode(String(chunk));
        if (bytes.byteLength > 0) controller.enqueue(bytes);
      },
    });
  }
}

export class TextDecoderStream extends TransformStream<ArrayBufferView | ArrayBuffer, string> {
  readonly encoding: string;
  readonly fatal: boolean;
  readonly ignoreBOM: boolean;
  constructor(label = 'utf-8', options: { fatal?: boolean; ignoreBOM?: boolean } = {}) {
    const decoder = new TextDecoder(label, options);
    super({
      transform(chunk, controller) {
        const bytes = chunk instanceof ArrayBuffer ? new Uint8Array(chunk) : new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength);
        const text = decoder.decode(bytes, { stream: true });
        if (text) controller.enqueue(text);
      },
      flush(controller) {
        const text = decoder.decode();
        if (text) controller.enqueue(text);
      },
    });
    this.encoding = decoder.encoding;
    this.fatal = decoder.fatal;
    this.ignoreBOM = decoder.ignoreBOM;
  }
}

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
export const node = { ...streams, TextEncoderStream, TextDecoderStream, CompressionStream, DecompressionStream, ByteLengthQueuingStrategy, CountQueuingStrategy, ReadableStream, WritableStream, TransformStream };
