// The fetch family for node8 functions: Headers, Request, Response (bodies of text, bytes, Blob,
// FormData, URLSearchParams or ReadableStream), Blob, File, FormData, and `fetch` itself, which
// sends the request through the host's guarded egress (../egress.ts) and answers a Response
// whose body is a stream.
import type { CallResult, MetaHead, ResultHeaders } from '../../../sandbox/protocol';
import type { HostError } from '../../errors';
import type { FetchAnswer, FetchRequest } from '../ops';
import { RelayFrom } from '../../streams/ops';
import { INTERNAL, type Internal } from '../../../node8/sandbox/internal';
import { Blob, blobBytes, concatBytes, decodeMultipart, encodeMultipart, File, FormData } from './blob';
import { guardHeaders, headerPairs, Headers } from './headers';
import { utf8Decoder, utf8Encoder } from '../../../sandbox/guest/utf8';

declare const require: (id: string) => unknown;
const internal = require(INTERNAL) as Internal;
const g = globalThis as unknown as Record<string, unknown>;

interface Stream {
  getReader(): { read(): Promise<{ done: boolean; value?: unknown }>; releaseLock(): void; cancel(reason?: unknown): Promise<void> };
  tee(): [Stream, Stream];
  locked: boolean;
}
const ReadableStream = () => g.ReadableStream as new (source: object, strategy?: object) => Stream;

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

type HeadersInit = Headers | Iterable<[string, string]> | Record<string, string>;

// Bodies -----------------------------------------------------------------------------------------

/**
 * A call's request body still arriving on the host (engine/capabilities/request-body), by its id:
 * read as it comes through `body`, or whole (json(), text()…) in one copy once it is in.
 */
class HostBody {
  constructor(readonly id: number) {}
}

/** A string body is kept as text: read as text or JSON (a request's, usually) it is never encoded. */
type BodySource = Uint8Array | string | Stream | HostBody | null;

interface BodyState {
  source: BodySource;
  stream: Stream | null;
  used: boolean;
}

const bodies = new WeakMap<object, BodyState>();
/** Streams over a body the host holds (hostStream): an answer that passes one on untouched is relayed by the host. */
const hostBodies = new WeakMap<Stream, [number, number]>();

function isStream(value: unknown): value is Stream {
  return typeof value === 'object' && value !== null && typeof (value as Stream).getReader === 'function';
}

/** Read from or cancelled once: the Streams Standard's [[disturbed]], which web-streams-polyfill keeps as `_disturbed`. */
function streamDisturbed(stream: Stream): boolean {
  return (stream as { _disturbed?: unknown })._disturbed === true;
}

/** The stream a body has now: the one it was made from, or the one its `body` getter made. */
function streamNow(state: BodyState): Stream | null {
  return state.stream ?? (isStream(state.source) ? state.source : null);
}

/** A body read (or whose stream was read from) cannot be read again, nor cloned (Fetch: "unusable" with locked). */
function disturbed(state: BodyState): boolean {
  const stream = streamNow(state);
  return state.used || (stream !== null && streamDisturbed(stream));
}

/** A body init as its bytes (or stream) and the content type it implies. */
function extractBody(init: unknown): { source: BodySource; type: string | null } {
  if (init === null || init === undefined) return { source: null, type: null };
  if (typeof init === 'string') return { source: init, type: 'text/plain;charset=UTF-8' };
  if (init instanceof ArrayBuffer) return { source: new Uint8Array(init.slice(0)), type: null };
  if (ArrayBuffer.isView(init)) return { source: new Uint8Array(init.buffer, init.byteOffset, init.byteLength).slice(), type: null };
  if (init instanceof Blob) return { source: blobBytes(init), type: init.type || null };
  if (init instanceof FormData) {
    const { bytes, type } = encodeMultipart(init);
    return { source: bytes, type };
  }
  const URLSearchParams = g.URLSearchParams as new () => object;
  if (init instanceof URLSearchParams) return { source: utf8Encoder.encode(String(init)), type: 'application/x-www-form-urlencoded;charset=UTF-8' };
  if (isStream(init)) return { source: init, type: null };
  if (init instanceof HostBody) return { source: init, type: null };
  return { source: utf8Encoder.encode(String(init)), type: 'text/plain;charset=UTF-8' };
}

