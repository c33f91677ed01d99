/**
 * The operations between fetch's guest halves (guest/fetch.ts and guest/http.ts in node8;
 * guest/net.py in Python) and its host half (host.ts over the guarded egress, egress.ts). The
 * guests import types only.
 */
import { count, object, type Check } from '../schema';

/** A request as the egress sends it. */
export interface FetchRequest {
  url: string;
  /** An HTTP method's token (GET when the guest sent none that is one). */
  method: string;
  headers: [string, string][];
  /** `manual` and `error` as fetch's; anything else follows redirects. */
  redirect: string;
  /** Asked-for timeout (a Python socket's); never more than the server's. */
  timeoutMs: number | undefined;
}

/**
 * The request's check. It refuses nothing: what cannot be sent is the egress's to refuse, with
 * ERR_EGRESS_URL and a message fetch shows. Malformed fields are left out or given their defaults.
 */
export const fetchRequest: Check<FetchRequest> = (value) => {
  const request = (typeof value === 'object' && value !== null ? value : {}) as Record<string, unknown>;
  const headers = Array.isArray(request.headers) ? request.headers.filter((h): h is [string, string] => Array.isArray(h) && typeof h[0] === 'string' && typeof h[1] === 'string') : [];
  return {
    url: String(request.url ?? ''),
    method: /^[A-Z]{1,16}$/.test(String(request.method)) ? String(request.method) : 'GET',
    headers,
    redirect: String(request.redirect ?? 'follow'),
    timeoutMs: typeof request.timeoutMs === 'number' && request.timeoutMs > 0 ? request.timeoutMs : undefined,
  };
};

/**
 * One HTTP exchange, its request's body the operation's bytes: node8's asynchronous operation
 * (fetch, http.request) and Python's synchronous one (a socket's request, redirects answered as
 * they are, the timeout the socket's).
 */
export const FETCH_OPS = { fetch: fetchRequest };

/**
 * node8 reads a response body that is still arriving (FetchAnswer.stream) chunk by chunk: the next
 * chunk as the answer's bytes (payload `{"done":true}` at the end), or cancels it.
 */
export const FETCH_BODY_OPS = { fetchRead: object({ id: count() }), fetchCancel: object({ id: count() }) };

/** What an exchange answers (the response's body is the answer's bytes). */
export interface FetchAnswer {
  status: number;
  statusText: string;
  headers: [string, string][];
  url: string;
  redirected: boolean;
  /** The body's id when it is read as it arrives (fetchRead); otherwise it is the answer's bytes. */
  stream?: number;
}

/** fetch's host callback (see HostBridge). */
export interface FetchCallbacks {
  /**
   * Opens or closes a `waitUntil` window (`token` is the sandbox's): while one is open, the
   * instance's timers and operations run with no call in flight, for at most the timeout. Without
   * one they wait for the next call. `requestId` is the call whose work it is: its sockets stay
   * open until the window closes.
   */
  background(token: number, open: boolean, requestId?: string): void;
}
