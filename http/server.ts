import type { HttpRequest, HttpResponse, TemplatedApp, us_listen_socket } from '@trufflesuite/uws-js-unofficial';
import { isBodyStream } from '../engine/body-stream';
import type { CallApi, ClientGone, EngineApi, InvokeRequest, InvokeResponse } from '../engine/api';
import { errorResponse } from '../engine/error-answer';
import { ServiceError } from '../engine/errors';
import { newRequestId } from '../engine/request-id';
import { wholeBodyTooLarge } from '../engine/request-body';
import { UwsRequestBody } from './request-body';
import { writeAnswerHeaders } from './answer';
import { hasBody, readBody, readCallHeaders } from './body';
import { addConsolePortRoutes, addConsoleRedirect, addFunctionPortRoot, hostNameOf } from './console-app';
import { addAsyncRoute } from './async';
import { addHealthRoute } from './health';
import { addLiveLogsRoute, logsAccess } from './live-logs';
import { addManagementRoutes } from './management/index';
import { addMetricsRoute } from './metrics';
import type { Peers } from './peers';
import { ActiveCounter, quiet } from './in-flight';
import { Connections, statusLine, writeBody, type ResponseState } from './respond';
import { writeStream } from './stream-answer';
import { loadUws, type Uws } from './uws';
import { addWebSocketRoute } from './websockets';

export interface ServerOptions {
  engine: EngineApi;
  host: string;
  /** 0 picks a free port. */
  port: number;
  /** More for `/healthz`, as the operator sees it (a worker adds its siblings). */
  health?: () => Promise<Record<string, unknown>>;
  /** The bearer token that reads every metric at `/metrics` and everything of `/healthz` (without it, accounts' admin keys read their own). */
  metricsToken?: string;
  /** The other workers on the port: `/metrics` and function stats add their figures up. */
  peers?: Peers;
  /** The console's own port (0 picks a free one). Without it the server serves no console. */
  consolePort?: number;
  /**
   * Where browsers reach the console (`https://console.example.com`, behind a proxy), for the
   * function port's /console redirect; default `http://<the host the request named>:<consolePort>`.
   */
  consoleOrigin?: string;
}

export interface RunningServer {
  port: number;
  url: string;
  /** The console's port and its address on this machine (undefined: no console). */
  consolePort: number | undefined;
  consoleUrl: string | undefined;
  /** Requests being answered now. */
  readonly active: number;
  close(): void;
  /**
   * Stops taking connections and resolves once the requests in flight are answered (each within
   * its own timeout) and no call has come for a second; responses from then on close their
   * connection, so clients go elsewhere.
   */
  drain(): Promise<void>;
  /** Resolves once no request has been in flight for a moment (after `drain`, to wait for stragglers). */
  idle(): Promise<void>;
}

const RUN_PREFIX = '/v2/run/';

/**
 * A draining server answers on its open connections until none has brought a call for this long:
 * a client's idle kept-alive connection may carry one more call at any moment, and uWS offers no
 * way to close the idle ones (each answer from then on closes its connection).
 */
const DRAIN_LINGER_MS = 1000;
/** What `idle` waits for, once the linger is over: the stragglers that came meanwhile. */
const IDLE_MS = 100;

const NO_BODY = Buffer.alloc(0);

/**
 * Bodies of at most this many bytes, by their Content-Length, are read before the call starts and
 * go into the isolate with it, in one entry (the fast path of small bodies). Larger ones and chunked
 * ones start the call at once and stream: the function reads them as they arrive (request.body), or
 * whole once they are in (request.json()), one copy either way.
 */
const READ_FIRST_BYTES = 64 * 1024;

/**
 * Starts the HTTP server: `/v2/run/…` invocations, the management API, `/metrics` and `/healthz`
 * on the function port, and the web console on a port of its own (http/console-app.ts).
 */
export async function startServer(options: ServerOptions): Promise<RunningServer> {
  const uws = loadUws();
  const { engine } = options;
  const app: TemplatedApp = uws.App();
  const counter = new ActiveCounter();
  const connections = new Connections();
  const shownHost = options.host === '0.0.0.0' || options.host === '::' ? '127.0.0.1' : options.host;
  const urlOf = (port: number) => `http://${shownHost.includes(':') ? `[${shownHost}]` : shownHost}:${port}`;
  let port = 0;
  let consolePort: number | undefined;

  // First: uWS gives it the GETs that ask for a WebSocket, and every other request to the next route.
  const webSockets = addWebSocketRoute(app, engine, counter, connections, { readCall, send });
  app.any('/v2/run/*', (res, req) => handleRun(engine, res, req, counter, connections));
  addAsyncRoute(app, engine, counter, connections);
  addManagementRoutes(app, engine, counter, connections, options.peers);
  addMetricsRoute(app, engine, connections, options.metricsToken, options.peers);
  addLiveLogsRoute(app, engine, connections, logsAccess(engine));
  const consoleAt = (host: string): string | undefined => {
    if (options.consoleOrigin !== undefined) return `${options.consoleOrigin}/console/`;
    if (consolePort === undefined) return undefined;
    const name = hostNameOf(host);
    return `${name === undefined ? urlOf(consolePort) : `http://${name}:${consolePort}`}/console/`;
  };
  addConsoleRedirect(app, connections, consoleAt);
  addFunctionPortRoot(app, connections, consoleAt);
  addHealthRoute(app, engine, connections, options.metricsToken, options.health);
  app.any('/*', (res, req) => {
    const head = req.getMethod() === 'head';
    const url = req.getUrl();
    const state = connections.watch(res);
    send(res, state, errorResponse(new ServiceError('ERR_NOT_FOUND', `no route for ${url}`), newRequestId(), 0), head, () => undefined);
  });

  const main = await listen(uws, app, options.host, options.port, 'the port');
  port = main.port;
  engine.addSelfPort(port);
  const sockets = [main.socket];
  if (options.consolePort !== undefined) {
    const consoleApp: TemplatedApp = uws.App();
    addConsolePortRoutes(consoleApp, engine, counter, connections, () => urlOf(port), options.peers);
    try {
      const own = await listen(uws, consoleApp, options.host, options.consolePort, "the console's port");
      consolePort = own.port;
      sockets.push(own.socket);
    } catch (err) {
      uws.us_listen_socket_close(main.socket);
      throw err;
    }
  }
  let listening = true;
  const stopListening = () => {
    if (listening) for (const socket of sockets) uws.us_listen_socket_close(socket);
    listening = false;
    // Functions' WebSockets close with 1001, Going Away: clients reconnect, to another worker.
    webSockets.closeAll(1001, 'the server is going away');
  };
  return {
    port,
    url: urlOf(port),
    consolePort,
    consoleUrl: consolePort === undefined ? undefined : urlOf(consolePort),
    get active() {
      return counter.active;
    },
    close: stopListening,
    drain: () => {
      stopListening();
      connections.closing = true;
      return quiet(counter, DRAIN_LINGER_MS);
    },
    idle: () => quiet(counter, IDLE_MS),
  };
}

