import { OpError } from '../errors';

/**
 * Response bodies of one instance's fetches that are still arriving, read by the function chunk by
 * chunk (`fetchRead`) so that an upstream answer relayed as it is (`new Response(up.body, up)`)
 * goes on to the client as it comes, never buffered whole on the host. A chunk waits on the host
 * only until the function asks for it: the function's reading is the upstream's backpressure.
 */
export class EgressBodies {
  private readonly open = new Map<number, EgressBody>();
  private next = 1;

  /** Keeps `body` for the function; past MAX_OPEN_BODIES unread bodies it is refused. */
  add(body: EgressBody): number {
    if (this.open.size >= MAX_OPEN_BODIES) {
      void body.cancel();
      throw new OpError('ERR_EGRESS_TOO_LARGE', `fetch: this function instance already has ${MAX_OPEN_BODIES} response bodies open; read or cancel them first`);
    }
    const id = this.next++;
    this.open.set(id, body);
    return id;
  }

  /** The body's next chunk, or undefined at its end (the body is then forgotten). */
  async read(id: number): Promise<Uint8Array | undefined> {
    const body = this.open.get(id);
    if (!body) return undefined;
    try {
      const chunk = await body.next();
      if (chunk === undefined) this.open.delete(id);
      return chunk;
    } catch (err) {
      this.open.delete(id);
      throw err;
    }
  }

  cancel(id: number): void {
    const body = this.open.get(id);
    this.open.delete(id);
    if (body) void body.cancel();
  }

  /** The instance is gone: every upstream connection it held is closed. */
  closeAll(): void {
    for (const body of this.open.values()) void body.cancel();
    this.open.clear();
  }
}

/** A body still arriving: its next chunk (undefined at the end), or cancel it. */
export interface EgressBody {
  next(): Promise<Uint8Array | undefined>;
  cancel(): Promise<void>;
}

/** Unread response bodies one instance may hold open at once. */
export const MAX_OPEN_BODIES = 64;

/**
 * Bodies at most this long, by their Content-Length, come whole with the answer (one crossing);
 * longer ones and those of unknown length (chunked: event streams, relays) are read as they come.
 */
export const WHOLE_BODY_BYTES = 1024 * 1024;
