// node8's `http` and `https`: a client (request, get, Agent) over the host's guarded egress, the
// same path as `fetch`, so packages built on Node's http client (axios, node-fetch 2…) work. The
// request body is gathered and sent when the request ends; the response is an IncomingMessage
// stream. Its servers (createServer, Server, ServerResponse) are the http-server capability's,
// loaded on first use: a function whose module listens is served by its server.
import type { HostError } from '../../errors';
import { INTERNAL, type Internal } from '../../../node8/sandbox/internal';
import type { FetchAnswer, FetchRequest } from '../ops';

declare const require: (id: string) => unknown;
const internal = require(INTERNAL) as Internal;
type BufferLike = Uint8Array & { toString(encoding?: string): string };
const { Buffer } = require('buffer') as { Buffer: { from(v: unknown, enc?: string): BufferLike; concat(list: Uint8Array[]): BufferLike; isBuffer(v: unknown): boolean } };
const { Readable, Writable } = require('stream') as {
  Readable: new (options?: object) => ReadableLike;
  Writable: new (options?: object) => WritableLike;
};
const EventEmitter = require('events') as new () => { emit(event: string, ...args: unknown[]): boolean };

interface ReadableLike {
  push(chunk: unknown): boolean;
  once(event: string, fn: (...args: unknown[]) => void): this;
  emit(event: string, ...args: unknown[]): boolean;
  destroy(err?: Error): this;
}
interface WritableLike {
  emit(event: string, ...args: unknown[]): boolean;
  on(event: string, fn: (...args: unknown[]) => void): this;
  once(event: string, fn: (...args: unknown[]) => void): this;
  destroy(err?: Error): this;
  destroyed: boolean;
  end(...args: unknown[]): this;
}

export const STATUS_CODES: Record<number, string> = {
  100: 'Continue',
  101: 'Switching Protocols',
  200: 'OK',
  201: 'Created',
  202: 'Accepted',
  203: 'Non-Authoritative Information',
  204: 'No Content',
  205: 'Reset Content',
  206: 'Partial Content',
  300: 'Multiple Choices',
  301: 'Moved Permanently',
  302: 'Found',
  303: 'See Other',
  304: 'Not Modified',
  307: 'Temporary Redirect',
  308: 'Permanent Redirect',
  400: 'Bad Request',
  401: 'Unauthorized',
  402: 'Payment Required',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  406: 'Not Acceptable',
  407: 'Proxy Authentication Required',
  408: 'Request Timeout',
  409: 'Conflict',
  410: 'Gone',
  411: 'Length Required',
  412: 'Precondition Failed',
  413: 'Payload Too Large',
  414: 'URI Too Long',
  415: 'Unsupported Media Type',
  416: 'Range Not Satisfiable',
  417: 'Expectation Failed',
  418: "I'm a Teapot",
  422: 'Unprocessable Entity',
  425: 'Too Early',
  426: 'Upgrade Required',
  428: 'Precondition Required',
  429: 'Too Many Requests',
  431: 'Request Header Fields Too Large',
  451: 'Unavailable For Legal Reasons',
  500: 'Internal Server Error',
  501: 'Not Implemented',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
  504: 'Gateway Timeout',
  505: 'HTTP Version Not Supported',
  507: 'Insufficient Storage',
  511: 'Network Authentication Required',
};
export const METHODS = [
  'ACL',
  'BIND',
  'CHECKOUT',
  'CONNECT',
  'COPY',
  'DELETE',
  'GET',
  'HEAD',
  'LINK',
  'LOCK',
  'M-SEARCH',
  'MERGE',
  'MKACTIVITY',
  'MKCALENDAR',
  'MKCOL',
  'MOVE',
  'NOTIFY',
  'OPTIONS',
  'PATCH',
  'POST',
  'PROPFIND',
  'PROPPATCH',
  'PURGE',
  'PUT',
  'QUERY',
  'REBIND',
  'REPORT',
  'SEARCH',
  'SOURCE',
  'SUBSCRIBE',
  'TRACE',
  'UNBIND',
  'UNLINK',
  'UNLOCK',
  'UNSUBSCRIBE',
];

