import { serverLog } from '../engine/server-log';

/**
 * Requests and notices over a Node IPC channel (a forked worker's `process`, or the supervisor's
 * handle of it). A request gets exactly one answer; if the other side goes away first, every
 * request waiting on it is rejected.
 */
export interface Endpoint {
  send(message: unknown, callback?: (error: Error | null) => void): boolean;
  on(event: 'message', listener: (message: unknown) => void): unknown;
  on(event: 'disconnect' | 'exit', listener: () => void): unknown;
  readonly connected: boolean;
}

type Wire =
  | { t: 'req'; id: number; op: string; body: unknown }
  | { t: 'res'; id: number; ok: boolean; body: unknown }
  | { t: 'note'; op: string; body: unknown };


export class Channel {
  private nextId = 1;
  private readonly waiting = new Map<number, { resolve(value: unknown): void; reject(error: Error): void }>();
  private readonly handlers = new Map<string, (body: unknown) => unknown>();
  private closed = false;

  constructor(private readonly endpoint: Endpoint) {
    endpoint.on('message', (message) => this.receive(message as Wire));
    const gone = () => this.close();
    endpoint.on('disconnect', gone);
    endpoint.on('exit', gone);
  }

  /** Answers requests (or takes notices) named `op`; a thrown error or rejection is sent back as the answer. */
  handle<B, R>(op: string, handler: (body: B) => R | Promise<R>): void {
    this.handlers.set(op, handler as (body: unknown) => unknown);
  }

  request<R = void>(op: string, body: unknown = null): Promise<R> {
    if (this.closed || !this.endpoint.connected) return Promise.reject(new Error(`the channel is closed (${op})`));
    const id = this.nextId++;
    return new Promise<R>((resolve, reject) => {
      this.waiting.set(id, { resolve: resolve as (value: unknown) => void, reject });
      this.post({ t: 'req', id, op, body });
    });
  }

  /** A message that needs no answer. */
  notify(op: string, body: unknown = null): void {
    if (!this.closed && this.endpoint.connected) this.post({ t: 'note', op, body });
  }

  /** The other process is still there. */
  get open(): boolean {
    return !this.closed && this.endpoint.connected;
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    const error = new Error('the other process went away');
    for (const waiter of this.waiting.values()) waiter.reject(error);
    this.waiting.clear();
  }

  private post(message: Wire): void {
    try {
      this.endpoint.send(message, (error) => {
        if (error && message.t === 'req') this.settle(message.id, false, error.message);
      });
    } catch (error) {
      if (message.t === 'req') this.settle(message.id, false, (error as Error).message);
    }
  }

  private receive(message: Wire): void {
    if (typeof message !== 'object' || message === null) return;
    if (message.t === 'res') {
      this.settle(message.id, message.ok, message.body);
      return;
    }
    const handler = this.handlers.get(message.op);
    if (message.t === 'note') {
      void Promise.resolve()
        .then(() => handler?.(message.body))
        .catch((err: unknown) => serverLog.error({ code: 'ERR_INTERNAL', op: message.op, err }, `the ${message.op} notice failed: ${(err as Error)?.message ?? String(err)}`));
      return;
    }
    if (message.t !== 'req') return;
    Promise.resolve()
      .then(() => {
        if (!handler) throw new Error(`no handler for ${message.op}`);
        return handler(message.body);
      })
      .then(
        (body) => this.post({ t: 'res', id: message.id, ok: true, body: body ?? null }),
        (err: unknown) => this.post({ t: 'res', id: message.id, ok: false, body: (err as Error)?.message ?? String(err) }),
      );
  }

  private settle(id: number, ok: boolean, body: unknown): void {
    const waiter = this.waiting.get(id);
    if (!waiter) return;
    this.waiting.delete(id);
    if (ok) waiter.resolve(body);
    else waiter.reject(new Error(String(body)));
  }
}
