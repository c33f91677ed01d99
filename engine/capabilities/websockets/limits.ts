/**
 * The bounds of functions' WebSockets (host.ts and the HTTP server enforce them; the README's
 * limits table lists them). The engine takes these as its defaults (`Limits.webSockets`); an
 * operator or a test may set others. No imports.
 */
const MiB = 1024 * 1024;

export interface WebSocketLimits {
  /** Largest message either way, bytes (Workers allows 1 MiB): a larger one from the client closes the connection with 1009 (one over twice this is cut at once by uWS: 1006), a larger send throws. */
  messageBytes: number;
  /** Messages a client may send per second on one connection, over time (a token bucket's refill); past it the connection closes with 1008. */
  messagesPerSec: number;
  /** Messages the bucket holds for a burst. */
  messagesBurst: number;
  /**
   * Bytes one connection may have waiting, each way: sent by the function and not yet taken by
   * the client, or sent by the client and not yet taken into the isolate. Past it the connection
   * closes with 1008 (a client that does not read, a function that does not keep up).
   */
  bufferedBytes: number;
  /** A connection with no message either way for this long (ms) is closed with 1001. */
  idleMs: number;
  /** Connections one account's functions may hold open at once (each of N workers holds 1/N); past it an upgrade is 429 ERR_RATE_LIMITED. */
  connectionsPerAccount: number;
  /** WebSockets one function instance may hold (accepted, connecting or open). */
  socketsPerInstance: number;
}

export const WEBSOCKET_LIMITS: WebSocketLimits = {
  messageBytes: 1 * MiB,
  messagesPerSec: 1000,
  messagesBurst: 1000,
  bufferedBytes: 1 * MiB,
  idleMs: 60_000,
  connectionsPerAccount: 1000,
  socketsPerInstance: 1000,
};
