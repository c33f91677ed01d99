// node8's `stream` (readable-stream: Node's own streams, published apart), `stream/promises` and
// `stream/consumers`. `stream` is Node's legacy `Stream` (lib/stream.js: EventEmitter with `pipe`,
// and Readable, Writable… as properties), not the package's main export, which is `Readable`:
// readable-stream 2 and 3 inherit from `require('stream')`, and calling Readable's constructor on
// their objects replaced their state with one whose `pipesCount` is a getter.
import stream from 'readable-stream/lib/stream.js';
import { utf8Decoder } from '../../../sandbox/guest/utf8';
import { installWebAdapters } from './web-adapters';

type Chunk = string | Uint8Array;
declare const require: (id: string) => unknown;

async function collect(source: AsyncIterable<Chunk>): Promise<Uint8Array[]> {
  const { Buffer } = require('buffer') as { Buffer: { from(s: string | Uint8Array): Uint8Array } };
  const chunks: Uint8Array[] = [];
  for await (const chunk of source) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  return chunks;
}

async function buffer(source: AsyncIterable<Chunk>): Promise<Uint8Array> {
  const { Buffer } = require('buffer') as { Buffer: { concat(list: Uint8Array[]): Uint8Array } };
  return Buffer.concat(await collect(source));
}

/** `stream/consumers`: a whole stream (Node or web) as bytes, text, JSON or a Blob. */
export const consumers = {
  buffer,
  arrayBuffer: async (source: AsyncIterable<Chunk>) => (await buffer(source)).slice().buffer,
  text: async (source: AsyncIterable<Chunk>) => utf8Decoder.decode(await buffer(source)),
  json: async (source: AsyncIterable<Chunk>) => JSON.parse(utf8Decoder.decode(await buffer(source))) as unknown,
  blob: async (source: AsyncIterable<Chunk>) => new (globalThis as unknown as { Blob: new (parts: Uint8Array[]) => unknown }).Blob(await collect(source)),
};

installWebAdapters(stream as unknown as { Readable: unknown; Writable: unknown; Duplex: unknown });

export const promises = (stream as unknown as { promises: unknown }).promises;
export default stream;
