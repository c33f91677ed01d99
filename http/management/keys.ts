import { describeKey } from '../../engine/describe';
import { readHeaders } from '../body';
import type { ResponseState } from '../respond';
import type { Routes } from './common';

/** Keys: whoami (any key), and list, create, revoke (admin keys). */
export function addKeyRoutes(r: Routes): void {
  const { app, engine } = r;
  app.get('/v2/whoami', (res, req) => {
    const headers = readHeaders(req);
    const state: ResponseState = { aborted: false, connections: r.connections };
    res.onAborted(() => (state.aborted = true));
    r.respond(res, state, async () => {
      const { accountId, key } = engine.identify(headers['x-service-api-key']);
      return { status: 200, body: { accountId, key: { name: key.name, scope: key.scope } } };
    });
  });

  r.account('get', '/v2/accounts/:account/keys', 'admin', async ({ account, query }) => ({
    status: 200,
    body: { keys: await engine.keys(account, query.get('all') === 'true') },
  }));

  r.account('post', '/v2/accounts/:account/keys', 'admin', async ({ account, body }) => {
    const { apiKey, key } = await engine.createKey(account, { name: body.name, scope: body.scope });
    return { status: 201, body: { apiKey, key: describeKey(key) } };
  });

  r.account('del', '/v2/accounts/:account/keys/:key', 'admin', async ({ account, name }) => ({
    status: 200,
    body: { revoked: describeKey(await engine.revokeKey(account, name)) },
  }));
}