async function readAll(stream: Stream): Promise<Uint8Array> {
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    // The Fetch Standard reads Uint8Array chunks only: anything else fails the read and cancels the stream.
    if (!(value instanceof Uint8Array)) {
      const error = new TypeError(`a body stream's chunks must be Uint8Array, got ${value === null ? 'null' : typeof value === 'object' ? Object.prototype.toString.call(value) : typeof value}`);
      void reader.cancel(error).catch(() => undefined);
      throw error;
    }
    chunks.push(value);
  }
  // The reader is kept: a body read whole stays locked (its stream cannot be read again).
  return concatBytes(chunks);
}

function streamOf(bytes: Uint8Array): Stream {
  const Stream = ReadableStream();
  return new Stream({
    type: 'bytes',
    start(controller: { enqueue(b: Uint8Array): void; close(): void }) {
      if (bytes.byteLength > 0) controller.enqueue(bytes.slice());
      controller.close();
    },
  });
}

/** The Body mixin of the Fetch standard, shared by Request and Response. */
abstract class Body {
  abstract readonly headers: Headers;

  get body(): Stream | null {
    const state = bodies.get(this)!;
    if (state.source === null) return null;
    if (state.stream === null && state.used && !isStream(state.source)) {
      // Read whole before its stream was asked for: a stream locked by that read, as the standard's.
      state.stream = streamOf(new Uint8Array(0));
      state.stream.getReader();
    }
    state.stream ??= isStream(state.source)
      ? state.source
      : state.source instanceof HostBody
        ? hostStream(state.source.id, 'bodyRead', 'bodyCancel')
        : streamOf(typeof state.source === 'string' ? utf8Encoder.encode(state.source) : state.source);
    return state.stream;
  }

  /** True once read, or once its stream was read from (a stream only locked by a reader is not used). */
  get bodyUsed(): boolean {
    const state = bodies.get(this)!;
    return state.source !== null && disturbed(state);
  }

  private async consume(): Promise<Uint8Array> {
    const source = await this.take();
    return typeof source === 'string' ? utf8Encoder.encode(source) : source;
  }

  /** Marks the body read and gives its bytes, or its text when it was made from a string. */
  private async take(): Promise<Uint8Array | string> {
    const state = bodies.get(this)!;
    // A null body reads as empty, and stays unused.
    if (state.source === null) return new Uint8Array(0);
    if (disturbed(state)) throw new TypeError('Body is unusable: Body has already been read');
    const stream = streamNow(state);
    if (stream?.locked) throw new TypeError('Body is unusable: Body has been locked');
    state.used = true;
    if (stream) return readAll(stream);
    if (state.source instanceof HostBody) return readWholeHostBody(state.source.id);
    return state.source as Uint8Array | string;
  }

  async arrayBuffer(): Promise<ArrayBuffer> {
    return (await this.consume()).slice().buffer;
  }

  async bytes(): Promise<Uint8Array> {
    return (await this.consume()).slice();
  }

  async text(): Promise<string> {
    const source = await this.take();
    return typeof source === 'string' ? source : utf8Decoder.decode(source);
  }

  async json(): Promise<unknown> {
    return JSON.parse(await this.text());
  }

  async blob(): Promise<Blob> {
    return new Blob([await this.consume()], { type: this.headers.get('content-type') ?? '' });
  }

  async formData(): Promise<FormData> {
    const type = this.headers.get('content-type') ?? '';
    const bytes = await this.consume();
    if (/^multipart\/form-data/i.test(type)) return decodeMultipart(bytes, type);
    if (/^application\/x-www-form-urlencoded/i.test(type)) {
      const form = new FormData();
      const URLSearchParams = g.URLSearchParams as new (s: string) => Iterable<[string, string]>;
      // UTF-8 without BOM: a leading U+FEFF is part of the first name, as the URL Standard's parser keeps it.
      const TextDecoder = g.TextDecoder as new (label: string, options: object) => { decode(bytes: Uint8Array): string };
      for (const [name, value] of new URLSearchParams(new TextDecoder('utf-8', { ignoreBOM: true }).decode(bytes))) form.append(name, value);
      return form;
    }
    throw new TypeError(`Could not parse content as FormData (content-type ${JSON.stringify(type)})`);
  }
}

