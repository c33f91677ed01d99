import { ServiceError } from './errors';

/**
 * A response body a function streams: its bytes come as the function produces them (a web
 * `ReadableStream`, a Node `Readable`, an async iterable, a Python generator). Pulled, so that a
 * slow reader holds the function back (its stream's `pull` waits) instead of the host buffering.
 */
export interface BodyStream {
  readonly kind: 'stream';
  /**
   * The next chunk (never empty), or null at the end. Rejects with a ServiceError when the
   * function's stream fails, or the call passes its timeout; one read at a time.
   */
  read(): Promise<Uint8Array | null>;
  /** The reader went away (the client disconnected): the function's stream is cancelled. */
  cancel(reason: string): void;
  /**
   * The reader is done with `chunk` (written out, nothing of it kept): the stream may put later
   * bytes in its memory. Only a reader that keeps no chunk past writing it calls this.
   */
  release?(chunk: Uint8Array): void;
}

export function isBodyStream(body: unknown): body is BodyStream {
  return typeof body === 'object' && body !== null && (body as { kind?: unknown }).kind === 'stream';
}

/** What became of a stream, once it ended: its bytes, when its first one came, and its error if it failed. */
export interface StreamEnd {
  bytes: number;
  /** ms from the call's start to its first byte (undefined: none came). */
  firstByteMs: number | undefined;
  error: ServiceError | undefined;
}

/**
 * `stream` as it is read, calling `onEnd` once when it ends however it ends: read to its end, failed,
 * or cancelled by its reader.
 */
export function watchStream(stream: BodyStream, startedAt: number, onEnd: (end: StreamEnd) => void): BodyStream {
  let bytes = 0;
  let firstByteMs: number | undefined;
  let ended = false;
  const end = (error: ServiceError | undefined) => {
    if (ended) return;
    ended = true;
    onEnd({ bytes, firstByteMs, error });
  };
  return {
    kind: 'stream',
    read: () =>
      stream.read().then(
        (chunk) => {
          if (chunk === null) end(undefined);
          else {
            firstByteMs ??= performance.now() - startedAt;
            bytes += chunk.byteLength;
          }
          return chunk;
        },
        (err: unknown) => {
          end(asServiceError(err));
          throw err;
        },
      ),
    cancel: (reason) => {
      end(new ServiceError('ERR_CLIENT_GONE', `the client went away: ${reason}`));
      stream.cancel(reason);
    },
    release: (chunk) => stream.release?.(chunk),
  };
}

/**
 * Reads a stream whole, up to `limit` bytes (past it the stream is cancelled and the read fails
 * with ERR_BAD_RESPONSE): for callers that need the whole body (sdk.invoke, the console's invoke).
 */
export async function readWhole(stream: BodyStream, limit: number): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (let chunk = await stream.read(); chunk !== null; chunk = await stream.read()) {
    size += chunk.byteLength;
    if (size > limit) {
      stream.cancel('the body is over the limit of the reader');
      throw new ServiceError('ERR_BAD_RESPONSE', `the streamed response body is over ${limit} bytes, the limit of a whole body`);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

function asServiceError(err: unknown): ServiceError {
  return err instanceof ServiceError ? err : new ServiceError('ERR_INTERNAL', err instanceof Error ? err.message : String(err));
}
