import type { Socket } from 'node:net';
import type { HostMemory } from '../../isolate/host-memory';
import { OpError } from '../errors';
import type { SocketService } from './egress';
import type { SocketLimits } from './limits';
import type { SocketOpened, TlsRequest } from './ops';

/** What an instance's sockets need of it. */
export interface SocketsHost {
  readonly limits: SocketLimits;
  readonly hostMemory: HostMemory;
  /**
   * Whether `owner` (a request id; '' while the module loads) still runs: its call is in flight or
   * its `waitUntil` work goes on. A socket belongs to the call that opened it, as on Workers.
   */
  live(owner: string): boolean;
}

/** Closed sockets whose reason is kept for operations that arrive late. */
const GONE_KEPT = 64;

/** A read's answer when a TLS upgrade took the socket's bytes from under it (the old socket's last read). */
export const MOVED = Symbol('moved');

interface Connection {
  readonly id: number;
  /** The request that opened it: it is closed when that call is over. */
  readonly owner: string;
  /** The name it connected to (TLS checks the certificate against it). */
  readonly hostname: string;
  /** Undefined while connecting. */
  socket: Socket | undefined;
  /** Aborts the connect or the upgrade in progress. */
  readonly abort: AbortController;
  /** Why it is over, once the host closed it: its operations fail with this. */
  failure: Error | undefined;
  /** The peer ended its side and every byte before its end was read. */
  ended: boolean;
  /** A TLS upgrade is in progress: reads wait for it. */
  upgrading: boolean;
  /** A read is waiting (one at a time). */
  reading: boolean;
  /** Wakes the read waiting for bytes, the end, a failure or an upgrade. */
  wake: (() => void) | undefined;
  /** Bytes written by the function and not yet handed to the kernel. */
  writing: number;
}

/**
 * The TCP sockets of one function instance, by the ids this table gives (the ids are the
 * instance's own: another instance, of this function or any other account's, has its own table, so
 * a forged id finds nothing). Reads take what the kernel has for the function when it asks, a
 * chunk at a time; writes wait until their bytes are handed to the kernel, so a peer that reads
 * slowly slows the function's writes. What the host holds meanwhile counts against the instance's
 * memory. Sockets close when the call that opened them is over, when they stay idle, and when the
 * instance dies.
 */
export class InstanceConnections {
  private readonly open = new Map<number, Connection>();
  /**
   * Why the last sockets closed, by id: an operation the guest started before it heard (a read it
   * asked for as the call ended) fails with the reason, not with "no such socket".
   */
  private readonly gone = new Map<number, Error>();
  private next = 1;

  constructor(private readonly host: SocketsHost) {}

  get size(): number {
    return this.open.size;
  }

  /** Opens a socket for `owner` (its id in the answer). */
  async connect(owner: string, hostname: string, port: number, tls: TlsRequest | undefined, service: SocketService): Promise<SocketOpened> {
    const { limits } = this.host;
    if (!this.host.live(owner)) {
      throw new OpError(
        'ERR_SOCKET_OUTSIDE_CALL',
        `connect to ${hostname}:${port}: a socket belongs to the call that opens it (or its waitUntil work, or the module's load), and this code runs after that ended: open sockets in each call`,
      );
    }
    if (this.open.size >= limits.socketsPerInstance) {
      throw new OpError('ERR_SOCKET_LIMIT', `connect to ${hostname}:${port}: this function instance already holds ${limits.socketsPerInstance} sockets, its limit; close some first`);
    }
    if (port < 1 || port > 65535) throw new OpError('ERR_SOCKET_BAD_PORT', `Port should be > 0 and < 65536. Received ${port}.`, 'RangeError');
    const c: Connection = {
      id: this.next++,
      owner,
      hostname,
      socket: undefined,
      abort: new AbortController(),
      failure: undefined,
      ended: false,
      upgrading: false,
      reading: false,
      wake: undefined,
      writing: 0,
    };
    this.open.set(c.id, c);
    let socket: Socket;
    try {
      socket = await service.connect(hostname, port, tls, limits.connectTimeoutMs, c.abort.signal);
    } catch (err) {
      if (this.open.get(c.id) === c) this.open.delete(c.id);
      throw c.failure ?? err;
    }
    if (c.failure) {
      socket.destroy();
      throw c.failure;
    }
    this.attach(c, socket);
    return this.opened(c);
  }

  /** The socket's next bytes, undefined once the peer ended, or MOVED when an upgrade took them. */
  async read(id: number, service: SocketService): Promise<Uint8Array | undefined | typeof MOVED> {
    const c = this.get(id);
    if (c.reading) throw new OpError('ERR_SOCKET_BUSY', 'a socket is read one chunk at a time');
    c.reading = true;
    try {
      for (;;) {
        if (c.failure) throw c.failure;
        const socket = c.socket;
        if (socket && !c.upgrading && socket.readableLength > 0) {
          const chunk = socket.read(Math.min(socket.readableLength, this.host.limits.readChunkBytes)) as Buffer | null;
          if (chunk !== null) {
            await service.pace(chunk.byteLength);
            return chunk;
          }
        }
        if (c.ended) return undefined;
        const upgrading = c.upgrading;
        await new Promise<void>((resolve) => {
          c.wake = resolve;
          // Asks the socket for bytes: `readable` follows once some arrived.
          if (socket && !upgrading) socket.read(0);
        });
        c.wake = undefined;
        // The old socket's read ends here: the upgrade's socket reads on.
        if (!upgrading && c.upgrading) return MOVED;
      }
    } finally {
      c.reading = false;
    }
  }

