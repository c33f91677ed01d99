/**
 * The operations between a function's WebSockets in the sandbox (guest/websockets.ts, node8) and
 * their host half (host.ts): the guest tells the host with `socket(key, op, …)` that it accepted
 * the server end of a pair, sends a message or closes it; the host enters the isolate with
 * `fire(Fire.socket, key, event, …)` for a message from the client or the connection's close.
 * Bundled into the runtime: no imports.
 */

/** What `socket(key, op, data, reason)` asks of the host. */
export const SocketOp = { accept: 0, send: 1, close: 2 } as const;
/** What `fire(Fire.socket, key, event, data, reason)` tells the sandbox. */
export const SocketEvent = { message: 0, close: 1 } as const;

/** The close code a connection that dropped without a close frame reports (never sent). */
export const ABNORMAL_CLOSURE = 1006;

export interface SocketsCallbacks {
  /**
   * A WebSocket's operation (fire and forget): `accept` (the server end of pair `key` will take
   * messages), `send` of text or bytes, or `close` with a code (`data`) and a reason.
   */
  socket(key: number, op: number, data?: string | ArrayBuffer | number, reason?: string): void;
}

/**
 * Why a code and reason cannot close a WebSocket, or undefined: as the WebSocket standard's
 * `close()`, 1000 or 3000–4999, and a reason of at most 123 bytes of UTF-8 (a close frame's
 * payload is at most 125 bytes, two of them the code).
 */
export function closeRefusal(code: unknown, reasonBytes: number): string | undefined {
  if (typeof code !== 'number' || !Number.isInteger(code) || (code !== 1000 && (code < 3000 || code > 4999))) {
    return `a WebSocket is closed with code 1000 or 3000-4999, got ${String(code)}`;
  }
  if (reasonBytes > 123) return `a WebSocket's close reason is at most 123 bytes of UTF-8, got ${reasonBytes}`;
  return undefined;
}