export class Agent extends EventEmitter {
  readonly options: Record<string, unknown>;
  readonly maxSockets: number;
  readonly keepAlive: boolean;
  constructor(options: Record<string, unknown> = {}) {
    super();
    this.options = { ...options };
    this.maxSockets = Number(options.maxSockets ?? Infinity);
    this.keepAlive = Boolean(options.keepAlive);
  }
  destroy(): void {}
}

export class IncomingMessage extends Readable {
  statusCode = 0;
  statusMessage = '';
  headers: Record<string, string | string[]> = {};
  headersDistinct: Record<string, string[]> = {};
  rawHeaders: string[] = [];
  trailers: Record<string, string> = {};
  rawTrailers: string[] = [];
  httpVersion = '1.1';
  httpVersionMajor = 1;
  httpVersionMinor = 1;
  complete = false;
  aborted = false;
  url = '';
  method: string | null = null;
  socket = { remoteAddress: undefined, encrypted: false, destroy() {} };
  _read(): void {}
  setTimeout(_ms: number, callback?: () => void): this {
    if (callback) (this as unknown as { once(e: string, f: () => void): void }).once('timeout', callback);
    return this;
  }
}

/** Headers as Node gives them: lower-case names; set-cookie as an array; repeats joined with ', '. */
function nodeHeaders(pairs: [string, string][], message: IncomingMessage): void {
  for (const [name, value] of pairs) {
    message.rawHeaders.push(name, value);
    (message.headersDistinct[name] ??= []).push(value);
    const prior = message.headers[name];
    if (name === 'set-cookie') message.headers[name] = [...((prior as string[] | undefined) ?? []), value];
    else message.headers[name] = prior === undefined ? value : `${prior as string}, ${value}`;
  }
}

function requestUrl(input: unknown, options: Record<string, unknown>, defaultProtocol: string): { url: string; options: Record<string, unknown> } {
  let opts: Record<string, unknown> = {};
  let base: string | undefined;
  if (typeof input === 'string') base = input;
  else if (input instanceof (globalThis as unknown as { URL: typeof URL }).URL) base = input.href;
  else opts = { ...(input as Record<string, unknown>) };
  opts = { ...opts, ...options };
  if (base) {
    const u = new URL(base);
    opts = {
      protocol: u.protocol,
      hostname: u.hostname,
      port: u.port,
      path: `${u.pathname}${u.search}`,
      auth: u.username ? `${decodeURIComponent(u.username)}:${decodeURIComponent(u.password)}` : undefined,
      ...opts,
    };
  }
  const protocol = String(opts.protocol ?? defaultProtocol);
  const host = String(opts.hostname ?? opts.host ?? 'localhost').replace(/:\d+$/, '');
  const port = opts.port ? `:${opts.port}` : '';
  const path = String(opts.path ?? '/');
  const shownHost = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
  return { url: `${protocol}//${shownHost}${port}${path.startsWith('/') ? path : `/${path}`}`, options: opts };
}

export class ClientRequest extends Writable {
  readonly method: string;
  readonly path: string;
  readonly host: string;
  readonly protocol: string;
  aborted = false;
  finished = false;
  reusedSocket = false;
  private readonly headerList = new Map<string, [string, string | string[]]>();
  private readonly chunks: Uint8Array[] = [];
  private timeoutMs = 0;

