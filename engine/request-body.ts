import { ServiceError } from './errors';

/**
 * A request body still arriving from the client when its call starts (the HTTP server's
 * http/request-body.ts): a function that reads `request.body` as a stream gets its bytes as they
 * come, and one that reads it whole (`request.json()`, a seed handler's body, Python's `req.body`)
 * gets one copy once the last byte is in. Reading is the client's backpressure: while nobody reads,
 * the server stops reading the socket.
 */
export interface RequestBody {
  readonly kind: 'request-body';
  /** The Content-Length the client declared (undefined: chunked). */
  readonly declaredBytes: number | undefined;
  /**
   * The next bytes (at most `maxBytes`, never empty), or undefined at the end. Rejects with a
   * ServiceError when the client went away mid-body or the body passed the streamed limit.
   */
  next(maxBytes: number): Promise<Uint8Array | undefined>;
  /**
   * The whole body once it is in, or the rest of it after what `next` took; rejects with
   * ERR_PAYLOAD_TOO_LARGE past `limit` bytes (the limit of a body read whole), or as `next` does.
   */
  whole(limit: number): Promise<Buffer>;
  /** Nobody will read on: what is left is not read (the answer closes the connection). */
  cancel(): void;
  /** A chunk from `next` was written out by a relay: its memory may hold later bytes. */
  release?(chunk: Uint8Array): void;
  /**
   * The function's memory limit, once the call has found its function: what may wait ahead of its
   * reading while its answer waits for the client (bytes in flight count against it).
   */
  holdUpTo?(bytes: number): void;
  /** Set when the body went over a limit: the call's answer, if not already sent, is this 413. */
  readonly refusal: ServiceError | undefined;
  /** Every byte arrived (and nothing was refused). */
  readonly complete: boolean;
}

export function isRequestBody(body: unknown): body is RequestBody {
  return typeof body === 'object' && body !== null && (body as { kind?: unknown }).kind === 'request-body';
}

/** The setting that sets a body's limit, for the refusal's message. */
export const WHOLE_LIMIT_SETTING = '--max-body-mb';
export const STREAM_LIMIT_SETTING = '--max-stream-body-mb';

/** A body read whole (`request.json()`, `text()`, `arrayBuffer()`, a seed handler's body, Python's `req.body`) is over its limit. */
export function wholeBodyTooLarge(limit: number, size?: number): ServiceError {
  return new ServiceError(
    'ERR_PAYLOAD_TOO_LARGE',
    `the request body${size === undefined ? '' : ` (${size} bytes)`} is over the limit of ${limit} bytes for a body read whole (${WHOLE_LIMIT_SETTING}); a function that reads it as a stream (node8's request.body, Python's req.stream) may take up to the streamed limit (${STREAM_LIMIT_SETTING})`,
    { limit: WHOLE_LIMIT_SETTING },
  );
}

/** A body read as a stream is over the streamed limit. */
export function streamedBodyTooLarge(limit: number, size?: number): ServiceError {
  return new ServiceError(
    'ERR_PAYLOAD_TOO_LARGE',
    `the request body${size === undefined ? '' : ` (${size} bytes)`} is over the limit of ${limit} bytes for a body read as a stream (${STREAM_LIMIT_SETTING})`,
    { limit: STREAM_LIMIT_SETTING },
  );
}
