import { OpError } from '../errors';
import type { RelaySource } from '../streams/relay';

/** Where the egress keeps a response body it streams: the instance's bodies, for the call that fetched it. */
export interface BodyKeeper {
  add(body: EgressBody): number;
}

interface OpenBody {
  readonly body: EgressBody;
  /** The request whose call fetched it ('' the module's load): it is closed when that is over. */
  readonly owner: string;
}

/**
 * Response bodies of one instance's fetches that are still arriving, read by the function chunk by
 * chunk (`fetchRead`) so that an upstream answer relayed as it is (`new Response(up.body, up)`)
 * goes on to the client as it comes, never buffered whole on the host. A chunk waits on the host
 * only until the function asks for it: the function's reading is the upstream's backpressure.
 * A body belongs to the call that fetched it, as a socket does (sockets/connections.ts): one left
 * unread is closed when that call is over (its answer sent, its stream ended, its `waitUntil` work
 * done), so its upstream connection does not outlive the call.
 */
export class EgressBodies {
  private readonly open = new Map<number, OpenBody>();
  /**
   * Bodies that failed on their own while unread (the request's timeout, the peer's reset) or were
   * closed with their call, by id: no longer counted as open, their error kept for the function's
   * next read (the newest GONE_KEPT). Without this, 64 bodies left unread until their timeout held
   * an instance at its limit for good: every later fetch of a streamed body was refused.
   */
  private readonly gone = new Map<number, Error>();
  private next = 1;

  get size(): number {
    return this.open.size;
  }

  /** Where the egress keeps the bodies of request `owner`'s fetches. */
  keeperFor(owner: string): BodyKeeper {
    return { add: (body) => this.add(body, owner) };
  }

  /** Keeps `body` for call `owner`; past MAX_OPEN_BODIES unread bodies it is refused. */
  add(body: EgressBody, owner: string): number {
    if (this.open.size >= MAX_OPEN_BODIES) {
      void body.cancel();
      throw new OpError('ERR_EGRESS_TOO_LARGE', `fetch: this function instance already has ${MAX_OPEN_BODIES} response bodies open; read or cancel them first`);
    }
    const id = this.next++;
    const entry: OpenBody = { body, owner };
    this.open.set(id, entry);
    void body.failed?.then((err) => {
      if (err === undefined || this.open.get(id) !== entry) return;
      this.open.delete(id);
      this.keepFailure(id, err);
    });
    return id;
  }

  /** The call `owner` is over: the bodies it left unread are closed (a later read fails saying why). */
  ownerEnded(owner: string): void {
    for (const [id, entry] of [...this.open]) {
      if (entry.owner !== owner) continue;
      this.open.delete(id);
      void entry.body.cancel();
      this.keepFailure(
        id,
        new OpError('ERR_EGRESS_CALL_ENDED', 'fetch: the response body was closed unread because the call that fetched it ended: read a body within its call (or its waitUntil work)', 'TypeError'),
      );
    }
  }

  private keepFailure(id: number, err: Error): void {
    this.gone.set(id, err);
    if (this.gone.size > GONE_KEPT) this.gone.delete(this.gone.keys().next().value!);
  }

  /** The body's next chunk, or undefined at its end (the body is then forgotten). */
  async read(id: number): Promise<Uint8Array | undefined> {
    const failure = this.gone.get(id);
    if (failure) {
      this.gone.delete(id);
      throw failure;
    }
    const body = this.open.get(id)?.body;
    if (!body) return undefined;
    try {
      const chunk = await body.next();
      if (chunk === undefined) this.open.delete(id);
      return chunk;
    } catch (err) {
      this.open.delete(id);
      this.gone.delete(id);
      throw err;
    }
  }

  /**
   * Body `id` as a relay's source (an answer passes it on untouched): the relay reads it and gives
   * it up. A body that failed unread fails its relay; one already read to its end relays nothing.
   */
  take(id: number): RelaySource {
    const failure = this.gone.get(id);
    this.gone.delete(id);
    const body = this.open.get(id)?.body;
    this.open.delete(id);
    if (failure) return { next: () => Promise.reject(failure), cancel: () => undefined };
    if (!body) return { next: () => Promise.resolve(undefined), cancel: () => undefined };
    return { next: () => body.next(), cancel: () => void body.cancel() };
  }

  cancel(id: number): void {
    this.gone.delete(id);
    const body = this.open.get(id)?.body;
    this.open.delete(id);
    if (body) void body.cancel();
  }

  /** The instance is gone: every upstream connection it held is closed. */
  closeAll(): void {
    for (const { body } of this.open.values()) void body.cancel();
    this.open.clear();
    this.gone.clear();
  }
}

/** A body still arriving: its next chunk (undefined at the end), or cancel it. */
export interface EgressBody {
  next(): Promise<Uint8Array | undefined>;
  cancel(): Promise<void>;
  /** Settles with the error that ends the body on its own (its upstream failed or timed out), or undefined when it closed; never rejects. */
  failed?: Promise<Error | undefined>;
}

/** Errors of bodies that failed unread, kept for the function's next read of each. */
const GONE_KEPT = 256;

/** Unread response bodies one instance may hold open at once. */
export const MAX_OPEN_BODIES = 64;

/**
 * Bodies at most this long, by their Content-Length, come whole with the answer (one crossing);
 * longer ones and those of unknown length (chunked: event streams, relays) are read as they come.
 */
export const WHOLE_BODY_BYTES = 1024 * 1024;
