// Node's ServerResponse for a call: headers, statusCode, writeHead, write, end. An answer ended in
// the turn its first write came in goes to the host whole; one still open after that turn streams:
// its status and headers go at once, then each write as the host pulls it (the streaming answers of
// engine/capabilities/streams), with Node's backpressure (write() false past the high-water mark,
// 'drain' once pulled). State lives in symbol-keyed fields: Express and Koa re-prototype the
// object, so every method is on the prototype and reads only `this`.
import type { ChunkSource } from '../../streams/guest/response-streams';
import { INTERNAL, type Internal } from '../../../node8/sandbox/internal';
import type { CallResult, ResultHeaders } from '../../../sandbox/protocol';
import { checkHeader, chunkOf, headersSentError, nodeError, type Chunk, type HeaderValue } from './outgoing';
import type { CallSocket, Incoming } from './request';

declare const require: (id: string) => unknown;
const internal = require(INTERNAL) as Internal;
const { Buffer } = require('buffer') as { Buffer: { from(v: unknown, enc?: string): Uint8Array; concat(list: Uint8Array[]): Uint8Array } };
const { Stream } = require('stream') as {
  Stream: new () => {
    emit(event: string, ...args: unknown[]): boolean;
    on(event: string, fn: (...args: unknown[]) => void): unknown;
    once(event: string, fn: (...args: unknown[]) => void): unknown;
    listenerCount(event: string): number;
  };
};

/** Bytes held for the host before write() answers false, as Node's default. */
const HIGH_WATER_MARK = 16 * 1024;
/** The most a pull takes at once (chunks written in one turn go out together). */
const PULL_BYTES = 1024 * 1024;
const HEADERS = Symbol('headers');
const ANSWER = Symbol('answer');
/** The status writeHead sent: later changes to statusCode do not reach the client, as in Node. */
const STATUS = Symbol('status');

const sizeOf = (c: Chunk) => (typeof c === 'string' ? c.length : c.byteLength);
const asBytes = (c: Chunk) => (typeof c === 'string' ? Buffer.from(c, 'utf8') : c);

/** Chunks as one: text when all are text, bytes otherwise. */
function joined(chunks: Chunk[]): Chunk {
  if (chunks.length === 1) return chunks[0]!;
  return chunks.every((c) => typeof c === 'string') ? (chunks as string[]).join('') : Buffer.concat(chunks.map(asBytes));
}

/**
 * Where a response's bytes go: held until the answer is decided (ended within the turn: one whole
 * answer), then pulled by the host a batch at a time.
 */
class Answer implements ChunkSource {
  readonly queue: Chunk[] = [];
  queuedBytes = 0;
  /** Set once the answer's head went to the host, whole or as a stream. */
  sent = false;
  ended = false;
  cancelled = false;
  needDrain = false;
  private decideQueued = false;
  private waiting: ((step: { done: boolean; value?: unknown }) => void) | undefined;
  private failWaiting: ((err: unknown) => void) | undefined;
  private failure: unknown;

  constructor(
    readonly res: ServerResponse,
    private readonly settle: (result: CallResult) => void,
  ) {}

  push(chunk: Chunk): void {
    const size = sizeOf(chunk);
    if (size === 0) return;
    this.queue.push(chunk);
    this.queuedBytes += size;
    if (this.queuedBytes >= HIGH_WATER_MARK) this.needDrain = true;
    this.hand();
  }

  /** Decides at the end of this turn: ended by then, the answer goes whole; otherwise it streams. */
  commitSoon(): void {
    if (this.sent || this.decideQueued) return;
    this.decideQueued = true;
    queueMicrotask(() => {
      this.decideQueued = false;
      if (!this.sent) this.startStream();
    });
  }

  end(): void {
    this.ended = true;
    if (!this.sent) this.sendWhole();
    else this.hand();
  }

  /** The handler broke the response (destroy): an answer not yet sent fails, a stream is cut. */
  fail(err: Error): void {
    if (this.cancelled) return;
    this.failure = err;
    if (!this.sent) {
      this.sent = true;
      this.settle({ t: 'e', c: 'ERR_FUNCTION_FAILED', m: `${err.name}: ${err.message}` });
      return;
    }
    const reject = this.failWaiting;
    this.waiting = this.failWaiting = undefined;
    reject?.(err);
  }

  private sendWhole(): void {
    this.sent = true;
    const { status, headers } = this.head();
    const chunks = this.queue.splice(0);
    this.queuedBytes = 0;
    const body = chunks.length === 0 ? '' : joined(chunks);
    this.settle({ t: 'b', s: status, h: headers, b: typeof body === 'string' ? body : (new Uint8Array(body).buffer as ArrayBuffer) });
    finish(this.res);
  }

  private startStream(): void {
    this.sent = true;
    const { status, headers } = this.head();
    this.settle({ t: 's', s: status, h: headers, k: internal.openStream(this) });
  }

