// `cloudflare:sockets`, the Workers API for outbound TCP: `connect(address, options)` gives a
// Socket with a `readable` and a `writable` stream, `opened` and `closed` promises, `close()` and
// `startTls()`. The same host operations as node8's net (../ops.ts): the readable pulls one chunk
// per read, and each write resolves once the host handed its bytes on.
import type { HostError } from '../../errors';
import { internal, nodeError } from '../../guest/native';
import { WRITE_PIECE } from '../limits';
import { copyOf } from './bytes';
import type { SocketOpened } from '../ops';

const g = globalThis as unknown as Record<string, unknown>;
type Controller = { enqueue(b: Uint8Array): void; close(): void; error(e: unknown): void };
type Streams = {
  ReadableStream: new (source: object, strategy?: object) => unknown;
  WritableStream: new (sink: object) => unknown;
};

export interface SocketAddress {
  hostname: string;
  port: number;
}
export interface SocketOptions {
  secureTransport?: 'off' | 'on' | 'starttls';
  allowHalfOpen?: boolean;
}
export interface SocketInfo {
  remoteAddress: string;
  localAddress: string;
}

function failure(err: unknown): Error {
  return err instanceof Error ? err : nodeError(err as HostError);
}

/** `host:port`, `[v6]:port` or `{hostname, port}`. */
function addressOf(address: unknown): SocketAddress {
  if (typeof address === 'string') {
    const match = /^(\[[^\]]+\]|[^:]+):(\d+)$/.exec(address);
    if (!match) throw new TypeError(`connect: the address must be "host:port" or { hostname, port }, got ${JSON.stringify(address)}`);
    return { hostname: match[1]!.replace(/^\[|\]$/g, ''), port: Number(match[2]) };
  }
  if (typeof address === 'object' && address !== null && typeof (address as SocketAddress).hostname === 'string') {
    return { hostname: (address as SocketAddress).hostname, port: Number((address as SocketAddress).port) };
  }
  throw new TypeError('connect: the address must be "host:port" or { hostname, port }');
}

function bytesOf(chunk: unknown): Uint8Array {
  if (chunk instanceof Uint8Array) return chunk;
  if (chunk instanceof ArrayBuffer) return new Uint8Array(chunk);
  if (ArrayBuffer.isView(chunk)) return new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  if (typeof chunk === 'string') return new (g.TextEncoder as new () => { encode(s: string): Uint8Array })().encode(chunk);
  throw new TypeError('a socket writes ArrayBuffers, typed arrays and strings');
}

/** A promise whose rejection nobody has to handle (the function may never look at `closed`). */
function quiet<T>(promise: Promise<T>): Promise<T> {
  promise.catch(() => undefined);
  return promise;
}

export class Socket {
  readonly readable: unknown;
  readonly writable: unknown;
  readonly opened: Promise<SocketInfo>;
  readonly closed: Promise<void>;
  readonly upgraded: boolean;
  readonly secureTransport: 'off' | 'on' | 'starttls';
  #id: Promise<number>;
  #hostname: string;
  #done = false;
  #moved = false;
  #closed!: { resolve(): void; reject(err: unknown): void };

  constructor(id: Promise<SocketOpened>, hostname: string, secureTransport: 'off' | 'on' | 'starttls', upgraded: boolean, allowHalfOpen: boolean) {
    this.secureTransport = secureTransport;
    this.upgraded = upgraded;
    this.#hostname = hostname;
    this.#id = quiet(id.then((info) => info.id));
    this.opened = quiet(id.then((info) => ({ remoteAddress: `${info.remoteAddress}:${info.remotePort}`, localAddress: `${info.localAddress}:${info.localPort}` })));
    this.closed = quiet(
      new Promise<void>((resolve, reject) => {
        this.#closed = { resolve, reject };
      }),
    );
    this.opened.catch((err) => this.#finish(err));
    const { ReadableStream, WritableStream } = g as unknown as Streams;
    this.readable = new ReadableStream(
      {
        pull: async (controller: Controller) => {
          if (this.#done || this.#moved) return controller.close();
          let answer;
          try {
            answer = await internal.op('tcpRead', JSON.stringify({ id: await this.#id }));
          } catch (err) {
            this.#finish(failure(err));
            throw failure(err);
          }
          if (answer.payload === '{"done":true}' || answer.payload === '{"moved":true}') {
            controller.close();
            if (!allowHalfOpen && answer.payload === '{"done":true}') void this.close();
          } else if (answer.body !== undefined) {
            controller.enqueue(new Uint8Array(answer.body));
          }
        },
        cancel: () => this.close(),
      },
      { highWaterMark: 0 },
    );
    this.writable = new WritableStream({
      write: async (chunk: unknown) => {
        const bytes = bytesOf(chunk);
        const id = await this.#id;
        if (this.#done || this.#moved) throw new TypeError('the socket is closed');
        try {
          for (let at = 0; at < bytes.byteLength; at += WRITE_PIECE) await internal.op('tcpWrite', JSON.stringify({ id }), copyOf(bytes, at, WRITE_PIECE));
        } catch (err) {
          this.#finish(failure(err));
          throw failure(err);
        }
      },
      close: async () => {
        if (!this.#done && !this.#moved) await internal.op('tcpEnd', JSON.stringify({ id: await this.#id })).catch((err: unknown) => this.#finish(failure(err)));
      },
      abort: () => this.close(),
    });
  }

  /** Closes both directions; `closed` resolves. */
  async close(): Promise<void> {
    if (!this.#done && !this.#moved) {
      this.#done = true;
      const id = await this.#id.catch(() => 0);
      if (id) await internal.op('tcpClose', JSON.stringify({ id })).catch(() => undefined);
    }
    this.#finish(undefined);
    return this.closed;
  }

  /** TLS on this connection (made with `secureTransport: 'starttls'`): the new Socket reads and writes; this one is done. */
  startTls(options: { expectedServerHostname?: string } = {}): Socket {
    if (this.secureTransport !== 'starttls') throw new TypeError("startTls() needs a socket made with secureTransport: 'starttls'");
    if (this.#moved || this.#done) throw new TypeError('startTls() was called already, or the socket is closed');
    this.#moved = true;
    const servername = options.expectedServerHostname ?? this.#hostname;
    const upgraded = this.#id
      .then((id) => internal.op('tcpUpgrade', JSON.stringify({ id, tls: { servername } })))
      .then(
        (answer) => JSON.parse(answer.payload) as SocketOpened,
        (err: unknown) => {
          throw failure(err);
        },
      );
    this.#finish(undefined);
    return new Socket(upgraded, servername, 'on', true, false);
  }

  #finish(err: Error | undefined): void {
    this.#done = true;
    if (err) this.#closed.reject(err);
    else this.#closed.resolve();
  }
}

/** `connect(address, options)` of `cloudflare:sockets`. */
export function connect(address: unknown, options: SocketOptions = {}): Socket {
  const { hostname, port } = addressOf(address);
  const secureTransport = options.secureTransport ?? 'off';
  if (!['off', 'on', 'starttls'].includes(secureTransport)) throw new TypeError(`connect: secureTransport must be 'off', 'on' or 'starttls', got ${JSON.stringify(secureTransport)}`);
  const opened = internal.op('tcpConnect', JSON.stringify({ hostname, port, ...(secureTransport === 'on' ? { tls: {} } : {}) })).then(
    (answer) => JSON.parse(answer.payload) as SocketOpened,
    (err: unknown) => {
      throw failure(err);
    },
  );
  return new Socket(opened, hostname, secureTransport, false, options.allowHalfOpen === true);
}

export default { connect };
