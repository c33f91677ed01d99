// A call as Node's server gives it: an IncomingMessage (the http module's own class, so that
// Express's and Koa's request prototypes, made from http.IncomingMessage.prototype, fit it) whose
// body is a Readable, on a socket that stands for the client's connection.
import type { MetaHead } from '../../../sandbox/protocol';

declare const require: (id: string) => unknown;
type Emitter = { emit(event: string, ...args: unknown[]): boolean; on(event: string, fn: (...args: unknown[]) => void): unknown };
const EventEmitter = require('events') as new () => Emitter;
const { Buffer } = require('buffer') as { Buffer: { from(v: unknown, enc?: string): Uint8Array; byteLength(s: string): number } };

export interface Incoming extends Emitter {
  method: string | null;
  url: string;
  headers: Record<string, string | string[]>;
  headersDistinct: Record<string, string[]>;
  rawHeaders: string[];
  complete: boolean;
  aborted: boolean;
  socket: CallSocket;
  connection: CallSocket;
  push(chunk: unknown): boolean;
  destroyed: boolean;
}

/**
 * The connection a call came on, as far as a function can see one: no address of the client (the
 * server does not hand it over), never encrypted as seen from here (islet's front ends TLS).
 * Libraries wait on its 'close' (on-finished) and read `writable` (Koa).
 */
export class CallSocket extends EventEmitter {
  remoteAddress: string | undefined = undefined;
  remotePort: number | undefined = undefined;
  remoteFamily: string | undefined = undefined;
  localAddress = '127.0.0.1';
  localPort = 0;
  encrypted = false;
  readable = true;
  writable = true;
  destroyed = false;
  bytesRead = 0;
  bytesWritten = 0;
  address(): { address: string; family: string; port: number } {
    return { address: this.localAddress, family: 'IPv4', port: this.localPort };
  }
  setTimeout(_ms: number, callback?: () => void): this {
    if (callback) this.on('timeout', callback);
    return this;
  }
  setNoDelay(): this {
    return this;
  }
  setKeepAlive(): this {
    return this;
  }
  ref(): this {
    return this;
  }
  unref(): this {
    return this;
  }
  /** The connection ends: after the answer, or when the client went away. */
  close(hadError: boolean): void {
    if (this.destroyed) return;
    this.destroyed = true;
    this.readable = false;
    this.writable = false;
    this.emit('close', hadError);
  }
  destroy(): this {
    this.close(false);
    return this;
  }
  end(): this {
    return this.destroy();
  }
}

/** Node's header forms: names as given (lower-case here), set-cookie as an array, the rest as one string. */
function fillHeaders(message: Incoming, headers: Record<string, string>): void {
  for (const name in headers) {
    const value = headers[name]!;
    message.rawHeaders.push(name, value);
    message.headersDistinct[name] = [value];
    message.headers[name] = name === 'set-cookie' ? [value] : value;
  }
}

/**
 * The request of one call: `url` is the path after /v2/run/<account>/<fn>, with its query; the body
 * (read whole by the server before the call) is in the stream, then its end.
 */
export function makeIncoming(IncomingMessage: new () => Incoming, head: MetaHead, headers: Record<string, string>, raw: string | ArrayBuffer | undefined, socket: CallSocket): Incoming {
  const req = new IncomingMessage();
  req.method = head[1];
  req.url = head[3] ? `${head[2]}?${head[3]}` : head[2];
  fillHeaders(req, headers);
  // Body parsers read a body only when the headers say there is one (type-is's hasBody).
  if (raw !== undefined && headers['content-length'] === undefined && headers['transfer-encoding'] === undefined) {
    const length = String(typeof raw === 'string' ? Buffer.byteLength(raw) : raw.byteLength);
    req.headers['content-length'] = length;
    req.headersDistinct['content-length'] = [length];
    req.rawHeaders.push('content-length', length);
  }
  req.socket = socket;
  req.connection = socket;
  if (raw !== undefined) req.push(typeof raw === 'string' ? Buffer.from(raw, 'utf8') : Buffer.from(raw));
  req.push(null);
  req.complete = true;
  return req;
}
