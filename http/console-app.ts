import type { HttpRequest, HttpResponse, TemplatedApp } from '@trufflesuite/uws-js-unofficial';
import type { EngineApi } from '../engine/api';
import { errorResponse } from '../engine/error-answer';
import { ServiceError } from '../engine/errors';
import { newRequestId } from '../engine/request-id';
import { addConsoleRoutes } from './console';
import { addConsoleInvokeRoute } from './console-invoke';
import type { ActiveCounter } from './in-flight';
import { addLiveLogsRoute, logsAccess } from './live-logs';
import { addManagementRoutes } from './management/index';
import type { Peers } from './peers';
import { type Connections, writeResponse, type ResponseState } from './respond';

/** Every answer of these routes is JSON or plain text that no browser may take for a page. */
const NOSNIFF = { 'x-content-type-options': 'nosniff' };

/**
 * The console's port, an origin of its own: the console's files and what they call (the
 * management API, the live logs, the invoke route), and never a function's answer, so that no
 * tenant's page can run in the origin that keeps the signed-in key. `functionUrl` is where
 * functions are answered, for the message of a call sent here.
 */
export function addConsolePortRoutes(app: TemplatedApp, engine: EngineApi, counter: ActiveCounter, connections: Connections, functionUrl: () => string, peers?: Peers): void {
  addConsoleRoutes(app, connections);
  addConsoleInvokeRoute(app, engine, counter, connections);
  addManagementRoutes(app, engine, counter, connections, peers);
  addLiveLogsRoute(app, engine, connections, logsAccess(engine));
  app.get('/', (res) => writeResponse(res, connections.watch(res), 302, { location: '/console/', 'content-type': 'text/plain; charset=utf-8', ...NOSNIFF }, 'The console is at /console/\n', false));
  app.any('/v2/run/*', (res) => {
    const message = `functions are not answered on the console's port: call them on the function port, ${functionUrl()}/v2/run/<account>/<function>`;
    answerError(res, connections.watch(res), new ServiceError('ERR_NOT_FOUND', message));
  });
  app.any('/*', (res, req) => answerError(res, connections.watch(res), new ServiceError('ERR_NOT_FOUND', `no route for ${req.getUrl()} on the console's port`)));
}

/**
 * The function port's /console: a redirect to the console's origin, which `locate` gives for the
 * Host the request was sent to (undefined when this server serves no console).
 */
export function addConsoleRedirect(app: TemplatedApp, connections: Connections, locate: (host: string) => string | undefined): void {
  const redirect = (res: HttpResponse, req: HttpRequest) => {
    const state = connections.watch(res);
    const where = locate(req.getHeader('host'));
    if (where === undefined) {
      answerError(res, state, new ServiceError('ERR_NOT_FOUND', 'this server serves no console (it was started with --console-port 0)'));
      return;
    }
    writeResponse(res, state, 302, { location: where, 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store', ...NOSNIFF }, `The console is at ${where}\n`, false);
  };
  app.get('/console', redirect);
  app.get('/console/*', redirect);
}

// eslint-disable-next-line @typescript-eslint/no-var-requires
const { version } = require('../../package.json') as { version: string };

/**
 * The function port's `/`: what this server is and where its console is, instead of a JSON 404. A
 * browser (asking for HTML) is sent on to the console; anything else reads the text.
 */
export function addFunctionPortRoot(app: TemplatedApp, connections: Connections, locate: (host: string) => string | undefined): void {
  app.any('/', (res, req) => {
    const state = connections.watch(res);
    const method = req.getMethod();
    if (method !== 'get' && method !== 'head') {
      answerError(res, state, new ServiceError('ERR_NOT_FOUND', `no route for ${method.toUpperCase()} /: functions are called at /v2/run/<account>/<function>`));
      return;
    }
    const where = locate(req.getHeader('host'));
    const text =
      `islet ${version}: functions run at /v2/run/<account>/<function> on this port.\n` +
      `The web console: ${where ?? 'none (this server was started with --console-port 0)'}\n` +
      'Health: /healthz. The management API, the CLI and the rest: see the README.\n';
    const headers = { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store', ...NOSNIFF };
    if (where !== undefined && /\btext\/html\b/.test(req.getHeader('accept'))) writeResponse(res, state, 302, { ...headers, location: where }, text, method === 'head');
    else writeResponse(res, state, 200, headers, text, method === 'head');
  });
}

/** The host name of a Host header (`example.com:8080`, `[::1]:8080`), or undefined when it is not one. */
export function hostNameOf(host: string): string | undefined {
  return /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)(?::\d{1,5})?$/.exec(host)?.[1];
}

function answerError(res: HttpResponse, state: ResponseState, err: ServiceError): void {
  const response = errorResponse(err, newRequestId(), 0);
  writeResponse(res, state, response.status, { ...response.headers, ...NOSNIFF, 'x-service-request-id': response.requestId }, response.body, false);
}
