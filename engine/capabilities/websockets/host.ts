import { utf8Text } from '../../bytes';
import type { HostMemory } from '../../isolate/host-memory';
import { Fire } from '../../sandbox/protocol';
import type { WebSocketLimits } from './limits';
import { ABNORMAL_CLOSURE, closeRefusal, SocketEvent, SocketOp } from './ops';

/** The client's end of a connection, as the HTTP server drives it (http/websockets.ts). */
export interface SocketPeer {
  /** Sends a message; answers the bytes waiting to go out on the connection. */
  send(data: string | Uint8Array, binary: boolean): number;
  /** Closes the connection with a close frame; the server's `closed` follows. */
  end(code: number, reason: string): void;
}

/**
 * A WebSocket a function answered an upgrade with (`new Response(null, {status: 101, webSocket})`):
 * the HTTP server upgrades the connection and drives it with these.
 */
export interface FunctionSocket {
  readonly kind: 'websocket';
  /** The connection is upgraded: what the function sent meanwhile goes out, messages flow. */
  attach(peer: SocketPeer): void;
  /** The connection will not be upgraded (the client left, the request was no upgrade, the server drains). */
  abandon(reason: string): void;
  /** A message from the client (its bytes are valid during the call only: the socket copies what it keeps). */
  message(data: Uint8Array, binary: boolean): void;
  /** The connection closed: the code and reason of the close frame, 1006 when it dropped. */
  closed(code: number, reason: string): void;
  /** `listener` runs once when the socket is over, however it ends. */
  onEnd(listener: () => void): void;
}

/** What the sockets of an instance need of it. */
export interface SocketHost {
  readonly limits: WebSocketLimits;
  /** How long an accepted socket may wait to be given to a client (the function's timeout). */
  readonly timeoutMs: number;
  readonly hostMemory: HostMemory;
  /**
   * Enters the isolate with `args`, when it may (`bytes` of text handed in, `held` bytes of host
   * memory given back once it is in, then `entered`).
   */
  fire(args: unknown[], bytes: number, held: number, entered?: () => void): void;
  /** A message's data as an argument of an entry (text or bytes, copied in). */
  argument(data: string | Uint8Array): unknown;
  /** The instance holds one more socket; while it holds any it stays awake (its events enter without a call). */
  hold(): void;
  /** And one less. */
  release(): void;
  /** A line in the function's logs. */
  log(requestId: string, text: string): void;
}

type State = 'accepted' | 'given' | 'open' | 'ended';

/**
 * One WebSocket of a function: accepted by the sandbox, given to a client by the function's
 * answer, open once the HTTP server upgraded the connection. Messages from the client enter the
 * isolate as `fire(Fire.socket, key, SocketEvent.message, data)`, its close as
 * `fire(Fire.socket, key, SocketEvent.close, code, reason)`.
 */
class Session implements FunctionSocket {
  readonly kind = 'websocket';
  state: State = 'accepted';
  private peer: SocketPeer | undefined;
  /** What the function sent before the connection was open. */
  private outgoing: { data: string | Uint8Array; binary: boolean }[] = [];
  private outgoingBytes = 0;
  /** The function or a bound closed it (before the connection was open, it closes as soon as it is). */
  private closing: { code: number; reason: string } | undefined;
  /** How it ended, for a client that connects after (a deploy closed it while the upgrade was on its way). */
  private ending = { code: 1011, reason: 'the function instance was stopped' };
  /** Bytes from the client not yet taken into the isolate. */
  private waitingBytes = 0;
  private tokens: number;
  private refilledAt = performance.now();
  private lastActivity = performance.now();
  private timer: NodeJS.Timeout | undefined;
  private readonly endListeners: (() => void)[] = [];

  constructor(
    private readonly owner: InstanceSockets,
    readonly key: number,
    readonly requestId: string,
    private readonly host: SocketHost,
  ) {
    this.tokens = host.limits.messagesBurst;
    // Accepted, it must be given to a client within the function's timeout (a call that answered otherwise leaves it behind).
    this.timer = setTimeout(() => {
      if (this.state === 'accepted') this.finish(ABNORMAL_CLOSURE, 'the WebSocket was not given to a client (answer with new Response(null, { status: 101, webSocket: client }))');
    }, host.timeoutMs).unref();
  }

