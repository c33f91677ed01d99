import type { HttpResponse } from '@trufflesuite/uws-js-unofficial';
import { ServiceError } from '../engine/errors';
import { streamedBodyTooLarge, wholeBodyTooLarge, type RequestBody } from '../engine/request-body';

/**
 * Bytes held for a reader before the socket is paused: past this the server stops reading, the
 * kernel's buffers fill and the client's sends wait until the function reads on.
 */
const HIGH_WATER = 1024 * 1024;
/**
 * uWS's pause stops a socket both ways, and a write that blocks on a paused socket is never heard
 * of again: once resumed, the socket neither becomes writable nor reads (measured on this uWS: a
 * 20 MB answer written after pause() stopped at 4 MB for good; the bench's 100 MB relay hung in 1
 * run of 3). So the socket is unpaused before each write of the answer and stays so while the
 * answer waits for the client; meanwhile the body may run ahead of the function by its memory
 * limit (`holdUpTo`), at least this much, and past it the body fails. A client that reads its
 * answer as it sends still runs ahead: on loopback a 100 MB relay's body reached 58 MB ahead of
 * its answer, and with 32 MiB as the bound more than half of such relays failed.
 */
const MIN_HOLD = 32 * HIGH_WATER;
/**
 * The memory of a chunk a relay wrote out holds a later chunk of up to this many bytes (uWS reads
 * at most 512 KiB at a time), a few such at once: relayed bytes are copied into memory that is
 * already the process's and in the cache, instead of memory new each time.
 */
const SPARE_BYTES = 512 * 1024;
const MAX_SPARES = 4;

interface Waiting {
  resolve(chunk: Uint8Array | Buffer | undefined): void;
  reject(err: ServiceError): void;
  /** A reader of the whole body (its limit); otherwise of the next bytes (at most this many). */
  whole: number | undefined;
  maxBytes: number;
}

/**
 * A request body read from uWS as it arrives (see RequestBody). uWS hands each chunk once and
 * reuses its memory, so each is copied; while more than HIGH_WATER bytes wait for the reader the
 * socket is paused (res.pause), and resumed once the reader has taken them. Past `streamLimit`
 * bytes (or a whole read's limit) the body is refused and reading stops.
 */
export class UwsRequestBody implements RequestBody {
  readonly kind = 'request-body';
  refusal: ServiceError | undefined;
  private readonly chunks: Buffer[] = [];
  private queued = 0;
  private received = 0;
  private ended = false;
  private failure: ServiceError | undefined;
  private paused = false;
  /** Set once the response is gone (answered, or aborted): `res` may not be touched any more. */
  private released = false;
  private cancelled = false;
  private waiting: Waiting | undefined;
  /** The answer is being written, or waits for the client to take what was written: the socket may not be paused. */
  private answerBlocked = false;
  /** What may wait ahead of the function while its answer waits for the client (see MIN_HOLD). */
  private holdLimit = MIN_HOLD;
  /** The limit of a whole read once one was asked for (it holds the bytes until the end). */
  private wholeLimit = Number.POSITIVE_INFINITY;
  /** Memory of chunks a relay wrote out, for later chunks (see SPARE_BYTES). */
  private readonly spares: ArrayBuffer[] = [];
  /** The memory this body copied chunks into: only it may be reused (a joined read may be Buffer's shared pool). */
  private readonly own = new WeakSet<ArrayBuffer>();

  constructor(
    private readonly res: HttpResponse,
    readonly declaredBytes: number | undefined,
    private readonly streamLimit: number,
  ) {
    res.onData((chunk, isLast) => this.data(chunk, isLast));
  }

  get complete(): boolean {
    return this.ended && this.failure === undefined;
  }

