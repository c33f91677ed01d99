import type { HttpResponse, TemplatedApp } from '@trufflesuite/uws-js-unofficial';
import type { ApiKeyRecord, KeyScope, ManagementApi } from '../../engine/api';
import { errorResponse, responseHeaders } from '../../engine/error-answer';
import { ServiceError } from '../../engine/errors';
import { newRequestId } from '../../engine/request-id';
import { hasBody, readBody, readHeaders } from '../body';
import type { ActiveCounter } from '../in-flight';
import type { Peers } from '../peers';
import { writeResponse, type Connections, type ResponseState } from '../respond';
import { routeNames, type RouteNames } from '../route-names';

/** A management answer: a status and a JSON body. */
export interface Answer {
  status: number;
  body: unknown;
}

/** What a route's handler gets: the request's parts, read while uWS still holds them. */
export interface RouteContext {
  account: string;
  /** The function's or the key's name in the URL (`:function`, `:key`), decoded and checked. */
  name: string;
  query: URLSearchParams;
  headers: Record<string, string>;
  /** The JSON body of a POST or PUT (`{}` when empty). */
  body: Record<string, unknown>;
  /** The key that was accepted. */
  key: ApiKeyRecord;
}

/** JSON bodies of management requests (not deploys) are small. */
const JSON_BODY_LIMIT = 64 * 1024;

type Method = 'get' | 'post' | 'put' | 'del';

/** What the management routes are added with: the app, the engine, and the server's count of requests in flight. */
export class Routes {
  constructor(
    readonly app: TemplatedApp,
    readonly engine: ManagementApi,
    private readonly counter: ActiveCounter,
    /** The server's connections, which its answers close once it drains. */
    readonly connections: Connections,
    /** The other workers, whose figures add to this one's. */
    readonly peers: Peers | undefined,
  ) {}

  /**
   * Adds a JSON route under `/v2/accounts/:account/…` that needs a key of `scope` for that account
   * (checked by the engine's admission, as calls are). The pattern declares its names (`:account`,
   * `:function`, `:key`: see route-names.ts), which are checked first, before anything reads them.
   * Then it reads the request, checks the key, runs `handler`, and answers its JSON or the JSON
   * error of whatever it threw.
   */
  account(method: Method, pattern: string, scope: KeyScope, handler: (ctx: RouteContext) => Promise<Answer> | Answer): void {
    const readNames = routeNames(pattern);
    this.app[method](pattern, (res, req) => {
      const names = readNames(req);
      const headers = readHeaders(req);
      const query = new URLSearchParams(req.getQuery() ?? '');
      const state: ResponseState = { aborted: false, connections: this.connections };
      res.onAborted(() => (state.aborted = true));
      // Counted from the start, so that a drain waits for a body still arriving.
      this.counter.begin();
      const key = this.admit(res, state, names, headers, scope);
      if (!key) return;
      const { account, name } = names;
      const answer = (work: () => Promise<Answer>, refuseBody = false) => this.respond(res, state, work, true, refuseBody);
      const run = (body: Record<string, unknown>) => answer(async () => handler({ account, name, query, headers, body, key }));
      if (method === 'get' || method === 'del') return run({});
      readBody(
        res,
        headers,
        JSON_BODY_LIMIT,
        (raw) => {
          let body: unknown = {};
          try {
            if (raw.length > 0) body = JSON.parse(raw.toString('utf8'));
          } catch {
            return answer(() => Promise.reject(new ServiceError('ERR_BAD_REQUEST', 'the request body is not valid JSON')));
          }
          if (typeof body !== 'object' || body === null || Array.isArray(body)) {
            return answer(() => Promise.reject(new ServiceError('ERR_BAD_REQUEST', 'the request body must be a JSON object')));
          }
          run(body as Record<string, unknown>);
        },
        () => answer(() => Promise.reject(new ServiceError('ERR_PAYLOAD_TOO_LARGE', `the request body is over the limit of ${JSON_BODY_LIMIT} bytes`)), true),
      );
    });
  }

  /**
   * What every route checks before it reads a request's body: the names in its URL, then the key
   * (its account and scope). Answers the key, or refuses at once (see `refuse`) and answers
   * undefined. A body is read only for a key that may use it: buffered before the key was checked,
   * six concurrent keyless 100 MiB deploys took two workers from 80 MB to 650 MB.
   */
  admit(res: HttpResponse, state: ResponseState, names: RouteNames, headers: Record<string, string>, scope: KeyScope): ApiKeyRecord | undefined {
    try {
      names.check();
      return this.engine.authorize(names.account, headers['x-service-api-key'], scope);
    } catch (err) {
      this.refuse(res, state, err, headers);
      return undefined;
    }
  }

  /**
   * Answers a counted request with the JSON error of `err` now, without reading its body; when a
   * body was declared, reading stops and the connection closes (see writeResponse's `refuseBody`).
   */
  refuse(res: HttpResponse, state: ResponseState, err: unknown, headers: Record<string, string>): void {
    const response = errorResponse(err, newRequestId(), 0);
    writeResponse(res, state, response.status, responseHeaders(response), response.body, false, hasBody(headers));
    this.counter.end();
  }

  /** Counts a request as in flight from now (one whose body is still to come); answer it with `respond(…, true)`. */
  begin(): void {
    this.counter.begin();
  }

  /**
   * Answers with `work`'s JSON, or the JSON error of whatever it threw; the request counts as in
   * flight until then (`counted`: it was counted already, from its start). `refuseBody`: the answer
   * refuses a body that is still coming (see writeResponse's `refuseBody`).
   */
  respond(res: HttpResponse, state: ResponseState, work: () => Promise<Answer>, counted = false, refuseBody = false): void {
    if (!counted) this.counter.begin();
    const requestId = newRequestId();
    work()
      .then(
        ({ status, body }) =>
          writeResponse(res, state, status, { 'content-type': 'application/json', 'X-Service-Request-ID': requestId, 'X-Service-Duration-Usecs': '0.000' }, JSON.stringify(body), false, refuseBody),
        (err: unknown) => {
          const response = errorResponse(err, requestId, 0);
          writeResponse(res, state, response.status, responseHeaders(response), response.body, false, refuseBody);
        },
      )
      .finally(() => this.counter.end());
  }
}