function listen(uws: Uws, app: TemplatedApp, host: string, port: number, what: string): Promise<{ socket: us_listen_socket; port: number }> {
  return new Promise((resolve, reject) => {
    app.listen(host, port, (socket: us_listen_socket | false) => {
      if (socket) resolve({ socket, port: uws.us_socket_local_port(socket) });
      else reject(new Error(`cannot listen on ${host}:${port}, ${what} (is it in use?)`));
    });
  });
}

/**
 * Writes an invocation's response with its `X-Service-*` headers (http/answer.ts); `done` once it is
 * written (a streamed body, when it ends).
 */
function send(res: HttpResponse, state: ResponseState, response: InvokeResponse, head: boolean, done: () => void): void {
  const body = response.body;
  if (state.aborted) {
    if (isBodyStream(body)) body.cancel('the client closed the connection');
    done();
    return;
  }
  res.cork(() => {
    res.writeStatus(statusLine(response.status));
    writeAnswerHeaders(res, response);
    if (isBodyStream(body)) writeStream(res, state, body, head, done);
    else {
      writeBody(res, state, body, head);
      done();
    }
  });
}

/** Reads a call from uWS (whose request object is only valid synchronously); the body comes later. */
function readCall(req: HttpRequest): InvokeRequest {
  const url = req.getUrl();
  const rest = url.slice(RUN_PREFIX.length);
  const slash = rest.indexOf('/');
  const accountId = slash === -1 ? rest : rest.slice(0, slash);
  const afterAccount = slash === -1 ? '' : rest.slice(slash + 1);
  const slash2 = afterAccount.indexOf('/');
  const functionName = slash2 === -1 ? afterAccount : afterAccount.slice(0, slash2);
  const path = slash2 === -1 ? '/' : afterAccount.slice(slash2);
  const { headers, apiKey } = readCallHeaders(req);
  return {
    method: req.getMethod().toUpperCase(),
    accountId: safeDecode(accountId),
    functionName: safeDecode(functionName),
    apiKey,
    path,
    rawQuery: req.getQuery() ?? '',
    headers,
    body: NO_BODY,
  };
}

function safeDecode(segment: string): string {
  // Without a '%' there is nothing to decode (the common case, and decodeURIComponent is not free).
  if (!segment.includes('%')) return segment;
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

function handleRun(engine: CallApi, res: HttpResponse, req: HttpRequest, counter: ActiveCounter, connections: Connections): void {
  const call = readCall(req);
  const state: ResponseState = { aborted: false, connections };
  const gone: ClientGone = {};
  call.clientGone = gone;
  let streamed: UwsRequestBody | undefined;
  res.onAborted(() => {
    state.aborted = true;
    streamed?.aborted();
    state.onAbort?.();
    gone.onGone?.();
  });
  const head = call.method === 'HEAD';
  const { requestBodyBytes, streamedRequestBodyBytes } = engine.limits;
  counter.begin();
  const end = () => counter.end();
  const refuse = (error: ServiceError) => {
    const response = errorResponse(error, newRequestId(), 0);
    send(res, state, { ...response, headers: { ...response.headers, connection: 'close' } }, head, end);
  };
  const declared = call.headers['content-length'];
  const size = declared === undefined ? undefined : Number(declared);
  if (hasBody(call.headers) && (size === undefined || size > READ_FIRST_BYTES)) {
    // A declared size over the streamed limit is the engine's to refuse (admission, after the key): one check, one 413.
    const body = (streamed = new UwsRequestBody(res, size, streamedRequestBodyBytes));
    call.body = body;
    state.onWrite = (phase) => body.answerWrites(phase);
    engine.dispatch(call, (response) => {
      if (!body.complete) {
        // Answered while the body is still coming: the rest is not read, so the connection cannot carry another request.
        response = { ...response, headers: { ...response.headers, connection: 'close' } };
        if (!isBodyStream(response.body)) body.cancel();
      }
      send(res, state, response, head, () => {
        body.answered();
        end();
      });
    });
    return;
  }
  readBody(
    res,
    call.headers,
    requestBodyBytes,
    (body) => {
      call.body = body;
      engine.dispatch(call, (response) => send(res, state, response, head, end));
    },
    () => refuse(wholeBodyTooLarge(requestBodyBytes, size)),
  );
}
