import type { HttpRequest, HttpResponse, TemplatedApp } from '@trufflesuite/uws-js-unofficial';
import busboy from 'busboy';
import { errorResponse, responseHeaders, type Engine } from '../engine/engine';
import { ServiceError } from '../engine/errors';
import { describeFunction } from '../engine/manifest';
import { newRequestId } from '../engine/request-id';
import { readBody, readHeaders } from './body';
import { writeResponse, type ResponseState } from './respond';

/**
 * The management API under /v2 (JSON; same key header and error shape as invocations):
 *
 *   GET    /v2/whoami                                       the key's account
 *   GET    /v2/accounts/<account>/functions                 list
 *   GET    /v2/accounts/<account>/functions/<name>          describe
 *   PUT    /v2/accounts/<account>/functions/<name>          deploy (multipart: `spec` JSON + `bundle` tar.gz)
 *   DELETE /v2/accounts/<account>/functions/<name>          remove
 *   GET    /v2/accounts/<account>/functions/<name>/logs     logs (?since=<ms>&limit=<n>; &local=1: this node's only)
 *
 * A key reaches only its own account: any other is 403 ERR_BAD_KEY.
 */
export function addManagementRoutes(app: TemplatedApp, engine: Engine, counter: { active: number }): void {
  const respond = responder(counter);
  app.get('/v2/whoami', (res, req) => {
    const headers = readHeaders(req);
    respond(res, async () => {
      const key = requireKey(headers);
      const accountId = engine.catalog.accountOfKey(key);
      if (!accountId) throw new ServiceError('ERR_BAD_KEY', 'the API key is not valid for any account');
      return { status: 200, body: { accountId } };
    });
  });

  app.get('/v2/accounts/:account/functions', (res, req) => {
    const { account, headers } = readRequest(req);
    respond(res, async () => {
      authorize(engine, account, headers);
      return { status: 200, body: { functions: engine.list(account).map(describeFunction) } };
    });
  });

  app.get('/v2/accounts/:account/functions/:name', (res, req) => {
    const { account, name, headers } = readRequest(req);
    respond(res, async () => {
      authorize(engine, account, headers);
      return { status: 200, body: { function: describeFunction(existing(engine, account, name)) } };
    });
  });

  app.get('/v2/accounts/:account/functions/:name/logs', (res, req) => {
    const { account, name, headers } = readRequest(req);
    const query = new URLSearchParams(req.getQuery() ?? '');
    respond(res, async () => {
      authorize(engine, account, headers);
      existing(engine, account, name);
      const since = query.get('since');
      const limit = query.get('limit');
      const range = {
        since: since === null ? undefined : Number(since),
        limit: limit === null ? undefined : Math.max(1, Math.min(Number(limit) || 1000, 100_000)),
      };
      // `local=1`: this node's lines only (how one node reads the others').
      const entries = query.get('local') === '1' ? await engine.logs.read(account, name, range) : await engine.readLogs(account, name, range, headers['x-service-api-key']);
      return { status: 200, body: { entries } };
    });
  });

  app.del('/v2/accounts/:account/functions/:name', (res, req) => {
    const { account, name, headers } = readRequest(req);
    respond(res, async () => {
      authorize(engine, account, headers);
      existing(engine, account, name);
      await engine.remove(account, name);
      return { status: 200, body: { removed: name } };
    });
  });

  app.put('/v2/accounts/:account/functions/:name', (res, req) => {
    const { account, name, headers } = readRequest(req);
    const state: ResponseState = { aborted: false };
    res.onAborted(() => (state.aborted = true));
    // Counted from the start of the upload, so that a drain waits for it.
    counter.active++;
    const limit = engine.limits.bundleBytes;
    const deploy = async (body: Buffer) => {
      authorize(engine, account, headers);
      const { spec, bundle } = await parseDeploy(headers, body);
      if (spec.name !== undefined && spec.name !== name) throw new ServiceError('ERR_BAD_REQUEST', `the spec names ${String(spec.name)} but the URL names ${name}`);
      const previous = engine.describe(account, name);
      const manifest = await engine.deploy(account, { ...spec, name }, { tarball: bundle });
      return { status: previous ? 200 : 201, body: { function: describeFunction(manifest) } };
    };
    readBody(
      res,
      headers,
      limit,
      (body) => respond(res, () => deploy(body), state, true),
      () => respond(res, async () => {
        throw new ServiceError('ERR_PAYLOAD_TOO_LARGE', `the bundle is over the limit of ${limit} bytes`);
      }, state, true),
    );
  });
}

