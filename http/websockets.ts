import { writeHeaderLines } from './answer';
import type { HttpRequest, HttpResponse, TemplatedApp, us_socket_context_t, WebSocket } from '@trufflesuite/uws-js-unofficial';
import type { CallApi, FunctionSocket, InvokeRequest, InvokeResponse, SocketPeer } from '../engine/api';
import type { ActiveCounter } from './in-flight';
import type { Connections, ResponseState } from './respond';

/** What the route needs of the server's `/v2/run/` handling (http/server.ts). */
export interface RunHandling {
  /** Reads a call from uWS's request (valid only synchronously). */
  readCall(req: HttpRequest): InvokeRequest;
  /** Writes an answer as `/v2/run/` does; `done` once it is written. */
  send(res: HttpResponse, state: ResponseState, response: InvokeResponse, head: boolean, done: () => void): void;
}

export interface WebSocketRoute {
  /** Closes every open connection with `code` and `reason` (the server drains or stops). */
  closeAll(code: number, reason: string): void;
  /** Connections open now. */
  readonly open: number;
}

interface Connection {
  socket: FunctionSocket;
  closed: boolean;
}

/** Headers of a 101 that uWS writes itself. */
const OWN_HEADERS = /^(sec-websocket-|upgrade$|connection$|content-length$)/i;

/**
 * `ws://…/v2/run/<account>/<fn>`: an upgrade request is a call of the function (the same key
 * rules, refusals and answers as any call); an answer of status 101 with a WebSocket upgrades the
 * connection, any other answer is sent as it is, without switching protocols. uWS routes a GET
 * with a `Sec-WebSocket-Key` here and every other request to `/v2/run/*`'s HTTP handler.
 */
export function addWebSocketRoute(app: TemplatedApp, engine: CallApi, counter: ActiveCounter, connections: Connections, run: RunHandling): WebSocketRoute {
  const limits = engine.limits.webSockets;
  const sockets = new Set<WebSocket<Connection>>();
  let closing: { code: number; reason: string } | undefined;

  app.ws<Connection>('/v2/run/*', {
    compression: 0,
    // Past its maxPayloadLength uWS drops the connection without a close frame (the client sees
    // 1006): up to twice the limit a message arrives, and FunctionSocket closes with 1009 saying why.
    maxPayloadLength: limits.messageBytes * 2,
    // Never reached: a connection with more than bufferedBytes waiting is closed first (FunctionSocket).
    maxBackpressure: limits.bufferedBytes + limits.messageBytes + 1024,
    // The idle timeout is the socket's own (exact, in ms); uWS's has a 4 s granularity.
    idleTimeout: 0,
    sendPingsAutomatically: false,
    upgrade: (res, req, context) => upgrade(engine, counter, connections, run, res, req, context),
    open: (ws) => {
      const connection = ws.getUserData();
      sockets.add(ws);
      connection.socket.attach(peerOf(ws, connection));
      if (closing) ws.end(closing.code, closing.reason);
    },
    message: (ws, message, isBinary) => ws.getUserData().socket.message(new Uint8Array(message), isBinary),
    close: (ws, code, message) => {
      const connection = ws.getUserData();
      connection.closed = true;
      sockets.delete(ws);
      connection.socket.closed(code, Buffer.from(message).toString('utf8'));
    },
  });

  return {
    closeAll(code, reason) {
      closing = { code, reason };
      // On the next turn: uWS calls `close` from within end(), and a native call back into
      // JavaScript from within a promise job aborts Node (see http/stream-answer.ts).
      setImmediate(() => {
        for (const ws of [...sockets]) if (!ws.getUserData().closed) ws.end(code, reason);
      });
    },
    get open() {
      return sockets.size;
    },
  };
}

function upgrade(engine: CallApi, counter: ActiveCounter, connections: Connections, run: RunHandling, res: HttpResponse, req: HttpRequest, context: us_socket_context_t): void {
  const call = run.readCall(req);
  call.upgrade = true;
  const key = call.headers['sec-websocket-key'] ?? '';
  const extensions = call.headers['sec-websocket-extensions'] ?? '';
  const state: ResponseState = { aborted: false, connections };
  res.onAborted(() => {
    state.aborted = true;
    state.onAbort?.();
  });
  counter.begin();
  const done = () => counter.end();
  engine.dispatch(call, (response) => {
    const socket = response.webSocket;
    if (!socket) {
      run.send(res, state, response, false, done);
      return;
    }
    // On the next turn: uWS calls `open` from within upgrade() (see closeAll).
    setImmediate(() => {
      done();
      if (state.aborted) {
        socket.abandon('the client closed the connection before it was upgraded');
        return;
      }
      const connection: Connection = { socket, closed: false };
      res.cork(() => {
        res.writeStatus('101 Switching Protocols');
        for (const name in response.headers) if (!OWN_HEADERS.test(name)) writeHeaderLines(res, name, response.headers[name]!);
        res.writeHeader('X-Service-Request-ID', response.requestId);
        if (response.version !== undefined) res.writeHeader('X-Service-Version', String(response.version));
        res.upgrade(connection, key, protocolOf(response.headers), extensions, context);
      });
    });
  });
}

/** The subprotocol the function picked: its answer's `Sec-WebSocket-Protocol`, whatever the case of the name. */
function protocolOf(headers: Record<string, string>): string {
  for (const name in headers) if (name.toLowerCase() === 'sec-websocket-protocol') return headers[name]!;
  return '';
}

/** A close frame's reason: at most 123 bytes of UTF-8 (the frame's payload is 125 with the code), cut on a character. */
function closeReason(reason: string): string {
  if (Buffer.byteLength(reason) <= 123) return reason;
  let cut = reason.slice(0, 123);
  while (Buffer.byteLength(cut) > 120) cut = cut.slice(0, -1);
  return `${cut}…`;
}

/** The connection as the function's socket drives it. */
function peerOf(ws: WebSocket<Connection>, connection: Connection): SocketPeer {
  return {
    send(data, binary) {
      if (connection.closed) return 0;
      ws.send(data, binary);
      return ws.getBufferedAmount();
    },
    end(code, reason) {
      const text = closeReason(reason);
      // On the next turn: the socket may end it from a promise job (see closeAll).
      setImmediate(() => {
        if (!connection.closed) ws.end(code, text);
      });
    },
  };
}
