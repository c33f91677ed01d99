import type { HttpRequest, HttpResponse, TemplatedApp } from '@trufflesuite/uws-js-unofficial';
import type { AsyncRequest, CallApi } from '../engine/api';
import { errorResponse, responseHeaders } from '../engine/error-answer';
import { ServiceError } from '../engine/errors';
import { checkName } from '../engine/names';
import { newRequestId } from '../engine/request-id';
import { hasBody, readBody, readCallHeaders } from './body';
import type { ActiveCounter } from './in-flight';
import { writeResponse, type Connections, type ResponseState } from './respond';

const ASYNC_PREFIX = '/v2/async/';

/**
 * `/v2/async/<account>/<fn>[/<rest>]`: a call accepted now and run later (engine/jobs). It takes
 * what `/v2/run` takes (method, path, query, headers, body) and the same key rules, checked before
 * any byte of the body is read (a refusal is answered at once, the connection then closed); then
 * the invocation is stored durably and the answer is `202 {"invocationId"}`.
 */
export function addAsyncRoute(app: TemplatedApp, engine: CallApi, counter: ActiveCounter, connections: Connections): void {
  app.any('/v2/async/*', (res, req) => handleAsync(engine, res, req, counter, connections));
}

function handleAsync(engine: CallApi, res: HttpResponse, req: HttpRequest, counter: ActiveCounter, connections: Connections): void {
  const call = readAsyncCall(req);
  const state: ResponseState = { aborted: false, connections };
  res.onAborted(() => (state.aborted = true));
  counter.begin();
  const requestId = newRequestId();
  const answer = (status: number, headers: Record<string, string>, body: string, refuseBody = false) => {
    writeResponse(res, state, status, headers, body, false, refuseBody);
    counter.end();
  };
  const fail = (err: unknown, refuseBody = false) => {
    const response = errorResponse(err, requestId, 0);
    answer(response.status, responseHeaders(response), String(response.body), refuseBody);
  };
  try {
    checkName('account', call.accountId);
    checkName('function', call.functionName);
    engine.checkAsync(call);
  } catch (err) {
    fail(err, hasBody(call.headers));
    return;
  }
  const limit = engine.limits.requestBodyBytes;
  readBody(
    res,
    call.headers,
    limit,
    (body) => {
      engine.acceptAsync({ ...call, body }).then(
        (invocationId) => answer(202, { 'content-type': 'application/json', 'X-Service-Request-ID': requestId, 'X-Service-Duration-Usecs': '0.000' }, JSON.stringify({ invocationId })),
        (err: unknown) => fail(err),
      );
    },
    () => fail(new ServiceError('ERR_PAYLOAD_TOO_LARGE', `the request body is over the limit of ${limit} bytes`), true),
  );
}

function readAsyncCall(req: HttpRequest): AsyncRequest {
  const rest = req.getUrl().slice(ASYNC_PREFIX.length);
  const slash = rest.indexOf('/');
  const accountId = slash === -1 ? rest : rest.slice(0, slash);
  const afterAccount = slash === -1 ? '' : rest.slice(slash + 1);
  const slash2 = afterAccount.indexOf('/');
  const functionName = slash2 === -1 ? afterAccount : afterAccount.slice(0, slash2);
  // The key is handed on apart: a queued run never sees it in its headers, as a call does not.
  const { headers, apiKey } = readCallHeaders(req);
  return {
    method: req.getMethod().toUpperCase(),
    accountId: decode(accountId),
    functionName: decode(functionName),
    apiKey,
    path: slash2 === -1 ? '/' : afterAccount.slice(slash2),
    rawQuery: req.getQuery() ?? '',
    headers,
    body: Buffer.alloc(0),
  };
}

function decode(segment: string): string {
  if (!segment.includes('%')) return segment;
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
