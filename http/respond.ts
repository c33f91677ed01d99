import { STATUS_CODES } from 'node:http';
import type { HttpResponse } from '@trufflesuite/uws-js-unofficial';

/** Bodies at or under this size go out in one `end`; larger ones are streamed with backpressure. */
const DIRECT_LIMIT = 64 * 1024;

export interface ResponseState {
  aborted: boolean;
  /** Called when the client goes away, for a response still being written (a stream). */
  onAbort?: () => void;
  /** The answering server's connections: whether the answer closes its connection. */
  readonly connections: Connections;
  /**
   * A streamed answer is about to write (`'write'`), waits for the client to take what was written
   * (`'blocked'`), or goes on (`'flowing'`): the request body still arriving keeps its socket unpaused
   * while the answer writes or waits.
   */
  onWrite?: (phase: 'write' | 'blocked' | 'flowing') => void;
}

const statusLines: string[] = [];

/**
 * One server's connections: `closing` is set when it drains, and every response from then on closes
 * its connection, so keep-alive clients reconnect, and reach another worker. Each server has its
 * own: draining one leaves another's connections kept alive (a process-wide flag closed every
 * server's of the process, such as the tests' several servers).
 */
export class Connections {
  closing = false;

  /** A request's state, not aborted yet, answered on these connections. */
  watch(res: HttpResponse): ResponseState {
    const state: ResponseState = { aborted: false, connections: this };
    res.onAborted(() => (state.aborted = true));
    return state;
  }
}

/** `200 OK` and the like (status codes are checked to be 100–599 before they get here). */
export function statusLine(status: number): string {
  return (statusLines[status] ??= `${status} ${STATUS_CODES[status] ?? 'Unknown'}`);
}

/**
 * Writes a whole response on a uWS HttpResponse (corked into one syscall where it fits). For HEAD
 * the status and headers go out with the body's Content-Length and no body.
 *
 * `refuseBody`: the answer refuses a request whose body is still coming. Reading stops (the socket
 * is paused: the client's sends block once the kernel's buffers are full, and nothing more reaches
 * the process), the answer says `Connection: close`, and uWS closes the connection at its idle
 * timeout (10 s) unless the client does first. Closing at once instead lost the answer: closed with
 * unread data, the socket resets, and the client saw EPIPE with no answer in 4 of 9 uploads.
 */
export function writeResponse(res: HttpResponse, state: ResponseState, status: number, headers: Record<string, string>, body: string | Uint8Array, head: boolean, refuseBody = false): void {
  if (state.aborted) return;
  res.cork(() => {
    if (refuseBody) res.pause();
    writeHead(res, status, refuseBody ? { ...headers, Connection: 'close' } : headers);
    writeBody(res, state, body, head);
  });
}

/** Writes the status line and headers (inside a cork). */
export function writeHead(res: HttpResponse, status: number, headers: Record<string, string>): void {
  res.writeStatus(statusLine(status));
  for (const name in headers) res.writeHeader(name, headers[name]!);
}

/** Ends a response with its body (inside a cork, after the headers). */
export function writeBody(res: HttpResponse, state: ResponseState, body: string | Uint8Array, head: boolean): void {
  if (head) {
    res.endWithoutBody(typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength, state.connections.closing);
  } else if ((typeof body === 'string' ? body.length * 3 : body.byteLength) <= DIRECT_LIMIT) {
    res.end(body, state.connections.closing);
  } else {
    streamBody(res, state, typeof body === 'string' ? Buffer.from(body) : body);
  }
}

/** Sends a large body respecting backpressure: the rest is written when the socket drains. */
function streamBody(res: HttpResponse, state: ResponseState, bytes: Uint8Array): void {
  const total = bytes.byteLength;
  const start = res.getWriteOffset();
  const [ok, done] = res.tryEnd(bytes, total);
  if (done || ok) return;
  res.onWritable((offset) => {
    if (state.aborted) return true;
    const [sent] = res.tryEnd(bytes.subarray(offset - start), total);
    return sent;
  });
}