  next(maxBytes: number): Promise<Uint8Array | undefined> {
    if (this.waiting) return Promise.reject(new ServiceError('ERR_BAD_REQUEST', 'the request body is already being read'));
    return new Promise<Uint8Array | Buffer | undefined>((resolve, reject) => {
      this.waiting = { resolve, reject, whole: undefined, maxBytes: Math.max(1, maxBytes) };
      this.serve();
    });
  }

  whole(limit: number): Promise<Buffer> {
    if (this.waiting) return Promise.reject(new ServiceError('ERR_BAD_REQUEST', 'the request body is already being read'));
    this.wholeLimit = limit;
    if (this.declaredBytes !== undefined && this.declaredBytes > limit) this.refuse(wholeBodyTooLarge(limit, this.declaredBytes));
    else if (this.received > limit) this.refuse(wholeBodyTooLarge(limit));
    return new Promise<Uint8Array | Buffer | undefined>((resolve, reject) => {
      this.waiting = { resolve, reject, whole: limit, maxBytes: 0 };
      // A whole read holds every byte until the end (within its limit): the socket reads on.
      this.resume();
      this.serve();
    }) as Promise<Buffer>;
  }

  /**
   * What is left is dropped as it comes. The socket is not paused: the answer (which says
   * Connection: close) must still go out whole, and a paused socket sends only what fits at once.
   */
  cancel(): void {
    if (this.cancelled) return;
    this.cancelled = true;
    this.chunks.length = 0;
    this.queued = 0;
    this.resume(true);
    this.fail(new ServiceError('ERR_CLIENT_GONE', 'the call ended before its request body was read'));
  }

  holdUpTo(bytes: number): void {
    this.holdLimit = Math.max(MIN_HOLD, bytes);
  }

  /**
   * A streamed answer is about to write, or waits for the client (the socket reads on: see
   * MIN_HOLD), or goes on (the socket may pause again for the reader).
   */
  answerWrites(phase: 'write' | 'blocked' | 'flowing'): void {
    this.answerBlocked = phase !== 'flowing';
    if (this.answerBlocked) this.resume(true);
    else if (this.queued >= HIGH_WATER && !this.ended) this.pause();
  }

  /**
   * A chunk `next` gave was written out: its memory holds a later chunk, unless queued bytes still
   * share it. With MAX_SPARES kept already, the smallest gives way to a larger one, so that spares
   * come to fit the largest chunks.
   */
  release(chunk: Uint8Array): void {
    const memory = chunk.buffer;
    if (!(memory instanceof ArrayBuffer) || !this.own.has(memory) || memory.byteLength > SPARE_BYTES || this.spares.includes(memory)) return;
    if (this.chunks.some((queued) => queued.buffer === memory)) return;
    if (this.spares.length < MAX_SPARES) this.spares.push(memory);
    else {
      const smallest = this.spares.reduce((at, spare, i) => (spare.byteLength < this.spares[at]!.byteLength ? i : at), 0);
      if (this.spares[smallest]!.byteLength < memory.byteLength) this.spares[smallest] = memory;
    }
  }

  /** Memory for a copy of `bytes` bytes: the smallest spare that holds them, or new memory. */
  private memoryFor(bytes: number): Buffer {
    let best = -1;
    for (let i = 0; i < this.spares.length; i++) {
      const size = this.spares[i]!.byteLength;
      if (size >= bytes && (best < 0 || size < this.spares[best]!.byteLength)) best = i;
    }
    if (best < 0) {
      const copy = Buffer.allocUnsafeSlow(bytes);
      this.own.add(copy.buffer as ArrayBuffer);
      return copy;
    }
    const [spare] = this.spares.splice(best, 1);
    return Buffer.from(spare!, 0, bytes);
  }

  /** The client went away (uWS's onAborted): a reader's read fails; `res` is gone. */
  aborted(): void {
    this.released = true;
    if (!this.ended) this.fail(new ServiceError('ERR_CLIENT_GONE', 'the client went away before the whole request body arrived'));
  }

  /** The response was ended: `res` may not be touched from now on. */
  answered(): void {
    this.released = true;
  }

