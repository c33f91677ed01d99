import type { BodyStream } from '../../body-stream';
import { ServiceError } from '../../errors';

/**
 * A body the host already holds, which an answer passes on untouched: the call's request body
 * (`new Response(request.body)`) or a fetch's response body still arriving (`new Response(up.body,
 * up)`). Its next chunk (undefined at its end), or give it up.
 */
export interface RelaySource {
  next(): Promise<Uint8Array | undefined>;
  cancel(): void;
  /** A chunk from `next` was written out: its memory may hold later bytes (see BodyStream.release). */
  release?(chunk: Uint8Array): void;
}

/**
 * An answer's body read straight from a body the host holds, without entering the isolate: the
 * reader's pace is the source's backpressure (one chunk in flight, none queued). Relayed through
 * the sandbox, 100 MB entered the isolate twice per MiB and was copied in and out of it; here the
 * sandbox only hears of the relay's start and end. `onEnd` is called once, however it ends.
 */
export class RelayedBody {
  private done = false;
  private failure: ServiceError | undefined;
  private pending: ((err: ServiceError) => void) | undefined;

  constructor(
    private readonly source: RelaySource,
    private readonly onEnd: (error: ServiceError | undefined) => void,
  ) {}

  stream(cancel: (reason: string) => void): BodyStream {
    return { kind: 'stream', read: () => this.read(), cancel, release: (chunk) => this.source.release?.(chunk) };
  }

  /** The call failed (its timeout, the instance's death) or its reader went away: the source is given up. */
  fail(error: ServiceError): void {
    if (this.done) return;
    this.source.cancel();
    this.finish(error);
    const pending = this.pending;
    this.pending = undefined;
    pending?.(error);
  }

  private read(): Promise<Uint8Array | null> {
    if (this.failure) return Promise.reject(this.failure);
    if (this.done) return Promise.resolve(null);
    if (this.pending) return Promise.reject(new Error('one read at a time'));
    return new Promise((resolve, reject) => {
      this.pending = reject;
      const step = (): void => {
        this.source.next().then(
          (chunk) => {
            if (this.done) return;
            if (chunk !== undefined && chunk.byteLength === 0) return step();
            this.pending = undefined;
            if (chunk === undefined) this.finish(undefined);
            resolve(chunk ?? null);
          },
          (err: unknown) => {
            if (this.done) return;
            const error = err instanceof ServiceError ? err : new ServiceError('ERR_FUNCTION_FAILED', `the relayed body failed: ${(err as Error)?.message ?? String(err)}`);
            this.pending = undefined;
            this.finish(error);
            reject(error);
          },
        );
      };
      step();
    });
  }

  private finish(error: ServiceError | undefined): void {
    if (this.done) return;
    this.done = true;
    this.failure = error;
    this.onEnd(error);
  }
}
