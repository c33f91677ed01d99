// node8's `net` and `tls`: TCP client sockets through the host's guarded egress (../egress.ts), so
// that database and cache clients (pg, ioredis, mysql2) run. A Socket is a Duplex over a
// connection the host holds: it reads a chunk at a time when the stream wants more (the host
// reads the kernel only then), and each write waits until the host handed its bytes on, so write()
// returns false and 'drain' follows as in Node. The host does TLS (`tls.connect`, and upgrades of
// an open socket as pg's SSLRequest makes). Servers (net.createServer) are not offered.
import type { HostError } from '../../errors';
import { internal, nodeError } from '../../guest/native';
import { notImplemented, notImplementedClass } from '../../node/guest/not-implemented';
import { WRITE_PIECE } from '../limits';
import { copyOf } from './bytes';
import type { SocketOpened, TlsRequest } from '../ops';

declare const require: (id: string) => unknown;
type Bytes = Uint8Array & { toString(encoding?: string): string };
const { Buffer } = require('buffer') as { Buffer: { from(v: ArrayBuffer | string, enc?: string): Bytes; isBuffer(v: unknown): boolean } };
interface DuplexLike {
  push(chunk: unknown): boolean;
  emit(event: string, ...args: unknown[]): boolean;
  once(event: string, fn: (...args: unknown[]) => void): this;
  destroy(err?: Error): this;
  readonly destroyed: boolean;
  readonly readable: boolean;
  readonly writable: boolean;
}
const { Duplex } = require('stream') as { Duplex: new (options?: object) => DuplexLike };
const g = globalThis as unknown as { setTimeout(fn: () => void, ms: number): unknown; clearTimeout(t: unknown): void };

/** The error Node would give for a host operation's failure. */
export function socketError(err: unknown): Error {
  return err instanceof Error ? err : nodeError(err as HostError);
}

interface ConnectOptions {
  port?: unknown;
  host?: unknown;
  path?: unknown;
  timeout?: unknown;
  servername?: unknown;
  [key: string]: unknown;
}
type Listener = (...args: unknown[]) => void;

/** Node's ways to call connect: (options[, listener]), (port[, host][, listener]), (path[, listener]). */
function connectArguments(args: unknown[]): [ConnectOptions, Listener | undefined] {
  const listener = typeof args[args.length - 1] === 'function' ? (args[args.length - 1] as Listener) : undefined;
  const first = args[0];
  if (typeof first === 'object' && first !== null) return [{ ...(first as ConnectOptions) }, listener];
  if (typeof first === 'string' && !/^\s*\d+\s*$/.test(first)) return [{ path: first }, listener];
  return [{ port: first, ...(typeof args[1] === 'string' ? { host: args[1] } : {}) }, listener];
}

function checkedPort(port: unknown): number {
  const n = typeof port === 'string' && port.trim() !== '' ? Number(port) : port;
  if (typeof n !== 'number' || !Number.isInteger(n) || n <= 0 || n >= 65536) {
    throw Object.assign(new RangeError(`Port should be > 0 and < 65536. Received ${typeof port === 'number' ? `type number (${port})` : JSON.stringify(port)}.`), { code: 'ERR_SOCKET_BAD_PORT' });
  }
  return n;
}

/** TLS options as the host takes them; the ones islet does not offer are refused by name. */
export function tlsRequest(options: ConnectOptions): TlsRequest {
  for (const key of ['key', 'cert', 'pfx', 'passphrase']) {
    if (options[key] !== undefined) throw Object.assign(new Error(`tls: client certificates (${key}) are not offered by islet`), { code: 'ERR_METHOD_NOT_IMPLEMENTED' });
  }
  const ca =
    options.ca === undefined ? [] : (Array.isArray(options.ca) ? options.ca : [options.ca]).map((c) => (typeof c === 'string' ? c : Buffer.isBuffer(c) ? (c as Bytes).toString('utf8') : String(c)));
  const alpn = Array.isArray(options.ALPNProtocols) ? options.ALPNProtocols.map((p) => (typeof p === 'string' ? p : (p as Bytes).toString('utf8'))) : [];
  return {
    ...(typeof options.servername === 'string' && options.servername !== '' ? { servername: options.servername } : {}),
    ...(options.rejectUnauthorized === false ? { rejectUnauthorized: false } : {}),
    ...(ca.length > 0 ? { ca } : {}),
    ...(alpn.length > 0 ? { alpn } : {}),
  };
}

type State = 'idle' | 'connecting' | 'open' | 'moved' | 'closed';

