import busboy from 'busboy';
import type { Engine } from '../../engine/engine';
import { ServiceError } from '../../engine/errors';
import { LOG_LEVELS } from '../../engine/logs';
import { describeFunction } from '../../engine/manifest';
import { readBody } from '../body';
import type { ResponseState } from '../respond';
import { readHeaders } from '../body';
import { routeNames } from '../route-names';
import type { Routes } from './common';

/** Functions: list, describe, deploy, remove, logs. */
export function addFunctionRoutes(r: Routes): void {
  const { app, engine } = r;
  r.account('get', '/v2/accounts/:account/functions', 'admin', ({ account }) => ({ status: 200, body: { functions: engine.list(account) } }));

  r.account('get', '/v2/accounts/:account/functions/:function', 'admin', ({ account, name }) => {
    const entry = existing(engine, account, name);
    return { status: 200, body: { function: describeFunction(entry.primary, entry.record.traffic) } };
  });

  // ?since=<ms>&limit=<n>&level=<level>; &local=1: this node's lines only (how one node reads the others').
  r.account('get', '/v2/accounts/:account/functions/:function/logs', 'admin', async ({ account, name, query, headers }) => {
    existing(engine, account, name);
    const since = query.get('since');
    const limit = query.get('limit');
    const level = query.get('level') ?? undefined;
    if (level !== undefined && !(level in LOG_LEVELS)) throw new ServiceError('ERR_BAD_REQUEST', `unknown log level ${JSON.stringify(level)} (expected one of ${Object.keys(LOG_LEVELS).join(', ')})`);
    const range = {
      since: since === null ? undefined : Number(since),
      limit: limit === null ? undefined : Math.max(1, Math.min(Number(limit) || 1000, 100_000)),
      level,
    };
    const entries = query.get('local') === '1' ? await engine.logs.read(account, name, range) : await engine.readLogs(account, name, range, headers['x-service-api-key']);
    return { status: 200, body: { entries } };
  });

  r.account('del', '/v2/accounts/:account/functions/:function', 'admin', async ({ account, name }) => {
    existing(engine, account, name);
    await engine.remove(account, name);
    return { status: 200, body: { removed: name } };
  });

  const deployRoute = '/v2/accounts/:account/functions/:function';
  const readNames = routeNames(deployRoute);
  app.put(deployRoute, (res, req) => {
    const names = readNames(req);
    const { account, name } = names;
    const headers = readHeaders(req);
    const state: ResponseState = { aborted: false };
    res.onAborted(() => (state.aborted = true));
    // Counted from the start of the upload, so that a drain waits for it.
    r.begin();
    try {
      names.check();
    } catch (err) {
      return r.respond(res, state, () => Promise.reject(err), true);
    }
    const limit = engine.limits.bundleBytes;
    const deploy = async (body: Buffer) => {
      engine.admission.authorize(account, headers['x-service-api-key'], 'admin');
      const { spec, bundle, message, percent } = await parseDeploy(headers, body);
      if (spec.name !== undefined && spec.name !== name) throw new ServiceError('ERR_BAD_REQUEST', `the spec names ${String(spec.name)} but the URL names ${name}`);
      const previous = engine.describe(account, name);
      const manifest = await engine.deploy(account, { ...spec, name }, { tarball: bundle }, { message, percent });
      const traffic = engine.catalog.function(account, name)?.record.traffic;
      return { status: previous ? 200 : 201, body: { function: describeFunction(manifest, traffic) } };
    };
    readBody(
      res,
      headers,
      limit,
      (body) => r.respond(res, state, () => deploy(body), true),
      () => r.respond(res, state, () => Promise.reject(new ServiceError('ERR_PAYLOAD_TOO_LARGE', `the bundle is over the limit of ${limit} bytes`)), true),
    );
  });
}

export function existing(engine: Engine, account: string, name: string) {
  const entry = engine.catalog.function(account, name);
  if (!entry) throw new ServiceError('ERR_NO_SUCH_FUNCTION', `no function ${name} in account ${account}`);
  return entry;
}

interface DeployUpload {
  spec: Record<string, unknown>;
  bundle: Buffer;
  message: string | undefined;
  percent: string | undefined;
}

/** Splits a deploy upload: a `spec` field (JSON), a `bundle` file (tar.gz), optional `message` and `percent` fields. */
function parseDeploy(headers: Record<string, string>, body: Buffer): Promise<DeployUpload> {
  return new Promise((resolve, reject) => {
    const fields: Record<string, string> = {};
    const chunks: Buffer[] = [];
    let sawBundle = false;
    let parser: busboy.Busboy;
    try {
      parser = busboy({ headers: { 'content-type': headers['content-type'] ?? '' }, limits: { files: 1, fields: 8, fieldSize: 1024 * 1024 } });
    } catch (err) {
      reject(new ServiceError('ERR_BAD_REQUEST', `a deploy is a multipart/form-data upload with a spec field and a bundle file: ${(err as Error).message}`));
      return;
    }
    parser.on('field', (name, value) => {
      fields[name] = value;
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
      const specText = fields.spec;
      if (specText === undefined) return reject(new ServiceError('ERR_BAD_REQUEST', 'the deploy upload has no spec field'));
      if (!sawBundle) return reject(new ServiceError('ERR_BAD_REQUEST', 'the deploy upload has no bundle file'));
      let spec: unknown;
      try {
        spec = JSON.parse(specText);
      } catch {
        return reject(new ServiceError('ERR_BAD_REQUEST', 'the spec field is not valid JSON'));
      }
      if (typeof spec !== 'object' || spec === null || Array.isArray(spec)) return reject(new ServiceError('ERR_BAD_REQUEST', 'the spec field must be a JSON object'));
      resolve({ spec: spec as Record<string, unknown>, bundle: Buffer.concat(chunks), message: fields.message, percent: fields.percent });
    });
    parser.end(body);
  });
}
