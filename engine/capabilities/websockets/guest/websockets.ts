// WebSockets for fetch-style node8 functions, the Workers API: `new WebSocketPair()` gives a client
// end and a server end; the function accepts the server end, listens to its `message` and `close`
// events, sends text and bytes, and answers `new Response(null, { status: 101, webSocket: client })`.
// The host (../host.ts) holds the connection; messages cross as copies (see ../ops.ts).
import { INTERNAL, type Internal } from '../../../node8/sandbox/internal';
import { ABNORMAL_CLOSURE, closeRefusal, SocketEvent, SocketOp } from '../ops';

declare const require: (id: string) => unknown;
declare const TextEncoder: new () => { encode(s: string): Uint8Array };
const internal = require(INTERNAL) as Internal;

interface EventLike {
  readonly type: string;
}
const { Event, EventTarget, DOMException } = internal.library<{
  Event: new (type: string, init?: object) => EventLike;
  EventTarget: new () => { dispatchEvent(event: EventLike): boolean };
  DOMException: new (message: string, name: string) => Error;
}>('web/events');
const { MessageEvent } = internal.library<{ MessageEvent: new (type: string, init: { data: unknown }) => EventLike }>('web/misc');

const CONNECTING = 0;
const OPEN = 1;
const CLOSING = 2;
const CLOSED = 3;

export class CloseEvent extends Event {
  readonly code: number;
  readonly reason: string;
  readonly wasClean: boolean;
  constructor(type: string, init: { code?: number; reason?: string; wasClean?: boolean } = {}) {
    super(type, init);
    this.code = init.code ?? 0;
    this.reason = init.reason ?? '';
    this.wasClean = init.wasClean ?? false;
  }
}

class ErrorEvent extends Event {
  readonly message: string;
  readonly error: unknown;
  constructor(type: string, init: { message?: string; error?: unknown } = {}) {
    super(type, init);
    this.message = init.message ?? '';
    this.error = init.error;
  }
}

interface Pair {
  key: number;
  /** The client end went out in an answer. */
  given: boolean;
}
interface End {
  pair: Pair;
  side: 'client' | 'server';
  accepted: boolean;
  /** The request whose code made the pair: its events log as that request. */
  requestId: string;
}

/** Only this module makes WebSockets (a function's `new WebSocket(url)` would be an outbound one). */
const MAKE = Symbol('make');
const ends = new WeakMap<object, End>();
/** Accepted server ends, by the pair's key: the host's events reach them. */
const accepted = new Map<number, WebSocket>();
let lastKey = 0;

function endOf(socket: unknown): End {
  const end = ends.get(socket as object);
  if (!end) throw new TypeError('Illegal invocation: not a WebSocket');
  return end;
}

type Listener = ((event: EventLike) => void) | null;

export class WebSocket extends EventTarget {
  readyState = CONNECTING;
  readonly url: string | null = null;
  protocol = '';
  readonly extensions = '';
  readonly bufferedAmount = 0;
  onopen: Listener = null;
  onmessage: Listener = null;
  onclose: Listener = null;
  onerror: Listener = null;

  constructor(url?: unknown, end?: End) {
    super();
    if (url !== MAKE || end === undefined) {
      throw new TypeError('outbound WebSockets are not offered by islet: a function accepts WebSockets with new WebSocketPair()');
    }
    ends.set(this, end);
  }

  get binaryType(): string {
    return 'arraybuffer';
  }

  set binaryType(type: string) {
    if (type !== 'arraybuffer') throw new TypeError("islet's WebSockets give binary messages as ArrayBuffers (binaryType 'arraybuffer')");
  }

  /** Takes the server end of the pair: its messages come as `message` events, and it may send. */
  accept(): void {
    const end = endOf(this);
    if (end.side === 'client') throw new TypeError('the client end of a WebSocketPair goes in the Response (webSocket); accept() its server end');
    if (end.accepted) throw new DOMException('this WebSocket is accepted already', 'InvalidStateError');
    if (this.readyState !== CONNECTING) throw new DOMException('this WebSocket is closed', 'InvalidStateError');
    end.accepted = true;
    this.readyState = OPEN;
    accepted.set(end.pair.key, this);
    internal.socket(end.pair.key, SocketOp.accept, end.requestId);
  }