function initBody(owner: object, headers: Headers, init: unknown): void {
  if (isStream(init) && (init.locked || streamDisturbed(init))) throw new TypeError(`a body stream that is ${init.locked ? 'locked by a reader' : 'already read from'} cannot be used again`);
  const { source, type } = extractBody(init);
  bodies.set(owner, { source, stream: null, used: false });
  if (type !== null && !headers.has('content-type')) headers.set('content-type', type);
}

/** A copy of a body for `clone()`: a stream is teed, bytes are shared (they are never written). */
function cloneBody(from: object, to: object): void {
  const state = bodies.get(from)!;
  if (state.source !== null && (disturbed(state) || streamNow(state)?.locked)) throw new TypeError('Body has already been used (or its stream is locked): it cannot be cloned');
  const source = state.source;
  if (source === null || (!isStream(source) && !(source instanceof HostBody) && state.stream === null)) {
    bodies.set(to, { source, stream: null, used: false });
    return;
  }
  // A body still arriving is read once, through a stream both copies share.
  const [a, b] = (state.stream ?? (source instanceof HostBody ? hostStream(source.id, 'bodyRead', 'bodyCancel') : (source as Stream))).tee();
  state.source = a;
  state.stream = a;
  bodies.set(to, { source: copiedChunks(b), stream: null, used: false });
}

/**
 * The clone's branch of a teed body gives copies of the chunks (the Fetch Standard tees with
 * cloneForBranch2): a chunk one reader writes into is not the other's.
 */
function copiedChunks(stream: Stream): Stream {
  const TransformStream = g.TransformStream as new (transformer: object) => { readable: Stream; writable: object };
  const structuredClone = g.structuredClone as (value: unknown) => unknown;
  const copy = new TransformStream({
    transform(chunk: unknown, controller: { enqueue(chunk: unknown): void }) {
      controller.enqueue(structuredClone(chunk));
    },
  });
  return (stream as unknown as { pipeThrough(pair: object): Stream }).pipeThrough(copy);
}

/** A request's headers; a no-cors request's keep only the no-CORS-safelisted ones (its method must be GET, HEAD or POST). */
function requestHeaders(init: HeadersInit | undefined, mode: string, method: string): Headers {
  if (mode !== 'no-cors') return new Headers(init);
  if (method !== 'GET' && method !== 'HEAD' && method !== 'POST') throw new TypeError(`'${method}' is unsupported in no-cors mode (GET, HEAD and POST are)`);
  const headers = guardHeaders(new Headers(), 'request-no-cors');
  for (const [name, value] of new Headers(init)) headers.append(name, value);
  return headers;
}

// Request ----------------------------------------------------------------------------------------

const METHODS = new Set(['DELETE', 'GET', 'HEAD', 'OPTIONS', 'POST', 'PUT', 'PATCH']);

export class Request extends Body {
  readonly url: string;
  readonly method: string;
  readonly headers: Headers;
  readonly signal: unknown;
  readonly redirect: string;
  readonly credentials: string;
  readonly mode: string;
  readonly cache: string;
  readonly integrity: string;
  readonly keepalive: boolean;
  readonly referrer: string;
  readonly referrerPolicy: string;
  readonly destination = '';
  readonly duplex = 'half';