  /** Sends `bytes`; resolves once they are handed to the kernel. */
  async write(id: number, bytes: Uint8Array, service: SocketService): Promise<void> {
    const c = this.get(id);
    const { limits, hostMemory } = this.host;
    const size = bytes.byteLength;
    if (c.writing + size > limits.bufferedBytes) {
      throw new OpError('ERR_SOCKET_BUFFER_FULL', `a socket has at most ${limits.bufferedBytes} bytes waiting to be sent on the host (wait for write()'s callback or 'drain')`);
    }
    if (!hostMemory.reserve(size)) throw new OpError('ERR_SOCKET_MEMORY', hostMemory.refusal("a socket's write"));
    c.writing += size;
    try {
      await service.pace(size);
      const socket = this.ready(c);
      await this.until(c, (done) => socket.write(bytes, (err) => done(err ?? undefined)));
    } finally {
      c.writing -= size;
      hostMemory.release(size);
    }
  }

  /** Ends the sending side once what was written is sent (a socket closed after both ends ended is ended). */
  async end(id: number): Promise<void> {
    const c = this.get(id);
    const socket = this.ready(c);
    if (socket.writableEnded || socket.destroyed) return;
    await this.until(c, (done) => {
      socket.end(() => done(undefined));
    });
  }

  /** Closes the socket at once; an id that is not open is closed already. */
  close(id: number): void {
    const c = this.open.get(id);
    if (c) this.fail(c, new OpError('ERR_SOCKET_CLOSED', 'the socket is closed'));
  }

  /** Starts TLS on the socket: a read waiting on it answers MOVED, and reads wait until the handshake is over. */
  async upgrade(id: number, tls: TlsRequest, service: SocketService): Promise<SocketOpened> {
    const c = this.get(id);
    const raw = this.ready(c);
    if (c.upgrading || 'encrypted' in raw) throw new OpError('ERR_SOCKET_TLS', 'this socket already uses TLS');
    c.upgrading = true;
    c.wake?.();
    raw.removeAllListeners();
    raw.setTimeout(0);
    try {
      this.attach(c, await service.upgrade(raw, c.hostname, tls, this.host.limits.connectTimeoutMs, c.abort.signal));
    } catch (err) {
      this.fail(c, err as Error);
      throw err;
    } finally {
      c.upgrading = false;
    }
    c.wake?.();
    return this.opened(c);
  }

  /** The call `owner` is over: its sockets close (the function hears why on its next use of them). */
  ownerEnded(owner: string): void {
    for (const c of [...this.open.values()]) {
      if (c.owner === owner)
        this.fail(
          c,
          new OpError(
            'ERR_SOCKET_CALL_ENDED',
            'the socket was closed because the call that opened it ended: a socket belongs to its call, as on Workers (open sockets in each call; a pool opens new ones)',
          ),
        );
    }
  }

  /** The instance is gone: every socket closes. */
  closeAll(reason: string): void {
    for (const c of [...this.open.values()]) this.fail(c, new OpError('ERR_SOCKET_CLOSED', `the socket was closed: ${reason}`));
  }

  private get(id: number): Connection {
    const c = this.open.get(id);
    if (!c) throw this.gone.get(id) ?? new OpError('ERR_SOCKET_CLOSED', 'the socket is closed (or was never opened by this function instance)');
    return c;
  }

  private ready(c: Connection): Socket {
    if (c.failure) throw c.failure;
    if (!c.socket || c.upgrading) throw new OpError('ERR_SOCKET_NOT_CONNECTED', 'the socket is not connected yet');
    return c.socket;
  }

  /** Runs `start` and waits for its callback, or for the connection to fail first. */
  private until(c: Connection, start: (done: (err: Error | undefined) => void) => void): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      let settled = false;
      const done = (err: Error | undefined) => {
        if (settled) return;
        settled = true;
        c.abort.signal.removeEventListener('abort', aborted);
        if (err) reject(c.failure ?? err);
        else resolve();
      };
      const aborted = () => done(c.failure ?? new OpError('ERR_SOCKET_CLOSED', 'the socket is closed'));
      c.abort.signal.addEventListener('abort', aborted, { once: true });
      start(done);
    });
  }

  private attach(c: Connection, socket: Socket): void {
    c.socket = socket;
    const wake = () => c.wake?.();
    socket.on('readable', wake);
    socket.on('end', () => {
      c.ended = true;
      wake();
    });
    socket.on('error', (err) => this.fail(c, err));
    socket.on('close', () => {
      // Closed by both ends after the peer's end was read: the function reads its end, then closes it.
      if (!c.ended) this.fail(c, new OpError('ECONNRESET', 'the socket closed'));
      wake();
    });
    const { idleMs } = this.host.limits;
    socket.setTimeout(idleMs, () => this.fail(c, new OpError('ETIMEDOUT', `the socket was idle for ${idleMs / 1000} s and was closed`)));
  }

  /** It is over: the host's socket is destroyed, waiting operations fail with `err`, and its id is free. */
  private fail(c: Connection, err: Error): void {
    if (this.open.get(c.id) === c) this.open.delete(c.id);
    if (c.failure) return;
    c.failure = err;
    this.gone.set(c.id, err);
    if (this.gone.size > GONE_KEPT) this.gone.delete(this.gone.keys().next().value!);
    c.abort.abort(err);
    c.socket?.destroy();
    c.wake?.();
  }

  private opened(c: Connection): SocketOpened {
    const s = c.socket as Socket & { alpnProtocol?: string | false; authorized?: boolean; encrypted?: boolean };
    return {
      id: c.id,
      remoteAddress: s.remoteAddress ?? '',
      remotePort: s.remotePort ?? 0,
      remoteFamily: s.remoteFamily ?? '',
      localAddress: s.localAddress ?? '',
      localPort: s.localPort ?? 0,
      ...(s.encrypted ? { alpnProtocol: s.alpnProtocol ?? false, authorized: s.authorized === true } : {}),
    };
  }
}