/** Moves an open socket's connection to `into`, which starts TLS on it (tls.connect({socket})). */
let moveTo: (from: Socket, into: Socket, tls: TlsRequest) => void;

export class Socket extends Duplex {
  #id = 0;
  #state: State = 'idle';
  #reading = false;
  #wantsRead = false;
  /** Waiting for the connection: writes, ends and reads made while it connects. */
  #waiting: (() => void)[] = [];
  #written = 0;
  #timeoutMs = 0;
  #timer: unknown;
  #hostname = '';
  connecting = false;
  remoteAddress: string | undefined;
  remotePort: number | undefined;
  remoteFamily: string | undefined;
  localAddress: string | undefined;
  localPort: number | undefined;
  bytesRead = 0;

  static {
    moveTo = (from, into, tls) => from.#moveTo(into, tls);
  }

  constructor(options: { allowHalfOpen?: boolean } = {}) {
    super({ allowHalfOpen: options?.allowHalfOpen === true });
  }

  connect(...args: unknown[]): this {
    const [options, listener] = connectArguments(args);
    if (options.path !== undefined) throw Object.assign(new Error('net: connections to a path (a Unix socket) are not available in islet functions'), { code: 'ERR_METHOD_NOT_IMPLEMENTED' });
    if (this.#state !== 'idle') throw Object.assign(new Error('Socket is already connected or connecting'), { code: 'ERR_SOCKET_CONNECTING' });
    const port = checkedPort(options.port);
    const host = typeof options.host === 'string' && options.host !== '' ? options.host : 'localhost';
    if (listener) this.once('connect', listener);
    if (typeof options.timeout === 'number' && options.timeout > 0) this.setTimeout(options.timeout);
    this.#open(host, port, this.#secure(options));
    return this;
  }

  /** TLS for a direct connection: none for a plain socket (TLSSocket says otherwise). */
  #secure(options: ConnectOptions): TlsRequest | undefined {
    return this instanceof TLSSocket ? tlsRequest(options) : undefined;
  }

