/**
 * The operations between a streamed answer's guest half (guest/response-streams.ts, in both
 * runtimes) and its host half (host.ts): the host grants a window of bytes with
 * `fire(Fire.stream, key, StreamOp.pull, bytes)` and the guest sends chunks with `chunk` until the
 * window is used up, then waits for the next grant. Bundled into the runtimes: no imports.
 */

/**
 * What `fire(Fire.stream, key, op, arg)` asks of a response stream: more chunks (`arg` bytes of
 * them), to stop (`arg`: why; its reader went away), or to forget it (a relay the host read to its end).
 */
export const StreamOp = { pull: 0, cancel: 1, forget: 2 } as const;
/** What a stream's `chunk` answer is: a chunk (more may follow), the end, or a failure (its message). */
export const StreamState = { more: 0, end: 1, error: 2 } as const;
/**
 * Where a relayed answer's body is (the head's `r: [from, id]`): a body the host holds that the
 * function passed on untouched, read by the host without the sandbox (relay.ts).
 */
export const RelayFrom = { request: 0, fetch: 1 } as const;

/** Response streams one instance may have open at once. */
export const MAX_STREAMS = 256;

export interface StreamsCallbacks {
  /**
   * A chunk of response stream `key` (text or bytes) with StreamState.more, within the window its
   * pulls granted; its end; or its failure with its message (fire and forget).
   */
  chunk(key: number, data: string | ArrayBuffer | undefined, state: number, message?: string): void;
}
