import { ServiceError } from '../../engine/errors';
import { LOG_LEVELS } from '../../engine/logs';
import { describeFunction } from '../../engine/manifest';
import { readHeaders } from '../body';
import type { ResponseState } from '../respond';
import { routeNames } from '../route-names';
import type { Routes } from './common';
import { receiveUpload, type ReceivedUpload, type Upload } from './upload';

/** Functions: list, describe, deploy, remove, logs. */
export function addFunctionRoutes(r: Routes): void {
  const { app, engine } = r;
  r.account('get', '/v2/accounts/:account/functions', 'admin', ({ account }) => ({ status: 200, body: { functions: engine.list(account) } }));

  r.account('get', '/v2/accounts/:account/functions/:function', 'admin', ({ account, name }) => {
    return { status: 200, body: { function: engine.existing(account, name) } };
  });

  // ?since=<ms>&limit=<n>&level=<level>; &local=1: this node's lines only (how one node reads the others').
  r.account('get', '/v2/accounts/:account/functions/:function/logs', 'admin', async ({ account, name, query, headers }) => {
    engine.existing(account, name);
    const since = query.get('since');
    const limit = query.get('limit');
    const level = query.get('level') ?? undefined;
    if (level !== undefined && !(level in LOG_LEVELS)) throw new ServiceError('ERR_BAD_REQUEST', `unknown log level ${JSON.stringify(level)} (expected one of ${Object.keys(LOG_LEVELS).join(', ')})`);
    const range = {
      since: since === null ? undefined : Number(since),
      limit: limit === null ? undefined : Math.max(1, Math.min(Number(limit) || 1000, 100_000)),
      level,
    };
    const entries = query.get('local') === '1' ? await engine.readLocalLogs(account, name, range) : await engine.readLogs(account, name, range, headers['x-service-api-key']);
    return { status: 200, body: { entries } };
  });

  r.account('del', '/v2/accounts/:account/functions/:function', 'admin', async ({ account, name }) => {
    engine.existing(account, name);
    await engine.remove(account, name);
    return { status: 200, body: { removed: name } };
  });

  const deployRoute = '/v2/accounts/:account/functions/:function';
  const readNames = routeNames(deployRoute);
  app.put(deployRoute, (res, req) => {
    const names = readNames(req);
    const headers = readHeaders(req);
    const state: ResponseState = { aborted: false, connections: r.connections };
    let upload: Upload | undefined;
    res.onAborted(() => {
      state.aborted = true;
      upload?.abort();
    });
    // Counted from the start of the upload, so that a drain waits for it.
    r.begin();
    if (!r.admit(res, state, names, headers, 'admin')) return;
    const { account, name } = names;
    const limit = engine.limits.bundleBytes;
    if (Number(headers['content-length']) > limit) return r.refuse(res, state, new ServiceError('ERR_PAYLOAD_TOO_LARGE', `the bundle is over the limit of ${limit} bytes`), headers);
    const deploy = async (received: ReceivedUpload) => {
      const { spec, message, percent } = readDeployFields(received);
      if (spec.name !== undefined && spec.name !== name) throw new ServiceError('ERR_BAD_REQUEST', `the spec names ${String(spec.name)} but the URL names ${name}`);
      const previous = engine.describe(account, name);
      const manifest = await engine.deploy(account, { ...spec, name }, { tarballFile: received.bundleFile! }, { message, percent });
      const traffic = engine.traffic(account, name);
      return { status: previous ? 200 : 201, body: { function: describeFunction(manifest, traffic) } };
    };
    upload = receiveUpload(res, state, headers, limit, engine.stagingDir);
    upload.received.then(
      (received) => r.respond(res, state, () => deploy(received).finally(() => received.discard()), true),
      // Refused before the body ended (over the limit, not a form): the rest is not read.
      (err: unknown) => r.refuse(res, state, err, headers),
    );
  });
}

/** A deploy's fields: `spec` (JSON), optional `message` and `percent`; and there must be a `bundle` file. */
function readDeployFields(upload: ReceivedUpload): { spec: Record<string, unknown>; message: string | undefined; percent: string | undefined } {
  const specText = upload.fields.spec;
  if (specText === undefined) throw new ServiceError('ERR_BAD_REQUEST', 'the deploy upload has no spec field');
  if (upload.bundleFile === undefined) throw new ServiceError('ERR_BAD_REQUEST', 'the deploy upload has no bundle file');
  let spec: unknown;
  try {
    spec = JSON.parse(specText);
  } catch {
    throw new ServiceError('ERR_BAD_REQUEST', 'the spec field is not valid JSON');
  }
  if (typeof spec !== 'object' || spec === null || Array.isArray(spec)) throw new ServiceError('ERR_BAD_REQUEST', 'the spec field must be a JSON object');
  return { spec: spec as Record<string, unknown>, message: upload.fields.message, percent: upload.fields.percent };
}
