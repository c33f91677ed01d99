import { StreamOp, StreamState, type StreamsCallbacks } from '../ops';

/** What the host pulls a streamed answer's chunks from: a reader over the function's body. */
export interface ChunkSource {
  /** The next chunk (text or bytes), or done. */
  next(): Promise<{ done: boolean; value?: unknown }>;
  cancel(reason: string): void;
}

/**
 * The answers this instance's calls stream (see InstanceStreams on the host): each one a key and
 * the reader of its body. The host pulls one chunk at a time (`fire(Fire.stream, key, op)`), and
 * each pull is answered with one `chunk(key, data, state)`: a chunk, the end, or a failure.
 */
export function makeResponseStreams(hostChunk: StreamsCallbacks['chunk'], onFailure: (err: unknown) => void) {
  const sources = new Map<number, ChunkSource>();
  let lastKey = 0;

  const failure = (key: number, err: unknown) => {
    sources.delete(key);
    onFailure(err);
    hostChunk(key, undefined, StreamState.error, err instanceof Error ? `${err.name}: ${err.message}` : String(err));
  };

  const pull = (key: number, source: ChunkSource) => {
    let step: Promise<{ done: boolean; value?: unknown }>;
    try {
      step = source.next();
    } catch (err) {
      failure(key, err);
      return;
    }
    step.then(
      ({ done, value }) => {
        if (!sources.has(key)) return;
        if (done) {
          sources.delete(key);
          hostChunk(key, undefined, StreamState.end);
          return;
        }
        const data = chunkOf(value);
        if (data === undefined) failure(key, new TypeError('a response stream may only give strings and bytes (Uint8Array, ArrayBuffer, DataView)'));
        // An empty chunk says nothing: the next one is read at once.
        else if (typeof data === 'string' ? data.length === 0 : data.byteLength === 0) pull(key, source);
        else hostChunk(key, data, StreamState.more);
      },
      (err: unknown) => failure(key, err),
    );
  };

  return {
    /** Registers the reader of an answer's body; the key goes to the host in the answer's head. */
    open(source: ChunkSource): number {
      const key = ++lastKey;
      sources.set(key, source);
      return key;
    },
    /** The host pulls a chunk, or cancels the stream (its reader went away). */
    fire(key: number, op: unknown, reason: unknown): void {
      const source = sources.get(key);
      if (!source) return;
      if (op === StreamOp.pull) pull(key, source);
      else {
        sources.delete(key);
        try {
          source.cancel(typeof reason === 'string' ? reason : 'cancelled');
        } catch (err) {
          onFailure(err);
        }
      }
    },
  };
}

/** A chunk as the host takes it: text as it is, bytes as an ArrayBuffer of exactly their length. */
function chunkOf(value: unknown): string | ArrayBuffer | undefined {
  if (typeof value === 'string') return value;
  if (value instanceof ArrayBuffer) return value;
  if (ArrayBuffer.isView(value)) {
    const view = new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
    return view.byteOffset === 0 && view.byteLength === view.buffer.byteLength ? (view.buffer as ArrayBuffer) : view.slice().buffer;
  }
  return undefined;
}