  #open(host: string, port: number, tls: TlsRequest | undefined): void {
    this.#state = 'connecting';
    this.connecting = true;
    this.#hostname = host;
    internal.op('tcpConnect', JSON.stringify({ hostname: host, port, tls })).then(
      (answer) => this.#opened(JSON.parse(answer.payload) as SocketOpened, tls !== undefined),
      (err: unknown) => this.#failed(err),
    );
  }

  #opened(info: SocketOpened, secure: boolean): void {
    this.#id = info.id;
    this.connecting = false;
    if (this.destroyed || this.#state === 'closed') {
      void internal.op('tcpClose', JSON.stringify({ id: info.id })).catch(() => undefined);
      return;
    }
    this.#state = 'open';
    this.remoteAddress = info.remoteAddress;
    this.remotePort = info.remotePort;
    this.remoteFamily = info.remoteFamily;
    this.localAddress = info.localAddress;
    this.localPort = info.localPort;
    if (secure) Object.assign(this, { authorized: info.authorized === true, alpnProtocol: info.alpnProtocol ?? false });
    this.#touch();
    if (this instanceof TLSSocket && !secure) {
      this.emit('secureConnect');
    } else {
      this.emit('connect');
      this.emit('ready');
      if (secure) this.emit('secureConnect');
    }
    for (const go of this.#waiting.splice(0)) go();
    // As Node's sockets, it reads into its buffer from the start (up to its high-water mark): a
    // read is waiting on the host, which is how the host's close of the socket reaches it.
    if (this.#wantsRead) this._read();
    else if (!this.destroyed) (this as unknown as { read(n: number): unknown }).read(0);
  }

  #failed(err: unknown): void {
    this.connecting = false;
    this.#waiting = [];
    if (this.#state === 'moved') return;
    this.#state = 'closed';
    if (!this.destroyed) this.destroy(socketError(err));
  }

  /** Runs `go` once connected (at once if it is); a socket that will not connect fails `fail`. */
  #whenOpen(go: () => void, fail: (err: Error) => void): void {
    if (this.#state === 'open') go();
    else if (this.#state === 'connecting') this.#waiting.push(() => go());
    else if (this.#state === 'moved') fail(Object.assign(new Error('this socket was upgraded to TLS: use the socket tls.connect() answered'), { code: 'ERR_SOCKET_CLOSED' }));
    else
      fail(
        Object.assign(new Error(this.#state === 'idle' ? 'the socket is not connected (call connect() first)' : 'This socket has been ended by the other party'), {
          code: this.#state === 'idle' ? 'ERR_SOCKET_NOT_CONNECTED' : 'EPIPE',
        }),
      );
  }

  _read(): void {
    if (this.#state !== 'open') {
      this.#wantsRead = true;
      return;
    }
    this.#wantsRead = false;
    if (this.#reading) return;
    this.#reading = true;
    const id = this.#id;
    internal.op('tcpRead', JSON.stringify({ id })).then(
      (answer) => {
        this.#reading = false;
        if (this.#state !== 'open' || this.destroyed) return;
        if (answer.payload === '{"done":true}') {
          this.push(null);
        } else if (answer.body !== undefined && answer.body.byteLength > 0) {
          this.bytesRead += answer.body.byteLength;
          this.#touch();
          this.push(Buffer.from(answer.body));
        } else {
          // An empty answer (an upgrade moved the bytes): ask again if the stream still wants them.
          this._read();
        }
      },
      (err: unknown) => {
        this.#reading = false;
        if (this.#state === 'open' && !this.destroyed) this.destroy(socketError(err));
      },
    );
  }

  _write(chunk: Uint8Array, _encoding: string, callback: (err?: Error | null) => void): void {
    this.#whenOpen(() => void this.#send(chunk, callback), callback);
  }

  async #send(chunk: Uint8Array, callback: (err?: Error | null) => void): Promise<void> {
    try {
      for (let at = 0; at < chunk.byteLength; at += WRITE_PIECE) {
        const piece = copyOf(chunk, at, WRITE_PIECE);
        await internal.op('tcpWrite', JSON.stringify({ id: this.#id }), piece);
        this.#written += piece.byteLength;
      }
    } catch (err) {
      callback(socketError(err));
      return;
    }
    this.#touch();
    callback();
  }

  _final(callback: (err?: Error | null) => void): void {
    this.#whenOpen(() => {
      internal.op('tcpEnd', JSON.stringify({ id: this.#id })).then(
        () => callback(),
        (err: unknown) => callback(socketError(err)),
      );
    }, callback);
  }

  _destroy(err: Error | null, callback: (err?: Error | null) => void): void {
    g.clearTimeout(this.#timer);
    if (this.#state === 'open') void internal.op('tcpClose', JSON.stringify({ id: this.#id })).catch(() => undefined);
    if (this.#state !== 'moved') this.#state = 'closed';
    this.connecting = false;
    callback(err);
  }

  /** This socket's connection goes to `into`, which asks the host for TLS on it; this one is done. */
  #moveTo(into: Socket, tls: TlsRequest): void {
    this.#whenOpen(
      () => {
        this.#state = 'moved';
        into.#upgrade(this.#id, this.#hostname, tls, this);
      },
      (err) => into.destroy(err),
    );
  }

  #upgrade(id: number, hostname: string, tls: TlsRequest, from: Socket): void {
    this.#state = 'connecting';
    this.connecting = true;
    this.#hostname = hostname;
    this.#id = id;
    internal.op('tcpUpgrade', JSON.stringify({ id, tls })).then(
      (answer) => {
        const info = JSON.parse(answer.payload) as SocketOpened;
        Object.assign(this, { authorized: info.authorized === true, alpnProtocol: info.alpnProtocol ?? false });
        this.#opened(info, false);
      },
      (err: unknown) => {
        this.#failed(err);
        from.destroy();
      },
    );
  }

  #touch(): void {
    if (this.#timeoutMs <= 0) return;
    g.clearTimeout(this.#timer);
    this.#timer = g.setTimeout(() => this.emit('timeout'), this.#timeoutMs);
  }

  /** Emits 'timeout' after `ms` without bytes either way (0 turns it off); it does not close the socket, as in Node. */
  setTimeout(ms: number, callback?: () => void): this {
    this.#timeoutMs = Number(ms) > 0 ? Number(ms) : 0;
    if (callback) {
      if (this.#timeoutMs > 0) this.once('timeout', callback);
      else (this as unknown as { removeListener(e: string, f: () => void): void }).removeListener('timeout', callback);
    }
    g.clearTimeout(this.#timer);
    this.#touch();
    return this;
  }

  /** Nagle and keep-alive are the host's business (its sockets send at once): accepted, and nothing changes. */
  setNoDelay(_noDelay?: boolean): this {
    return this;
  }

  setKeepAlive(_enable?: boolean, _initialDelay?: number): this {
    return this;
  }

  ref(): this {
    return this;
  }

  unref(): this {
    return this;
  }

  address(): { address: string; family: string; port: number } | Record<string, never> {
    return this.localAddress === undefined ? {} : { address: this.localAddress, family: this.remoteFamily ?? 'IPv4', port: this.localPort ?? 0 };
  }

  resetAndDestroy(): this {
    return this.destroy();
  }

  get bytesWritten(): number {
    return this.#written;
  }

  get pending(): boolean {
    return this.#state !== 'open';
  }

  get readyState(): string {
    if (this.#state === 'connecting') return 'opening';
    if (this.#state !== 'open') return 'closed';
    if (this.readable && this.writable) return 'open';
    return this.readable ? 'readOnly' : this.writable ? 'writeOnly' : 'closed';
  }

  get timeout(): number | undefined {
    return this.#timeoutMs > 0 ? this.#timeoutMs : undefined;
  }
}

/** tls.TLSSocket made over a stream that is not a socket of this function (got's http2-wrapper takes a class from one at load). */
const JSStreamSocket = notImplementedClass('tls.JSStreamSocket');

export class TLSSocket extends Socket {
  readonly encrypted = true;
  authorized = false;
  authorizationError: string | null = null;
  alpnProtocol: string | false = false;
  _handle: unknown;

  constructor(socket?: unknown, _options?: object) {
    super();
    if (socket !== undefined && !(socket instanceof Socket)) this._handle = { _parentWrap: { constructor: JSStreamSocket } };
  }

  getPeerCertificate(): Record<string, never> {
    return {};
  }
  getProtocol(): string | null {
    return null;
  }
  getCipher(): undefined {
    return undefined;
  }
  getSession(): undefined {
    return undefined;
  }
  setServername(_name: string): void {}
}

/** `net.connect` and `net.createConnection`: a new Socket, connecting. */
export function createConnection(...args: unknown[]): Socket {
  const [options] = connectArguments(args);
  return new Socket({ allowHalfOpen: options.allowHalfOpen === true }).connect(...args);
}

const isIPv4 = (s: unknown) => typeof s === 'string' && /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/.test(s);
const isIPv6 = (s: unknown) => typeof s === 'string' && s.includes(':') && /^[0-9a-fA-F:.]+$/.test(s) && (s.match(/::/g)?.length ?? 0) <= 1;

const net = {
  Socket,
  Stream: Socket,
  connect: createConnection,
  createConnection,
  isIP: (s: unknown) => (isIPv4(s) ? 4 : isIPv6(s) ? 6 : 0),
  isIPv4,
  isIPv6,
  getDefaultAutoSelectFamily: () => false,
  setDefaultAutoSelectFamily: () => undefined,
  createServer: notImplemented('net.createServer (a function serves HTTP with http.createServer)'),
  Server: notImplementedClass('net.Server'),
  BlockList: notImplementedClass('net.BlockList'),
  SocketAddress: notImplementedClass('net.SocketAddress'),
};
export default net;

/** tls.connect: (options[, callback]), (port[, host][, options][, callback]); with `options.socket`, TLS over that open socket. */
function tlsConnect(...args: unknown[]): TLSSocket {
  const callback = typeof args[args.length - 1] === 'function' ? (args.pop() as Listener) : undefined;
  let options: ConnectOptions;
  if (typeof args[0] === 'object' && args[0] !== null) options = { ...(args[0] as ConnectOptions) };
  else options = { port: args[0], ...(typeof args[1] === 'string' ? { host: args[1] } : {}), ...((typeof args[1] === 'object' ? args[1] : args[2]) as object | undefined) };
  const tls = tlsRequest(options);
  const socket = new TLSSocket(options.socket);
  if (callback) socket.once('secureConnect', callback);
  if (options.socket !== undefined) {
    if (!(options.socket instanceof Socket) || options.socket instanceof TLSSocket)
      throw Object.assign(new TypeError('tls.connect: options.socket must be an open net.Socket of this function'), { code: 'ERR_INVALID_ARG_TYPE' });
    moveTo(options.socket, socket, tls);
  } else {
    socket.connect(options);
  }
  return socket;
}

export const tls = {
  connect: tlsConnect,
  TLSSocket,
  checkServerIdentity: () => undefined,
  createSecureContext: (options?: object) => ({ context: {}, options }),
  getCiphers: () => ['tls_aes_128_gcm_sha256', 'tls_aes_256_gcm_sha384', 'tls_chacha20_poly1305_sha256'],
  createServer: notImplemented('tls.createServer'),
  Server: notImplementedClass('tls.Server'),
  SecureContext: notImplementedClass('tls.SecureContext'),
  rootCertificates: [] as string[],
  DEFAULT_MIN_VERSION: 'TLSv1.2',
  DEFAULT_MAX_VERSION: 'TLSv1.3',
  DEFAULT_ECDH_CURVE: 'auto',
};