  constructor(
    private readonly url: string,
    options: Record<string, unknown>,
    callback?: (res: IncomingMessage) => void,
  ) {
    super({
      // The request lives on after its body is written: until its response, or its error, is in.
      autoDestroy: false,
      emitClose: false,
      write: (chunk: unknown, encoding: string, done: () => void) => {
        this.chunks.push(Buffer.isBuffer(chunk) || chunk instanceof Uint8Array ? (chunk as Uint8Array) : Buffer.from(chunk, encoding));
        done();
      },
      final: (done: () => void) => {
        this.finished = true;
        this.send();
        done();
      },
    });
    this.method = String(options.method ?? 'GET').toUpperCase();
    this.path = String(options.path ?? '/');
    this.host = String(options.hostname ?? options.host ?? 'localhost');
    this.protocol = String(options.protocol ?? 'http:');
    const headers = (options.headers ?? {}) as Record<string, string | string[]> | [string, string][];
    if (Array.isArray(headers)) for (const [name, value] of headers) this.setHeader(name, value);
    else for (const [name, value] of Object.entries(headers)) if (value !== undefined) this.setHeader(name, value);
    if (typeof options.auth === 'string' && options.auth && !this.getHeader('authorization')) {
      this.setHeader('authorization', `Basic ${Buffer.from(options.auth).toString('base64')}`);
    }
    if (typeof options.timeout === 'number') this.timeoutMs = options.timeout;
    if (callback) (this as unknown as { once(e: string, f: (res: IncomingMessage) => void): void }).once('response', callback);
    const signal = options.signal as { aborted: boolean; reason: unknown; addEventListener(t: string, f: () => void, o?: object): void } | undefined;
    signal?.addEventListener('abort', () => this.destroy(Object.assign(new Error('The operation was aborted'), { name: 'AbortError', code: 'ABORT_ERR' })), { once: true });
  }

  setHeader(name: string, value: string | number | string[]): this {
    this.headerList.set(name.toLowerCase(), [name, Array.isArray(value) ? value.map(String) : String(value)]);
    return this;
  }
  getHeader(name: string): string | string[] | undefined {
    return this.headerList.get(name.toLowerCase())?.[1];
  }
  getHeaders(): Record<string, string | string[]> {
    return Object.fromEntries([...this.headerList].map(([k, [, v]]) => [k, v]));
  }
  getHeaderNames(): string[] {
    return [...this.headerList.keys()];
  }
  hasHeader(name: string): boolean {
    return this.headerList.has(name.toLowerCase());
  }
  removeHeader(name: string): void {
    this.headerList.delete(name.toLowerCase());
  }
  flushHeaders(): void {}
  setNoDelay(): void {}
  setSocketKeepAlive(): void {}
  setTimeout(ms: number, callback?: () => void): this {
    this.timeoutMs = ms;
    if (callback) this.once('timeout', callback);
    return this;
  }
  abort(): void {
    this.aborted = true;
    this.destroy();
  }

  private send(): void {
    const headers: [string, string][] = [];
    for (const [, [name, value]] of this.headerList) {
      if (Array.isArray(value)) for (const v of value) headers.push([name, v]);
      else headers.push([name, value]);
    }
    const body = this.chunks.length === 0 ? undefined : Buffer.concat(this.chunks);
    let timer: unknown;
    if (this.timeoutMs > 0) timer = setTimeout(() => this.emit('timeout'), this.timeoutMs);
    const hasBody = body !== undefined && this.method !== 'GET' && this.method !== 'HEAD';
    internal.op('fetch', JSON.stringify({ url: this.url, method: this.method, headers, redirect: 'manual' } satisfies Partial<FetchRequest>), hasBody ? body!.slice().buffer : undefined).then(
      (answer) => {
        clearTimeout(timer as number);
        if (this.destroyed) return;
        const meta = JSON.parse(answer.payload) as FetchAnswer;
        const res = new IncomingMessage();
        res.statusCode = meta.status;
        res.statusMessage = meta.statusText || STATUS_CODES[meta.status] || '';
        nodeHeaders(meta.headers, res);
        if (meta.stream !== undefined) readAsItArrives(res, meta.stream);
        if (!this.emit('response', res)) (res as unknown as { resume(): void }).resume();
        if (meta.stream === undefined) {
          if (answer.body && answer.body.byteLength > 0) res.push(Buffer.from(new Uint8Array(answer.body)));
          res.complete = true;
          res.push(null);
        }
        res.once('end', () => this.emit('close'));
      },
      (err: HostError) => {
        clearTimeout(timer as number);
        // The socket error Node's client would give: a refused address is a refused connection.
        const code = err.code === 'ERR_EGRESS_BLOCKED' ? 'ECONNREFUSED' : err.code === 'ERR_EGRESS_TIMEOUT' ? 'ETIMEDOUT' : 'ECONNRESET';
        this.destroy(Object.assign(new Error(err.message.replace(/^fetch failed: /, '')), { code }));
      },
    );
  }
}

