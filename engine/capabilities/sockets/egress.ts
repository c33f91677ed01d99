import { isIP, connect as netConnect, type Socket } from 'node:net';
import { connect as tlsConnect, type ConnectionOptions, type TLSSocket } from 'node:tls';
import type { Egress } from '../fetch/egress';
import type { TlsRequest } from './ops';

/**
 * A function's way out over TCP (the engine's `services.sockets`, one per function): connections
 * through the egress's rules, with the host doing TLS, and the account's pacing.
 */
export interface SocketService {
  /** Connects to `hostname:port` (TLS when `tls` is given) within `timeoutMs`, or until `signal` aborts. */
  connect(hostname: string, port: number, tls: TlsRequest | undefined, timeoutMs: number, signal: AbortSignal): Promise<Socket>;
  /** Starts TLS on `socket`, connected to `hostname`. */
  upgrade(socket: Socket, hostname: string, tls: TlsRequest, timeoutMs: number, signal: AbortSignal): Promise<TLSSocket>;
  /** Waits while the account is over its egress bytes per second. */
  pace(bytes: number): Promise<void> | undefined;
}

export function socketService(egress: Egress, account: string): SocketService {
  return {
    async connect(hostname, port, tls, timeoutMs, signal) {
      const host = hostname.replace(/^\[|\]$/g, '');
      const started = performance.now();
      const address = await abortable(egress.socketAddress(host, port), signal, timeoutMs, `connect ETIMEDOUT ${host}:${port}`);
      const left = Math.max(1, timeoutMs - (performance.now() - started));
      const socket = tls ? tlsConnect({ ...tlsOptions(host, tls), host: address, port }) : netConnect({ host: address, port });
      return ready(socket, tls ? 'secureConnect' : 'connect', signal, left, `connect ETIMEDOUT ${host}:${port}`);
    },
    upgrade(socket, hostname, tls, timeoutMs, signal) {
      const host = hostname.replace(/^\[|\]$/g, '');
      return ready(tlsConnect({ ...tlsOptions(host, tls), socket }), 'secureConnect', signal, timeoutMs, `TLS handshake with ${host} ETIMEDOUT`) as Promise<TLSSocket>;
    },
    pace: (bytes) => egress.pace(account, bytes),
  };
}

/**
 * Node's TLS options for a function's request: the host's defaults (protocol versions, ciphers, its
 * CA list unless the function names its own) and nothing weaker but what the function may choose
 * for its own connection, not verifying the peer (`rejectUnauthorized: false`). Node checks the
 * certificate against `servername`, set to the host name the function connected to unless it
 * named another: never against the address that name resolved to.
 */
function tlsOptions(host: string, tls: TlsRequest): ConnectionOptions {
  const servername = tls.servername && isIP(tls.servername) === 0 ? tls.servername : isIP(host) === 0 ? host : undefined;
  return {
    host,
    servername,
    rejectUnauthorized: tls.rejectUnauthorized !== false,
    ...(tls.ca && tls.ca.length > 0 ? { ca: tls.ca } : {}),
    ...(tls.alpn && tls.alpn.length > 0 ? { ALPNProtocols: tls.alpn } : {}),
  };
}

/** Resolves with `socket` once it emits `event`; fails on its error, the timeout or the signal (the socket is destroyed). */
function ready<S extends Socket>(socket: S, event: string, signal: AbortSignal, timeoutMs: number, timeoutMessage: string): Promise<S> {
  return new Promise<S>((resolve, reject) => {
    const done = (err?: Error) => {
      clearTimeout(timer);
      signal.removeEventListener('abort', abort);
      socket.removeListener(event, ok);
      socket.removeListener('error', done);
      if (!err) {
        resolve(socket);
        return;
      }
      socket.destroy();
      reject(err);
    };
    const ok = () => done();
    const abort = () => done(signal.reason as Error);
    const timer = setTimeout(() => done(Object.assign(new Error(`${timeoutMessage} (over ${timeoutMs} ms)`), { code: 'ETIMEDOUT' })), timeoutMs);
    if (signal.aborted) {
      abort();
      return;
    }
    signal.addEventListener('abort', abort, { once: true });
    socket.once(event, ok);
    socket.once('error', done);
  });
}

/** `work`, unless the signal aborts or the timeout passes first. */
function abortable<T>(work: Promise<T>, signal: AbortSignal, timeoutMs: number, timeoutMessage: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const abort = () => finish(() => reject(signal.reason));
    const timer = setTimeout(() => finish(() => reject(Object.assign(new Error(`${timeoutMessage} (over ${timeoutMs} ms)`), { code: 'ETIMEDOUT' }))), timeoutMs);
    const finish = (then: () => void) => {
      clearTimeout(timer);
      signal.removeEventListener('abort', abort);
      then();
    };
    if (signal.aborted) return abort();
    signal.addEventListener('abort', abort, { once: true });
    work.then(
      (value) => finish(() => resolve(value)),
      (err: unknown) => finish(() => reject(err)),
    );
  });
}
