/**
 * The bounds of functions' outbound TCP sockets (connections.ts enforces them; the README's limits
 * table lists them). The engine takes these as its defaults (`Limits.sockets`); an operator or a
 * test may set others. No imports.
 */
const KiB = 1024;

export interface SocketLimits {
  /**
   * Sockets one function instance may hold at once (connecting or open); past it a connect fails.
   * Workers allows six per request; a pg Pool holds ten by default.
   */
  socketsPerInstance: number;
  /**
   * Bytes one socket may have waiting on the host each way: written by the function and not yet
   * handed to the kernel, and read from the kernel and not yet asked for by the function (past it
   * the host stops reading, so the peer's sending waits on TCP's own window).
   */
  bufferedBytes: number;
  /** The most one read hands the function at once, bytes. */
  readChunkBytes: number;
  /** A socket with no bytes either way for this long (ms) is closed with an error. */
  idleMs: number;
  /** A connection (DNS, TCP, TLS's handshake) that takes longer than this (ms) fails with ETIMEDOUT. */
  connectTimeoutMs: number;
}

export const SOCKET_LIMITS: SocketLimits = {
  socketsPerInstance: 32,
  bufferedBytes: 256 * KiB,
  readChunkBytes: 64 * KiB,
  idleMs: 60_000,
  connectTimeoutMs: 10_000,
};

/** Bytes one write operation carries: the guests send a larger write in pieces of this size. */
export const WRITE_PIECE = 64 * KiB;