  send(data: unknown): void {
    const end = endOf(this);
    if (!end.accepted)
      throw new DOMException(end.side === 'client' ? 'the client end of a WebSocketPair is for the client: send on the server end' : 'call accept() before send()', 'InvalidStateError');
    if (this.readyState !== OPEN) throw new DOMException("Can't call WebSocket send() after close()", 'InvalidStateError');
    internal.socket(end.pair.key, SocketOp.send, messageData(data));
  }

  close(code?: number, reason?: string): void {
    const end = endOf(this);
    const text = reason === undefined ? '' : String(reason);
    const refusal = closeRefusal(code ?? 1000, new TextEncoder().encode(text).byteLength);
    if (refusal) throw new DOMException(refusal, code !== undefined && code !== 1000 && (code < 3000 || code > 4999) ? 'InvalidAccessError' : 'SyntaxError');
    if (this.readyState === CLOSING || this.readyState === CLOSED) return;
    if (!end.accepted) {
      this.readyState = CLOSED;
      return;
    }
    this.readyState = CLOSING;
    internal.socket(end.pair.key, SocketOp.close, code ?? 1000, text);
  }

  get [Symbol.toStringTag](): string {
    return 'WebSocket';
  }
}
for (const [name, value] of Object.entries({ CONNECTING, OPEN, CLOSING, CLOSED })) {
  Object.defineProperty(WebSocket, name, { value, enumerable: true });
  Object.defineProperty(WebSocket.prototype, name, { value, enumerable: true });
}

/** `new WebSocketPair()`: `[0]` the client end (for the Response), `[1]` the server end (for the function). */
export class WebSocketPair {
  0: WebSocket;
  1: WebSocket;
  constructor() {
    const pair: Pair = { key: ++lastKey, given: false };
    const requestId = internal.current.requestId;
    this[0] = new WebSocket(MAKE, { pair, side: 'client', accepted: false, requestId });
    this[1] = new WebSocket(MAKE, { pair, side: 'server', accepted: false, requestId });
  }
}

/** What `send` hands the host: text as it is, bytes as a copy of exactly their length. */
function messageData(data: unknown): string | ArrayBuffer {
  if (typeof data === 'string') return data;
  if (data instanceof ArrayBuffer) return data.slice(0);
  if (ArrayBuffer.isView(data)) return new Uint8Array(data.buffer, data.byteOffset, data.byteLength).slice().buffer;
  throw new TypeError(`WebSocket send() takes a string, an ArrayBuffer or an ArrayBufferView, got ${data === null ? 'null' : typeof data}`);
}

/**
 * The key of the pair whose client end a Response gives (serveFetch): its server end must be
 * accepted, and a pair goes to one client.
 */
export function giveClient(socket: unknown): number {
  const end = ends.get(socket as object);
  if (!end || end.side !== 'client') throw new TypeError('Response webSocket must be the client end of a WebSocketPair ([0])');
  if (end.pair.given) throw new TypeError('this WebSocket was given to a client already');
  const server = accepted.get(end.pair.key);
  if (!server) throw new TypeError('accept() the server end of the WebSocketPair before answering with its client end');
  end.pair.given = true;
  return end.pair.key;
}

function dispatch(socket: WebSocket, handler: Listener, event: EventLike): void {
  if (typeof handler === 'function') {
    try {
      handler.call(socket, event);
    } catch (err) {
      internal.reportError(err);
    }
  }
  socket.dispatchEvent(event);
}

/** The host's events for the accepted server ends: a message, or the connection's close. */
internal.onSocketEvent((key, event, data, reason) => {
  const socket = accepted.get(key);
  if (!socket) return;
  const end = ends.get(socket)!;
  internal.current.requestId = end.requestId;
  if (event === SocketEvent.message) {
    if (socket.readyState === OPEN || socket.readyState === CLOSING) dispatch(socket, socket.onmessage, new MessageEvent('message', { data }));
    return;
  }
  if (event !== SocketEvent.close) return;
  accepted.delete(key);
  socket.readyState = CLOSED;
  const code = typeof data === 'number' ? data : ABNORMAL_CLOSURE;
  const text = typeof reason === 'string' ? reason : '';
  if (code === ABNORMAL_CLOSURE) dispatch(socket, socket.onerror, new ErrorEvent('error', { message: text || 'the WebSocket connection closed abnormally' }));
  dispatch(socket, socket.onclose, new CloseEvent('close', { code, reason: text, wasClean: code !== ABNORMAL_CLOSURE }));
});