  constructor(input: unknown, init: Record<string, unknown> = {}) {
    super();
    const from = input instanceof Request ? input : undefined;
    const URL = g.URL as new (s: string) => { href: string; username: string; password: string };
    let url: string;
    try {
      url = new URL(from ? from.url : String(input)).href;
    } catch {
      throw new TypeError(`Failed to parse URL from ${String(input)}`);
    }
    this.url = url;
    const method = String(init.method ?? from?.method ?? 'GET');
    if (!TOKEN.test(method)) throw new TypeError(`'${method}' is not a valid HTTP method.`);
    this.method = METHODS.has(method.toUpperCase()) ? method.toUpperCase() : method;
    this.mode = String(init.mode ?? from?.mode ?? 'cors');
    this.headers = requestHeaders((init.headers ?? from?.headers) as HeadersInit | undefined, this.mode, this.method);
    this.signal = init.signal ?? from?.signal ?? new (g.AbortController as new () => { signal: unknown })().signal;
    this.redirect = String(init.redirect ?? from?.redirect ?? 'follow');
    this.credentials = String(init.credentials ?? from?.credentials ?? 'same-origin');
    this.cache = String(init.cache ?? from?.cache ?? 'default');
    this.integrity = String(init.integrity ?? from?.integrity ?? '');
    this.keepalive = Boolean(init.keepalive ?? from?.keepalive ?? false);
    this.referrer = String(init.referrer ?? from?.referrer ?? 'about:client');
    this.referrerPolicy = String(init.referrerPolicy ?? from?.referrerPolicy ?? '');
    const body = 'body' in init ? init.body : undefined;
    if (body !== undefined && body !== null && (this.method === 'GET' || this.method === 'HEAD')) throw new TypeError('Request with GET/HEAD method cannot have body.');
    if ('body' in init || !from) initBody(this, this.headers, body);
    else cloneBody(from, this);
  }

  clone(): Request {
    const copy = new Request(this, { body: null });
    cloneBody(this, copy);
    return copy;
  }

  get [Symbol.toStringTag](): string {
    return 'Request';
  }
}

// Response ---------------------------------------------------------------------------------------

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

export class Response extends Body {
  readonly status: number;
  readonly statusText: string;
  readonly headers: Headers;
  readonly type: string;
  readonly url: string;
  readonly redirected: boolean;
  /** The client end of a WebSocketPair this answer gives (status 101), or null. */
  readonly webSocket: unknown;

  constructor(body?: unknown, init: { status?: number; statusText?: string; headers?: HeadersInit; url?: string; redirected?: boolean; type?: string; webSocket?: unknown } = {}) {
    super();
    const status = init.status ?? 200;
    const webSocket = init.webSocket ?? null;
    if (!Number.isInteger(status) || status < 200 || status > 599) {
      if (!((status === 101 && (webSocket !== null || init.type === 'basic')) || (status >= 100 && status < 200 && init.type === 'basic'))) {
        throw new RangeError(
          status === 101
            ? 'a Response of status 101 gives a WebSocket: new Response(null, { status: 101, webSocket: client })'
            : `init["status"] must be in the range of 200 to 599, inclusive. Received ${status}`,
        );
      }
    }
    if (webSocket !== null && status !== 101) throw new RangeError(`a Response with a webSocket has status 101, got ${status}`);
    this.webSocket = webSocket;
    if ((status === 101 || status === 204 || status === 205 || status === 304) && body !== null && body !== undefined) {
      throw new TypeError(`Response with null body status (${status}) cannot have a body`);
    }
    this.status = status;
    this.statusText = String(init.statusText ?? '');
    // HTTP's reason-phrase: tabs, spaces, visible ASCII and bytes 0x80-0xFF (no line ends).
    if (!/^[\t\x20-\x7e\x80-\xff]*$/.test(this.statusText)) throw new TypeError(`Invalid statusText: ${JSON.stringify(this.statusText)}`);
    this.headers = new Headers(init.headers);
    this.type = init.type ?? 'default';
    this.url = init.url ?? '';
    this.redirected = init.redirected ?? false;
    initBody(this, this.headers, body);
  }

  get ok(): boolean {
    return this.status >= 200 && this.status < 300;
  }

  clone(): Response {
    const copy = new Response(null, { status: this.status, statusText: this.statusText, headers: this.headers, url: this.url, redirected: this.redirected, type: this.type });
    cloneBody(this, copy);
    return copy;
  }

  static json(data: unknown, init: { status?: number; statusText?: string; headers?: HeadersInit } = {}): Response {
    const text = JSON.stringify(data);
    if (text === undefined) throw new TypeError('The data is not JSON serializable');
    const headers = new Headers(init.headers);
    if (!headers.has('content-type')) headers.set('content-type', 'application/json');
    return new Response(text, { ...init, headers });
  }

  static redirect(url: string, status = 302): Response {
    if (!REDIRECTS.has(status)) throw new RangeError(`Invalid status code ${status}`);
    const URL = g.URL as new (s: string) => { href: string };
    return new Response(null, { status, headers: { location: new URL(String(url)).href } });
  }

