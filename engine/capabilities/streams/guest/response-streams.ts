import { StreamOp, StreamState, type StreamsCallbacks } from '../ops';

/** What the host pulls a streamed answer's chunks from: a reader over the function's body. */
export interface ChunkSource {
  /** The next chunk (text or bytes), or done. */
  next(): Promise<{ done: boolean; value?: unknown }>;
  cancel(reason: string): void;
}

interface OpenSource {
  source: ChunkSource;
  /** Bytes (characters of text) the host may take unasked: what its pulls granted, less what was sent. */
  credit: number;
  /** A read of the source is under way. */
  reading: boolean;
}

/**
 * The answers this instance's calls stream (see InstanceStreams on the host): each one a key and
 * the reader of its body. A pull of the host (`fire(Fire.stream, key, StreamOp.pull, bytes)`)
 * grants a window of bytes: chunks are read from the source and sent with `chunk(key, data,
 * state)` one after the other while the window lasts, so a stream costs one entry into the
 * isolate per window rather than per chunk. The end and a failure go the same way.
 */
export function makeResponseStreams(hostChunk: StreamsCallbacks['chunk'], onFailure: (err: unknown) => void) {
  const sources = new Map<number, OpenSource>();
  let lastKey = 0;

  const failure = (key: number, err: unknown) => {
    sources.delete(key);
    onFailure(err);
    hostChunk(key, undefined, StreamState.error, err instanceof Error ? `${err.name}: ${err.message}` : String(err));
  };

  const pump = (key: number, open: OpenSource) => {
    if (open.reading || open.credit <= 0) return;
    open.reading = true;
    let step: Promise<{ done: boolean; value?: unknown }>;
    try {
      step = open.source.next();
    } catch (err) {
      failure(key, err);
      return;
    }
    step.then(
      ({ done, value }) => {
        open.reading = false;
        if (sources.get(key) !== open) return;
        if (done) {
          sources.delete(key);
          hostChunk(key, undefined, StreamState.end);
          return;
        }
        const data = chunkOf(value);
        if (data === undefined) {
          failure(key, new TypeError('a response stream may only give strings and bytes (Uint8Array, ArrayBuffer, DataView)'));
          return;
        }
        const size = typeof data === 'string' ? data.length : data.byteLength;
        // An empty chunk says nothing: the next one is read at once.
        if (size > 0) {
          open.credit -= size;
          hostChunk(key, data, StreamState.more);
        }
        pump(key, open);
      },
      (err: unknown) => {
        open.reading = false;
        if (sources.get(key) === open) failure(key, err);
      },
    );
  };

  return {
    /** Registers the reader of an answer's body; the key goes to the host in the answer's head. */
    open(source: ChunkSource): number {
      const key = ++lastKey;
      sources.set(key, { source, credit: 0, reading: false });
      return key;
    },
    /** The host grants a window (`arg`: its bytes, at least one chunk), cancels the stream (`arg`: why; its reader went away), or forgets it (a relay read to its end). */
    fire(key: number, op: unknown, arg: unknown): void {
      const open = sources.get(key);
      if (!open) return;
      if (op === StreamOp.pull) {
        open.credit += typeof arg === 'number' && arg >= 1 ? arg : 1;
        pump(key, open);
      } else if (op === StreamOp.forget) {
        sources.delete(key);
      } else {
        sources.delete(key);
        try {
          open.source.cancel(typeof arg === 'string' ? arg : 'cancelled');
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