  /** The function's answer gave the client end of the pair: the HTTP server takes it from here. */
  give(): boolean {
    if (this.state !== 'accepted') return false;
    this.state = 'given';
    clearTimeout(this.timer);
    this.timer = undefined;
    return true;
  }

  attach(peer: SocketPeer): void {
    if (this.state === 'ended') {
      peer.end(this.ending.code, this.ending.reason);
      return;
    }
    this.state = 'open';
    this.peer = peer;
    const outgoing = this.outgoing;
    this.outgoing = [];
    this.outgoingBytes = 0;
    for (const m of outgoing) this.transmit(m.data, m.binary);
    if (this.closing) peer.end(this.closing.code, this.closing.reason);
    this.touch();
    this.armIdle(this.host.limits.idleMs);
  }

  abandon(reason: string): void {
    this.finish(ABNORMAL_CLOSURE, reason);
  }

  message(data: Uint8Array, binary: boolean): void {
    // Closing: what the client sent meanwhile is dropped.
    if (this.state !== 'open' || this.closing) return;
    this.touch();
    const { limits, hostMemory } = this.host;
    if (data.byteLength > limits.messageBytes) {
      this.refuse(1009, `the client sent a message of ${data.byteLength} bytes, over the limit of ${limits.messageBytes}`);
      return;
    }
    const now = performance.now();
    this.tokens = Math.min(limits.messagesBurst, this.tokens + ((now - this.refilledAt) * limits.messagesPerSec) / 1000);
    this.refilledAt = now;
    if (this.tokens < 1) {
      this.refuse(1008, `over the limit of ${limits.messagesPerSec} messages a second`);
      return;
    }
    this.tokens -= 1;
    const size = data.byteLength;
    if (this.waitingBytes + size > limits.bufferedBytes) {
      this.refuse(1008, `messages arrive faster than the function takes them (over ${limits.bufferedBytes} bytes waiting)`);
      return;
    }
    if (!hostMemory.reserve(size)) {
      this.refuse(1008, hostMemory.refusal("a WebSocket's message"));
      return;
    }
    this.waitingBytes += size;
    const payload = this.host.argument(binary ? data : utf8Text(Buffer.from(data.buffer, data.byteOffset, data.byteLength)));
    this.host.fire([Fire.socket, this.key, SocketEvent.message, payload], binary ? 0 : size, size, () => {
      this.waitingBytes -= size;
    });
  }

  closed(code: number, reason: string): void {
    this.finish(code, reason);
  }

  onEnd(listener: () => void): void {
    if (this.state === 'ended') listener();
    else this.endListeners.push(listener);
  }

  /** The function sends a message. */
  send(data: string | Uint8Array, binary: boolean): void {
    const size = typeof data === 'string' ? Buffer.byteLength(data) : data.byteLength;
    if (size > this.host.limits.messageBytes) {
      this.refuse(1009, `the function sent a message of ${size} bytes, over the limit of ${this.host.limits.messageBytes}`);
      return;
    }
    if (this.state === 'open') {
      this.touch();
      this.transmit(data, binary);
    } else if (this.state !== 'ended' && !this.closing) {
      this.outgoingBytes += size;
      if (this.outgoingBytes > this.host.limits.bufferedBytes) this.finish(1008, `the function sent over ${this.host.limits.bufferedBytes} bytes before the client was connected`);
      else this.outgoing.push({ data, binary });
    }
  }

  /** The function closes it. */
  close(code: number, reason: string): void {
    if (this.state === 'ended' || this.closing) return;
    this.closing = { code, reason };
    this.peer?.end(code, reason);
  }

  /** The host closes it (a deploy, the server's drain): at once when no client has it yet. */
  shut(code: number, reason: string): void {
    if (this.peer) this.peer.end(code, reason);
    else this.finish(code, reason);
  }

  /** The instance died: the connection closes, and nothing enters the isolate any more. */
  drop(reason: string): void {
    if (this.state === 'ended') return;
    this.peer?.end(1011, reason);
    this.end();
  }

  private transmit(data: string | Uint8Array, binary: boolean): void {
    const buffered = this.peer!.send(data, binary);
    if (buffered > this.host.limits.bufferedBytes) this.refuse(1008, `the client does not read what the function sends (over ${this.host.limits.bufferedBytes} bytes waiting)`);
  }