  static error(): Response {
    const response = new Response(null, { status: 200, type: 'error' });
    Object.defineProperty(response, 'status', { value: 0 });
    guardHeaders(response.headers, 'immutable');
    return response;
  }

  get [Symbol.toStringTag](): string {
    return 'Response';
  }
}

// fetch ------------------------------------------------------------------------------------------

interface Signal {
  aborted: boolean;
  reason: unknown;
  addEventListener(type: string, fn: () => void, options?: object): void;
  removeEventListener(type: string, fn: () => void): void;
}

/** Fetches through the host's egress: private addresses refused, response size and time bounded. */
export async function fetch(input: unknown, init?: Record<string, unknown>): Promise<Response> {
  const request = new Request(input, init);
  const signal = request.signal as Signal;
  if (signal.aborted) throw signal.reason;
  const url = new (g.URL as new (s: string) => { protocol: string })(request.url);
  if (url.protocol === 'data:') return dataResponse(request.url);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new TypeError(`fetch failed: unsupported protocol ${url.protocol}`);
  const body = request.method === 'GET' || request.method === 'HEAD' ? undefined : await request.arrayBuffer();
  const headers = headerPairs(request.headers);
  const exchange: Partial<FetchRequest> = { url: request.url, method: request.method, headers, redirect: request.redirect };
  // A failure is fetch's TypeError, with the host's message (its code is the egress's, for Python's sockets).
  const sent = internal.op('fetch', JSON.stringify(exchange), body && body.byteLength > 0 ? body : undefined).catch((err: HostError) => {
    throw new TypeError(err.message);
  });
  const answer = await new Promise<{ payload: string; body: ArrayBuffer | undefined }>((resolve, reject) => {
    const abort = () => reject(signal.reason);
    signal.addEventListener('abort', abort, { once: true });
    sent.then(resolve, reject).finally(() => signal.removeEventListener('abort', abort));
  });
  const meta = JSON.parse(answer.payload) as FetchAnswer;
  const nullBody = request.method === 'HEAD' || [101, 204, 205, 304].includes(meta.status);
  const responseBody = nullBody ? null : meta.stream !== undefined ? hostStream(meta.stream, 'fetchRead', 'fetchCancel') : streamOf(new Uint8Array(answer.body ?? new ArrayBuffer(0)));
  const response = new Response(responseBody, {
    status: meta.status < 200 ? 200 : meta.status,
    statusText: meta.statusText,
    headers: meta.headers,
    url: meta.url,
    redirected: meta.redirected,
    type: 'basic',
  });
  if (meta.status < 200) Object.defineProperty(response, 'status', { value: meta.status });
  return response;
}

/**
 * A body still arriving on the host, pulled a chunk at a time as it is read: a fetch's response
 * body (so a relayed `new Response(up.body, up)` moves at the pace of the slower end; cancelling it
 * closes the upstream connection), or the call's request body (the client's upload waits while the
 * function does not read).
 */
function hostStream(id: number, read: 'fetchRead' | 'bodyRead', cancel: 'fetchCancel' | 'bodyCancel'): Stream {
  const Stream = ReadableStream();
  const ask = JSON.stringify({ id });
  const stream = new Stream(
    {
      async pull(controller: { enqueue(b: Uint8Array): void; close(): void }) {
        const answer = await internal.op(read, ask, undefined).catch((err: HostError) => {
          throw new TypeError(err.message);
        });
        if (answer.payload === '{"done":true}') controller.close();
        else if (answer.body !== undefined && answer.body.byteLength > 0) controller.enqueue(new Uint8Array(answer.body));
      },
      cancel() {
        void internal.op(cancel, ask, undefined).catch(() => undefined);
      },
    },
    { highWaterMark: 0 },
  );
  hostBodies.set(stream, [read === 'bodyRead' ? RelayFrom.request : RelayFrom.fetch, id]);
  return stream;
}

/** A request body still arriving, whole once it is in: its text when it is UTF-8 (decoded on the host), otherwise its bytes. */
async function readWholeHostBody(id: number): Promise<Uint8Array | string> {
  const answer = await internal.op('bodyWhole', JSON.stringify({ id }), undefined).catch((err: HostError) => {
    throw new TypeError(err.message);
  });
  return answer.body === undefined ? answer.payload : new Uint8Array(answer.body);
}