  private head(): { status: number; headers: ResultHeaders } {
    const res = this.res;
    if (!res.headersSent) res._implicitHeader();
    const headers: ResultHeaders = {};
    const stored = res[HEADERS];
    for (const key in stored) {
      const [name, value] = stored[key]!;
      // An array goes as a line per value for Set-Cookie (cookies hold commas), joined for the rest.
      headers[name] = Array.isArray(value) ? (key === 'set-cookie' ? value.map(String) : value.join(', ')) : String(value);
    }
    return { status: res[STATUS] ?? res.statusCode, headers };
  }

  /** A pull of the host's: what was written since the last (up to PULL_BYTES), or the end. */
  next(): Promise<{ done: boolean; value?: unknown }> {
    if (this.failure !== undefined) return Promise.reject(this.failure);
    const step = this.take();
    if (step) return Promise.resolve(step);
    return new Promise((resolve, reject) => {
      this.waiting = resolve;
      this.failWaiting = reject;
    });
  }

  /** The client went away (or the call's timeout cut the stream). */
  cancel(): void {
    this.cancelled = true;
    this.waiting = this.failWaiting = undefined;
    this.queue.length = 0;
    this.queuedBytes = 0;
    close(this.res, true);
  }

  private hand(): void {
    if (!this.waiting) return;
    const step = this.take();
    if (!step) return;
    const resolve = this.waiting;
    this.waiting = this.failWaiting = undefined;
    resolve(step);
  }

  private take(): { done: boolean; value?: unknown } | undefined {
    if (this.queue.length > 0) {
      let n = 0;
      let bytes = 0;
      while (n < this.queue.length && (n === 0 || bytes < PULL_BYTES)) bytes += sizeOf(this.queue[n++]!);
      const value = joined(this.queue.splice(0, n));
      this.queuedBytes -= bytes;
      if (this.needDrain && this.queuedBytes < HIGH_WATER_MARK) {
        this.needDrain = false;
        queueMicrotask(() => this.res.emit('drain'));
      }
      return { done: false, value };
    }
    if (this.ended) {
      finish(this.res);
      return { done: true };
    }
    return undefined;
  }
}

/** Node's http.ServerResponse, for the calls of a function that listens. */
export class ServerResponse extends Stream {
  statusCode = 200;
  statusMessage: string | undefined = undefined;
  headersSent = false;
  sendDate = true;
  chunkedEncoding = false;
  shouldKeepAlive = true;
  useChunkedEncodingByDefault = true;
  strictContentLength = false;
  writable = true;
  destroyed = false;
  writableEnded = false;
  writableFinished = false;
  writableCorked = 0;
  readonly writableHighWaterMark = HIGH_WATER_MARK;
  readonly writableObjectMode = false;
  readonly req: Incoming;
  socket: CallSocket | null;
  connection: CallSocket | null;
  [HEADERS]: Record<string, [name: string, value: HeaderValue]> = Object.create(null) as Record<string, [string, HeaderValue]>;
  [ANSWER]: Answer | undefined;
  [STATUS]: number | undefined;

  constructor(req: Incoming) {
    super();
    this.req = req;
    this.socket = this.connection = req?.socket ?? null;
  }

  get finished(): boolean {
    return this.writableEnded;
  }
  get writableLength(): number {
    return this[ANSWER]?.queuedBytes ?? 0;
  }
  get writableNeedDrain(): boolean {
    return this[ANSWER]?.needDrain ?? false;
  }

  setHeader(name: string, value: HeaderValue): this {
    if (this.headersSent) throw headersSentError('set');
    checkHeader(name, value);
    this[HEADERS][name.toLowerCase()] = [name, value];
    return this;
  }
  appendHeader(name: string, value: HeaderValue): this {
    if (this.headersSent) throw headersSentError('append');
    checkHeader(name, value);
    const key = name.toLowerCase();
    const prior = this[HEADERS][key];
    const list = (v: HeaderValue) => (Array.isArray(v) ? v.map(String) : [String(v)]);
    this[HEADERS][key] = prior === undefined ? [name, value] : [prior[0], [...list(prior[1]), ...list(value)]];
    return this;
  }
  getHeader(name: string): HeaderValue | undefined {
    return this[HEADERS][String(name).toLowerCase()]?.[1];
  }
  getHeaders(): Record<string, HeaderValue> {
    const out = Object.create(null) as Record<string, HeaderValue>;
    for (const key in this[HEADERS]) out[key] = this[HEADERS][key]![1];
    return out;
  }
  getHeaderNames(): string[] {
    return Object.keys(this[HEADERS]);
  }
  getRawHeaderNames(): string[] {
    return Object.values(this[HEADERS]).map(([name]) => name);
  }
  hasHeader(name: string): boolean {
    return String(name).toLowerCase() in this[HEADERS];
  }
  removeHeader(name: string): void {
    if (this.headersSent) throw headersSentError('remove');
    delete this[HEADERS][String(name).toLowerCase()];
  }

