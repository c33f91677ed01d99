/**
 * The operations between a streamed answer's guest half (guest/response-streams.ts, in both
 * runtimes) and its host half (host.ts): the host pulls one chunk at a time with
 * `fire(Fire.stream, key, op)` and the guest answers each pull with one `chunk`. Bundled into the
 * runtimes: no imports.
 */

/** What `fire(Fire.stream, key, op)` asks of a response stream: its next chunk, or to stop (its reader went away). */
export const StreamOp = { pull: 0, cancel: 1 } as const;
/** What a stream's `chunk` answer is: a chunk (more may follow), the end, or a failure (its message). */
export const StreamState = { more: 0, end: 1, error: 2 } as const;
/** Response streams one instance may have open at once. */
export const MAX_STREAMS = 256;

export interface StreamsCallbacks {
  /**
   * Answers a pull of response stream `key`: a chunk (text or bytes) with StreamState.more, the
   * end, or a failure with its message (fire and forget).
   */
  chunk(key: number, data: string | ArrayBuffer | undefined, state: number, message?: string): void;
}