/** A `data:` URL's response (the Fetch Standard's data: URL processor): its bytes and its type. */
function dataResponse(href: string): Response {
  const rest = href.slice('data:'.length).replace(/#.*$/s, '');
  const comma = rest.indexOf(',');
  if (comma === -1) throw new TypeError('fetch failed: a data: URL needs a comma');
  let type = rest.slice(0, comma).replace(/^[\t\n\f\r ]+|[\t\n\f\r ]+$/g, '');
  let bytes = percentDecode(rest.slice(comma + 1));
  const base64 = /;[\x20]*base64$/i.exec(type);
  if (base64) {
    type = type.slice(0, base64.index);
    const atob = g.atob as (s: string) => string;
    let text: string;
    try {
      let latin1 = '';
      for (let i = 0; i < bytes.length; i += 8192) latin1 += String.fromCharCode.apply(null, bytes.subarray(i, i + 8192) as unknown as number[]);
      text = atob(latin1);
    } catch {
      throw new TypeError('fetch failed: the data: URL is not valid base64');
    }
    bytes = Uint8Array.from(text, (c) => c.charCodeAt(0));
  }
  if (type.startsWith(';')) type = `text/plain${type}`;
  if (type === '' || !/^[^/;\s]+\/[^/;\s]+/.test(type)) type = 'text/plain;charset=US-ASCII';
  return new Response(bytes, { status: 200, headers: { 'content-type': type }, url: href, type: 'basic' });
}

/** The bytes of a URL's text with its %XX escapes decoded (a bad escape stays as it is). */
function percentDecode(text: string): Uint8Array {
  const bytes = utf8Encoder.encode(text);
  const out: number[] = [];
  const hex = (b: number) => (b >= 48 && b <= 57 ? b - 48 : b >= 65 && b <= 70 ? b - 55 : b >= 97 && b <= 102 ? b - 87 : -1);
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i]!;
    if (b === 37 && i + 2 < bytes.length && hex(bytes[i + 1]!) >= 0 && hex(bytes[i + 2]!) >= 0) {
      out.push(hex(bytes[i + 1]!) * 16 + hex(bytes[i + 2]!));
      i += 2;
    } else {
      out.push(b);
    }
  }
  return Uint8Array.from(out);
}

/** The last `waitUntil` window's token (see HostBridge.background). */
let lastToken = 0;

/**
 * Calls a fetch-style function (`fetch(request, env, ctx)` of its default export) for one call of
 * the runtime. The request's URL is the function's own: its path is what follows the function
 * name, so an app's routes are written as if it served the whole host. `ctx.waitUntil`'s promises
 * run on after the response; their failures are reported in the logs.
 */
export async function serveFetch(
  target: { fetch(request: unknown, env: unknown, ctx: unknown): unknown },
  head: MetaHead,
  headers: Record<string, string>,
  raw: string | ArrayBuffer | number | undefined,
  env: unknown,
): Promise<CallResult> {
  const [requestId, method, path, rawQuery] = head;
  const url = `http://${headers.host ?? 'localhost'}${path}${rawQuery ? `?${rawQuery}` : ''}`;
  const hasBody = method !== 'GET' && method !== 'HEAD' && raw !== undefined;
  // Aborted when the client goes away: before the answer (abortCall), or before a streamed one ends.
  const controller = new (g.AbortController as new () => { signal: unknown; abort(reason?: unknown): void })();
  const request = new Request(url, { method, headers, signal: controller.signal, ...(hasBody ? { body: typeof raw === 'number' ? new HostBody(raw) : raw } : {}) });
  const ctx = executionContext();
  awaitingAnswer.set(requestId, controller);
  try {
    return await answerOf(await target.fetch(request, env, ctx), controller);
  } finally {
    awaitingAnswer.delete(requestId);
  }
}

/** The calls whose handler has not answered yet, by request id: what a client's leaving aborts. */
const awaitingAnswer = new Map<string, { abort(reason?: unknown): void }>();

/** The host's word that a call's client went away (Fire.abort): its `request.signal` aborts. */
export function abortCall(requestId: string): void {
  const DOMException = g.DOMException as (new (message: string, name: string) => unknown) | undefined;
  const reason = 'the client closed the connection before the answer';
  awaitingAnswer.get(requestId)?.abort(DOMException ? new DOMException(reason, 'AbortError') : new Error(reason));
}

