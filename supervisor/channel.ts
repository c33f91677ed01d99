import { isServiceError, ServiceError, STATUS_OF, type ErrorCode } from '../engine/errors';
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
  | { t: 'res'; id: number; ok: true; body: unknown }
  | { t: 'res'; id: number; ok: false; body: WireError }
  | { t: 'note'; op: string; body: unknown };

/** A failed request's answer: the error's message, and its code and details when it is one of the contract's. */
interface WireError {
  message: string;
  code?: ErrorCode;
  details?: Record<string, unknown>;
}

function toWire(err: unknown): WireError {
  if (isServiceError(err)) return { message: err.message, code: err.code, details: err.details };
  return { message: (err as Error)?.message ?? String(err) };
}

/** The error on the requesting side: a ServiceError with its code when it crossed as one, else an Error. */
function fromWire(body: WireError): Error {
  if (body.code !== undefined && Object.hasOwn(STATUS_OF, body.code)) return new ServiceError(body.code, body.message, body.details);
  return new Error(body.message);
}

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

  /**
   * Answers requests (or takes notices) named `op`; a thrown error or rejection is sent back as the
   * answer, a ServiceError with its code and details (the requester rejects with a ServiceError of
   * that code, which reaches the client as it would have in one process), any other error as its message.
   */
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
        if (error && message.t === 'req') this.fail(message.id, error);
      });
    } catch (error) {
      if (message.t === 'req') this.fail(message.id, error as Error);
    }
  }

  private receive(message: Wire): void {
    if (typeof message !== 'object' || message === null) return;
    if (message.t === 'res') {
      if (message.ok) this.settle(message.id, (waiter) => waiter.resolve(message.body));
      else this.fail(message.id, fromWire(message.body));
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
        (err: unknown) => this.post({ t: 'res', id: message.id, ok: false, body: toWire(err) }),
      );
  }

  private fail(id: number, error: Error): void {
    this.settle(id, (waiter) => waiter.reject(error));
  }

  private settle(id: number, answer: (waiter: { resolve(value: unknown): void; reject(error: Error): void }) => void): void {
    const waiter = this.waiting.get(id);
    if (!waiter) return;
    this.waiting.delete(id);
    answer(waiter);
  }
}