  private data(chunk: ArrayBuffer, isLast: boolean): void {
    if (this.cancelled || this.failure) return;
    this.received += chunk.byteLength;
    if (this.received > this.streamLimit) {
      this.refuse(streamedBodyTooLarge(this.streamLimit));
      return;
    }
    if (this.received > this.wholeLimit) {
      this.refuse(wholeBodyTooLarge(this.wholeLimit));
      return;
    }
    // (A whole read holds every byte up to its own limit.)
    if (this.queued + chunk.byteLength > this.holdLimit && this.wholeLimit === Number.POSITIVE_INFINITY) {
      this.fail(
        new ServiceError(
          'ERR_RESOURCE_LIMIT',
          `${this.holdLimit} bytes of the request body (the function's memory limit, and at least ${MIN_HOLD}) arrived ahead of its reading while its answer waited for the client: a client must read the answer it is sent`,
        ),
      );
      return;
    }
    if (chunk.byteLength > 0) {
      // uWS reuses the chunk's memory after this callback returns: copied, into memory of its own
      // (never Buffer's shared pool: a read moves it into the isolate) and not zero-filled first
      // (Buffer.from's zero-filling FastBuffer took 280 ms of the server's thread in 100 MB relayed).
      const copy = this.memoryFor(chunk.byteLength);
      copy.set(new Uint8Array(chunk));
      this.chunks.push(copy);
      this.queued += chunk.byteLength;
    }
    if (isLast) this.ended = true;
    else if (this.waiting?.whole === undefined && this.queued >= HIGH_WATER) this.pause();
    this.serve();
  }

  /** Answers the waiting reader if it can be answered now. */
  private serve(): void {
    const waiting = this.waiting;
    if (!waiting) return;
    if (this.failure) {
      this.waiting = undefined;
      waiting.reject(this.failure);
      return;
    }
    if (waiting.whole !== undefined) {
      if (!this.ended) return;
      this.waiting = undefined;
      const all = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks, this.queued);
      this.chunks.length = 0;
      this.queued = 0;
      waiting.resolve(all);
      return;
    }
    if (this.queued === 0) {
      if (this.ended) {
        this.waiting = undefined;
        waiting.resolve(undefined);
      }
      return;
    }
    this.waiting = undefined;
    waiting.resolve(this.take(waiting.maxBytes));
    if (this.queued < HIGH_WATER / 2) this.resume();
  }

  /** Up to `maxBytes` of the waiting bytes, in one piece. */
  private take(maxBytes: number): Buffer {
    const first = this.chunks[0]!;
    if (first.byteLength >= maxBytes || this.chunks.length === 1) {
      const piece = first.byteLength > maxBytes ? first.subarray(0, maxBytes) : first;
      if (piece === first) this.chunks.shift();
      else this.chunks[0] = first.subarray(maxBytes);
      this.queued -= piece.byteLength;
      return piece;
    }
    let count = 0;
    let size = 0;
    while (count < this.chunks.length && size + this.chunks[count]!.byteLength <= maxBytes) size += this.chunks[count++]!.byteLength;
    const pieces = this.chunks.splice(0, count);
    this.queued -= size;
    return Buffer.concat(pieces, size);
  }

  private refuse(error: ServiceError): void {
    this.refusal ??= error;
    this.chunks.length = 0;
    this.queued = 0;
    this.pause();
    this.fail(error);
  }

  private fail(error: ServiceError): void {
    this.failure ??= error;
    this.serve();
  }

  private pause(): void {
    if (this.paused || this.released || this.answerBlocked) return;
    this.paused = true;
    this.res.pause();
  }

  /** Reads on (`always`: even a body that failed or was cancelled, for the answer's sake). */
  private resume(always = false): void {
    if (!this.paused || this.released || (!always && (this.cancelled || this.failure))) return;
    this.paused = false;
    this.res.resume();
  }
}