async function answerOf(response: unknown, controller: { abort(reason?: unknown): void }): Promise<CallResult> {
  if (!(response instanceof Response)) {
    return { t: 'e', c: 'ERR_BAD_RESPONSE', m: `the fetch handler must return a Response, got ${response === null ? 'null' : typeof response}` };
  }
  const out: ResultHeaders = {};
  for (const [name, value] of headerPairs(response.headers)) {
    // Set-Cookie's values come one by one and go as a line each; the rest come combined.
    const prior = out[name];
    if (prior === undefined) out[name] = value;
    else if (name === 'set-cookie') out[name] = typeof prior === 'string' ? [prior, value] : [...prior, value];
    else out[name] = `${prior as string}, ${value}`;
  }
  if (response.webSocket !== null) {
    // The connection is the host's to upgrade; the pair's server end stays here (engine/capabilities/websockets).
    const { giveClient } = internal.library<{ giveClient(socket: unknown): number }>('web/websockets');
    return { t: 'w', h: out, k: giveClient(response.webSocket) };
  }
  const stream = streamedBodyOf(response);
  if (stream) {
    // A body the function made as a stream is sent as it comes (see engine/capabilities/streams/host.ts).
    // A body the host holds, never read from here (highWaterMark 0: not even pulled), is passed on by the host.
    const relay = streamDisturbed(stream) ? undefined : hostBodies.get(stream);
    const reader = stream.getReader();
    const key = internal.openStream({
      next: () => reader.read() as Promise<{ done: boolean; value?: unknown }>,
      cancel: (reason) => {
        void (reader.cancel(reason) as Promise<void>).catch(() => undefined);
        controller.abort(reason);
      },
    });
    return relay ? { t: 's', s: response.status, h: out, k: key, r: relay } : { t: 's', s: response.status, h: out, k: key };
  }
  const state = bodies.get(response);
  // A body made from a string goes to the host as that string: no encoding in the isolate.
  if (state && !state.used && state.stream === null && typeof state.source === 'string') {
    state.used = true;
    return { t: 'b', s: response.status, h: out, b: state.source };
  }
  return { t: 'b', s: response.status, h: out, b: await response.arrayBuffer() };
}

/** A handler's `ctx`: `waitUntil`'s promises run on after the answer, their failures reported in the logs. */
function executionContext() {
  let waiting = 0;
  let token = 0;
  return {
    waitUntil(promise: unknown) {
      // The instance stays awake while this call's waitUntil work goes on (a timeout at most).
      if (waiting++ === 0) internal.background((token = ++lastToken), true);
      const window = token;
      Promise.resolve(promise)
        .catch(internal.reportError)
        .then(() => {
          if (--waiting === 0) internal.background(window, false);
        });
    },
    passThroughOnException() {},
  };
}

/**
 * Calls a fetch-style function's `scheduled(controller, env, ctx)` for one tick of its schedule, as
 * Workers' Cron Triggers do: `controller.cron` and `controller.scheduledTime`; it answers nothing.
 */
export async function serveScheduled(
  target: { scheduled?(controller: unknown, env: unknown, ctx: unknown): unknown },
  event: { cron: string; scheduledTime: number },
  env: unknown,
): Promise<CallResult> {
  // `in`, not only the read: itty-router's router inherits from a Proxy that answers every name it is asked.
  if (!('scheduled' in target) || typeof target.scheduled !== 'function') throw new TypeError('the function has a schedule but its default export has no scheduled(controller, env, ctx) method');
  const controller = { cron: event.cron, scheduledTime: event.scheduledTime, noRetry() {} };
  await target.scheduled(controller, env, executionContext());
  return { t: 'b', s: 200, h: {}, b: new ArrayBuffer(0) };
}

/** The body of an answer the function made as a stream (not text, bytes or a whole upstream answer), not yet read. */
function streamedBodyOf(response: Response): Stream | undefined {
  const state = bodies.get(response);
  if (!state || state.used || !isStream(state.source) || state.source.locked) return undefined;
  return state.source;
}

export { Blob, File, FormData, Headers };