  writeHead(statusCode: number, reason?: string | Record<string, HeaderValue> | unknown[], headers?: Record<string, HeaderValue> | unknown[]): this {
    if (this.headersSent) throw headersSentError('write');
    const code = Number(statusCode);
    if (!Number.isInteger(code) || code < 100 || code > 599) throw nodeError(new RangeError(`Invalid status code: ${String(statusCode)}`), 'ERR_HTTP_INVALID_STATUS_CODE');
    let more = headers;
    if (typeof reason === 'string') this.statusMessage = reason;
    else if (reason !== undefined) more = reason;
    this.statusCode = this[STATUS] = code;
    if (Array.isArray(more)) {
      // [name, value, name, value…] or [[name, value]…], as Node takes them.
      if (more.length > 0 && Array.isArray(more[0])) for (const [name, value] of more as [string, HeaderValue][]) this.appendHeader(name, value);
      else for (let i = 0; i + 1 < more.length; i += 2) this.appendHeader(more[i] as string, more[i + 1] as HeaderValue);
    } else if (more) {
      for (const name of Object.keys(more)) if (more[name] !== undefined) this.setHeader(name, more[name]!);
    }
    this.headersSent = true;
    return this;
  }

  /** What write() and end() call first, by Node's name: on-headers (morgan, compression) wraps writeHead. */
  _implicitHeader(): void {
    this.writeHead(this.statusCode);
  }

  /** Sends the head now: the answer streams (unless it ends within this turn). */
  flushHeaders(): void {
    if (!this.headersSent) this._implicitHeader();
    this[ANSWER]?.commitSoon();
  }

  write(chunk: unknown, encoding?: string | ((err?: Error | null) => void), callback?: (err?: Error | null) => void): boolean {
    const cb = typeof encoding === 'function' ? encoding : callback;
    const enc = typeof encoding === 'string' ? encoding : undefined;
    if (this.writableEnded) {
      afterEnd(this, cb);
      return false;
    }
    const answer = this[ANSWER];
    if (!answer || answer.cancelled || this.destroyed) {
      if (cb) queueMicrotask(() => cb(nodeError(new Error('Cannot call write after a stream was destroyed'), 'ERR_STREAM_DESTROYED')));
      return false;
    }
    const data = chunkOf(chunk, enc);
    if (!this.headersSent) this._implicitHeader();
    answer.push(data);
    answer.commitSoon();
    if (cb) queueMicrotask(() => cb(null));
    return !answer.needDrain;
  }

  end(chunk?: unknown, encoding?: string | (() => void), callback?: () => void): this {
    const cb = typeof chunk === 'function' ? (chunk as () => void) : typeof encoding === 'function' ? encoding : callback;
    const data = typeof chunk === 'function' || chunk === null ? undefined : chunk;
    const enc = typeof encoding === 'string' ? encoding : undefined;
    if (this.writableEnded) {
      if (cb) queueMicrotask(cb);
      return this;
    }
    const bytes = data === undefined ? undefined : chunkOf(data, enc);
    if (!this.headersSent) this._implicitHeader();
    const answer = this[ANSWER];
    if (bytes !== undefined && answer && !answer.cancelled) answer.push(bytes);
    this.writableEnded = true;
    this.writable = false;
    if (cb) this.once('finish', cb);
    answer?.end();
    return this;
  }

  destroy(err?: Error): this {
    if (this.destroyed) return this;
    if (!this.writableFinished) this[ANSWER]?.fail(err ?? nodeError(new Error('the server destroyed the response before it ended'), 'ERR_STREAM_DESTROYED'));
    close(this, !this.writableFinished);
    return this;
  }

  setTimeout(_ms: number, callback?: () => void): this {
    if (callback) this.on('timeout', callback);
    return this;
  }
  cork(): void {
    this.writableCorked++;
  }
  uncork(): void {
    if (this.writableCorked > 0) this.writableCorked--;
  }
  addTrailers(): void {}
  writeContinue(): void {}
  writeProcessing(): void {}
  writeEarlyHints(): void {}
  assignSocket(): void {}
  detachSocket(): void {}
}

/** A write after end: an error to its callback and to 'error' listeners, as Node (which would crash without one: here it is dropped). */
function afterEnd(res: ServerResponse, cb?: (err?: Error | null) => void): void {
  const err = nodeError(new Error('write after end'), 'ERR_STREAM_WRITE_AFTER_END');
  queueMicrotask(() => {
    cb?.(err);
    if (res.listenerCount('error') > 0) res.emit('error', err);
  });
}

/** The whole answer went to the host (or the stream's last chunk): 'finish', then 'close'. */
function finish(res: ServerResponse): void {
  if (res.writableFinished) return;
  res.writableFinished = true;
  queueMicrotask(() => {
    res.emit('finish');
    close(res, false);
  });
}

/** The exchange is over (answered, or the client went away): the response, the request and the connection close. */
function close(res: ServerResponse, aborted: boolean): void {
  if (res.destroyed) return;
  res.destroyed = true;
  res.writable = false;
  const req = res.req;
  if (aborted) {
    req.aborted = true;
    req.emit('aborted');
  }
  req.destroyed = true;
  req.emit('close');
  res.socket?.close(aborted);
  res.emit('close');
}

/** The response of one call; `settle` takes its answer: whole if it ends in the turn it started writing, a stream if it stays open past it. */
export function makeResponse(req: Incoming, settle: (result: CallResult) => void): ServerResponse {
  const res = new ServerResponse(req);
  res[ANSWER] = new Answer(res, settle);
  return res;
}