function readRequest(req: HttpRequest): { account: string; name: string; headers: Record<string, string> } {
  return { account: req.getParameter(0) ?? '', name: decodeURIComponent(req.getParameter(1) ?? ''), headers: readHeaders(req) };
}

function requireKey(headers: Record<string, string>): string {
  const key = headers['x-service-api-key'];
  if (!key) throw new ServiceError('ERR_NO_KEY', 'send the account API key in the X-Service-Api-Key header');
  return key;
}

function authorize(engine: Engine, account: string, headers: Record<string, string>): void {
  const key = requireKey(headers);
  if (!engine.catalog.verifyKey(account, key)) throw new ServiceError('ERR_BAD_KEY', `the API key is not valid for account ${account}`);
}

function existing(engine: Engine, account: string, name: string) {
  const manifest = engine.describe(account, name);
  if (!manifest) throw new ServiceError('ERR_NO_SUCH_FUNCTION', `no function ${name} in account ${account}`);
  return manifest;
}

type Respond = (res: HttpResponse, work: () => Promise<{ status: number; body: unknown }>, state?: ResponseState, counted?: boolean) => void;

/** Answers with `work`'s JSON, or the JSON error of whatever it threw; counts the request as in flight until then. */
function responder(counter: { active: number }): Respond {
  return (res, work, state, counted = false) => {
    const s = state ?? { aborted: false };
    if (!state) res.onAborted(() => (s.aborted = true));
    if (!counted) counter.active++;
    const requestId = newRequestId();
    work()
      .then(
        ({ status, body }) => writeResponse(res, s, status, { 'content-type': 'application/json', 'X-Service-Request-ID': requestId, 'X-Service-Duration-Usecs': '0.000' }, JSON.stringify(body), false),
        (err: unknown) => {
          const response = errorResponse(err, requestId, 0);
          writeResponse(res, s, response.status, responseHeaders(response), response.body, false);
        },
      )
      .finally(() => counter.active--);
  };
}

/** Splits a deploy upload: a `spec` field (JSON) and a `bundle` file (tar.gz). */
function parseDeploy(headers: Record<string, string>, body: Buffer): Promise<{ spec: Record<string, unknown>; bundle: Buffer }> {
  return new Promise((resolve, reject) => {
    let specText: string | undefined;
    const chunks: Buffer[] = [];
    let sawBundle = false;
    let parser: busboy.Busboy;
    try {
      parser = busboy({ headers: { 'content-type': headers['content-type'] ?? '' }, limits: { files: 1, fields: 4, fieldSize: 1024 * 1024 } });
    } catch (err) {
      reject(new ServiceError('ERR_BAD_REQUEST', `a deploy is a multipart/form-data upload with a spec field and a bundle file: ${(err as Error).message}`));
      return;
    }
    parser.on('field', (name, value) => {
      if (name === 'spec') specText = value;
    });
    parser.on('file', (name, stream) => {
      if (name !== 'bundle') {
        stream.resume();
        return;
      }
      sawBundle = true;
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    });
    parser.on('error', (err: Error) => reject(new ServiceError('ERR_BAD_REQUEST', `unreadable deploy upload: ${err.message}`)));
    parser.on('close', () => {
      if (specText === undefined) return reject(new ServiceError('ERR_BAD_REQUEST', 'the deploy upload has no spec field'));
      if (!sawBundle) return reject(new ServiceError('ERR_BAD_REQUEST', 'the deploy upload has no bundle file'));
      let spec: unknown;
      try {
        spec = JSON.parse(specText);
      } catch {
        return reject(new ServiceError('ERR_BAD_REQUEST', 'the spec field is not valid JSON'));
      }
      if (typeof spec !== 'object' || spec === null || Array.isArray(spec)) return reject(new ServiceError('ERR_BAD_REQUEST', 'the spec field must be a JSON object'));
      resolve({ spec: spec as Record<string, unknown>, bundle: Buffer.concat(chunks) });
    });
    parser.end(body);
  });
}