/**
 * A response body still arriving on the host (see fetch's egressStream): each chunk is asked for
 * when the reader wants more, so a slow reader holds the upstream back; destroying the response
 * before its end closes the upstream connection.
 */
function readAsItArrives(res: IncomingMessage, id: number): void {
  const ask = JSON.stringify({ id });
  let reading = false;
  const pump = (): void => {
    if (reading) return;
    reading = true;
    internal.op('fetchRead', ask).then(
      (answer) => {
        reading = false;
        if (answer.payload === '{"done":true}') {
          res.complete = true;
          res.push(null);
        } else if (answer.body && answer.body.byteLength > 0) res.push(Buffer.from(new Uint8Array(answer.body)));
        else pump();
      },
      (err: HostError) => {
        reading = false;
        res.destroy(Object.assign(new Error(err.message.replace(/^fetch failed /, '')), { code: 'ECONNRESET' }));
      },
    );
  };
  res._read = pump;
  (res as unknown as { once(event: string, fn: () => void): void }).once('close', () => {
    if (!res.complete) void internal.op('fetchCancel', ask).catch(() => undefined);
  });
}

/** The http-server capability's library: evaluated when a function first makes a server. */
const server = () => internal.library<Record<'createServer' | 'Server' | 'ServerResponse', unknown>>('node/http-server');

function makeModule(defaultProtocol: 'http:' | 'https:') {
  const globalAgent = new Agent();
  const request = (input: unknown, options?: Record<string, unknown> | ((res: IncomingMessage) => void), callback?: (res: IncomingMessage) => void) => {
    const cb = typeof options === 'function' ? options : callback;
    const opts = typeof options === 'object' && options !== null ? options : {};
    const { url, options: merged } = requestUrl(input, opts, defaultProtocol);
    if (!/^https?:$/.test(String(merged.protocol ?? defaultProtocol))) {
      throw Object.assign(new TypeError(`Protocol "${String(merged.protocol)}" not supported. Expected "${defaultProtocol}"`), { code: 'ERR_INVALID_PROTOCOL' });
    }
    return new ClientRequest(url, merged, cb);
  };
  const get = (input: unknown, options?: Record<string, unknown> | ((res: IncomingMessage) => void), callback?: (res: IncomingMessage) => void) => {
    const req = request(input, options, callback);
    req.end();
    return req;
  };
  const unavailable = (name: string) => () => {
    throw Object.assign(new Error(`${defaultProtocol.slice(0, -1)}.${name} is not available in islet functions: islet ends TLS in front of functions (serve with http.createServer)`), {
      code: 'ERR_METHOD_NOT_IMPLEMENTED',
    });
  };
  const servers = defaultProtocol === 'http:';
  return {
    request,
    get,
    Agent,
    globalAgent,
    ClientRequest,
    IncomingMessage,
    STATUS_CODES,
    METHODS,
    maxHeaderSize: 16384,
    createServer: servers ? (...args: unknown[]) => (server().createServer as (...a: unknown[]) => unknown)(...args) : unavailable('createServer'),
    get Server() {
      return servers ? server().Server : unavailable('Server');
    },
    get ServerResponse() {
      return servers ? server().ServerResponse : unavailable('ServerResponse');
    },
    OutgoingMessage: Writable,
    validateHeaderName: (name: string) => {
      if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)) throw Object.assign(new TypeError(`Header name must be a valid HTTP token ["${name}"]`), { code: 'ERR_INVALID_HTTP_TOKEN' });
    },
    validateHeaderValue: (_name: string, value: unknown) => {
      if (/[\r\n\0]/.test(String(value))) throw Object.assign(new TypeError('Invalid character in header content'), { code: 'ERR_INVALID_CHAR' });
    },
  };
}

const http = makeModule('http:');
export const https = makeModule('https:');
export default http;
