import type { Capability } from '../capability';

export const streams = {
  name: 'streams',
  summary: "Web streams (web-streams-polyfill) with the compression streams, Node's stream (readable-stream) and string_decoder, and answers whose body streams (both runtimes)",
  runtimes: ['node8', 'python'],
  libraries: {
    'web/streams': 'guest/streams.ts',
    'node/stream': 'guest/stream.ts',
    'node/string_decoder': 'guest/string_decoder.ts',
  },
  modules: {
    stream: 'node/stream',
    'stream/consumers': 'node/stream#consumers',
    'stream/promises': 'node/stream#promises',
    'stream/web': 'web/streams#node',
    string_decoder: 'node/string_decoder',
  },
  globals: {
    ReadableStream: 'web/streams',
    ReadableStreamDefaultReader: 'web/streams',
    ReadableStreamBYOBReader: 'web/streams',
    ReadableStreamBYOBRequest: 'web/streams',
    ReadableStreamDefaultController: 'web/streams',
    ReadableByteStreamController: 'web/streams',
    WritableStream: 'web/streams',
    WritableStreamDefaultWriter: 'web/streams',
    WritableStreamDefaultController: 'web/streams',
    TransformStream: 'web/streams',
    TransformStreamDefaultController: 'web/streams',
    ByteLengthQueuingStrategy: 'web/streams',
    CountQueuingStrategy: 'web/streams',
    CompressionStream: 'web/streams',
    DecompressionStream: 'web/streams',
  },
  ops: ['chunk'],
  dependsOn: ['zlib', 'buffer'],
  tests: ['test/runtime/node8-web.test.ts', 'test/runtime/node8-builtins.test.ts', 'test/runtime/streams.test.ts'],
} as const satisfies Capability;
