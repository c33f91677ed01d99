// A call as Node's server gives it: an IncomingMessage (the http module's own class, so that
// Express's and Koa's request prototypes, made from http.IncomingMessage.prototype, fit it) whose
// body is a Readable, on a socket that stands for the client's connection.
import type { MetaHead } from '../../../sandbox/protocol';
import { INTERNAL, type Internal } from '../../../node8/sandbox/internal';
import type { HostError } from '../../errors';

declare const require: (id: string) => unknown;
const internal = require(INTERNAL) as Internal;
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
  destroy(error?: Error): unknown;
  _read(): void;
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
 * The request of one call: `url` is the path after /v2/run/<account>/<fn>, with its query. A body
 * the server read before the call is in the stream, then its end; one still arriving (`raw` is its
 * id) is read from the host as the app reads the stream (body parsers, `req.pipe`), so the client's
 * upload goes at the app's pace.
 */
export function makeIncoming(IncomingMessage: new () => Incoming, head: MetaHead, headers: Record<string, string>, raw: string | ArrayBuffer | number | undefined, socket: CallSocket): Incoming {
  const req = new IncomingMessage();
  req.method = head[1];
  req.url = head[3] ? `${head[2]}?${head[3]}` : head[2];
  fillHeaders(req, headers);
  // Body parsers read a body only when the headers say there is one (type-is's hasBody).
  // (A body still arriving always came with one or the other.)
  if (raw !== undefined && typeof raw !== 'number' && headers['content-length'] === undefined && headers['transfer-encoding'] === undefined) {
    const length = String(typeof raw === 'string' ? Buffer.byteLength(raw) : raw.byteLength);
    req.headers['content-length'] = length;
    req.headersDistinct['content-length'] = [length];
    req.rawHeaders.push('content-length', length);
  }
  req.socket = socket;
  req.connection = socket;
  if (typeof raw === 'number') {
    readAsItArrives(req, raw);
    return req;
  }
  if (raw !== undefined) req.push(typeof raw === 'string' ? Buffer.from(raw, 'utf8') : Buffer.from(raw));
  req.push(null);
  req.complete = true;
  return req;
}

/**
 * The body of a call still arriving on the host (engine/capabilities/request-body), a chunk asked
 * for each time the app wants more: a failed read (the client went away, the body passed its
 * limit) destroys the request with Node's ECONNRESET, as a dropped connection does in Node.
 */
function readAsItArrives(req: Incoming, id: number): void {
  const ask = JSON.stringify({ id });
  let reading = false;
  const pump = (): void => {
    if (reading || req.destroyed) return;
    reading = true;
    internal.op('bodyRead', ask).then(
      (answer) => {
        reading = false;
        if (answer.payload === '{"done":true}') {
          req.complete = true;
          req.push(null);
        } else if (answer.body && answer.body.byteLength > 0) req.push(Buffer.from(answer.body));
        else pump();
      },
      (err: HostError) => {
        reading = false;
        req.aborted = true;
        req.destroy(Object.assign(new Error(err.message), { code: err.code === 'ERR_PAYLOAD_TOO_LARGE' ? err.code : 'ECONNRESET' }));
      },
    );
  };
  req._read = pump;
}