  /** A bound closes the connection; the function's logs say which. */
  private refuse(code: number, reason: string): void {
    if (this.closing) return;
    this.closing = { code, reason };
    this.host.log(this.requestId, `WebSocket closed with ${code}: ${reason}`);
    if (this.peer) this.peer.end(code, reason);
    else this.finish(code, reason);
  }

  private touch(): void {
    this.lastActivity = performance.now();
  }

  /** One timer for the idle timeout, armed again for what is left when a message came meanwhile. */
  private armIdle(ms: number): void {
    this.timer = setTimeout(() => {
      if (this.state !== 'open') return;
      const idle = performance.now() - this.lastActivity;
      const limit = this.host.limits.idleMs;
      if (idle >= limit) this.refuse(1001, `idle for ${limit / 1000} s`);
      else this.armIdle(limit - idle);
    }, ms).unref();
  }

  /**
   * It is over: the sandbox hears of its close (code and reason). The instance is held until that
   * is in, so a retired one is not disposed before the function's close listener ran.
   */
  private finish(code: number, reason: string): void {
    if (this.state === 'ended') return;
    this.ending = { code, reason };
    this.end(false);
    this.host.fire([Fire.socket, this.key, SocketEvent.close, code, reason], reason.length, 0, () => this.host.release());
  }

  private end(release = true): void {
    if (this.state === 'ended') return;
    this.state = 'ended';
    clearTimeout(this.timer);
    this.peer = undefined;
    this.outgoing = [];
    this.owner.forget(this.key);
    if (release) this.host.release();
    for (const listener of this.endListeners.splice(0)) listener();
  }
}

/**
 * The WebSockets of an instance (at most `limits.socketsPerInstance`), by the sandbox's key of
 * each pair. The sandbox says when it accepts a pair's server end; the function's answer gives its
 * client end (`give`), and the HTTP server drives the connection through the FunctionSocket.
 */
export class InstanceSockets {
  private readonly open = new Map<number, Session>();

  constructor(private readonly host: SocketHost) {}

  get size(): number {
    return this.open.size;
  }

  /** A `socket(key, op, data, reason)` callback of the sandbox (untrusted input). */
  op(key: number, op: unknown, data: unknown, reason: unknown): void {
    if (!Number.isInteger(key)) return;
    if (op === SocketOp.accept) {
      this.accept(key, typeof data === 'string' ? data.slice(0, 64) : '-');
      return;
    }
    const session = this.open.get(key);
    if (!session) return;
    if (op === SocketOp.send) {
      if (typeof data === 'string') session.send(data, false);
      else if (data instanceof ArrayBuffer) session.send(new Uint8Array(data), true);
    } else if (op === SocketOp.close) {
      const text = typeof reason === 'string' ? reason : '';
      const code = data === undefined ? 1000 : data;
      // The sandbox checks these first; one that does not (its code was changed) closes normally.
      if (closeRefusal(code, Buffer.byteLength(text)) === undefined) session.close(code as number, text);
      else session.close(1000, '');
    }
  }

  /** The socket the function's answer gives a client: the server end of `key` must have been accepted. */
  give(key: number): FunctionSocket | undefined {
    const session = this.open.get(key);
    return session?.give() ? session : undefined;
  }

  /** Closes every socket (a deploy replaced the function, the server drains). */
  shutAll(code: number, reason: string): void {
    for (const session of [...this.open.values()]) session.shut(code, reason);
  }

  /** The instance died. */
  dropAll(reason: string): void {
    for (const session of [...this.open.values()]) session.drop(reason);
  }

  forget(key: number): void {
    this.open.delete(key);
  }

  private accept(key: number, requestId: string): void {
    if (this.open.has(key)) return;
    const { limits } = this.host;
    if (this.open.size >= limits.socketsPerInstance) {
      const reason = `the function instance holds ${limits.socketsPerInstance} WebSockets, its limit`;
      this.host.log(requestId, `WebSocket refused: ${reason}`);
      this.host.fire([Fire.socket, key, SocketEvent.close, 1013, reason], reason.length, 0);
      return;
    }
    this.open.set(key, new Session(this, key, requestId, this.host));
    this.host.hold();
  }
}
