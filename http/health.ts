import type { TemplatedApp } from '@trufflesuite/uws-js-unofficial';
import type { ManagementApi } from '../engine/api';
import { errorResponse, responseHeaders } from '../engine/error-answer';
import { ServiceError } from '../engine/errors';
import { newRequestId } from '../engine/request-id';
import { isMetricsToken } from './bearer';
import { type Connections, writeResponse } from './respond';

/**
 * `GET /healthz`. To anyone: `{"status":"ok"}`, all a load balancer needs. With the server's
 * metrics token (`Authorization: Bearer …`): everything, as the operator sees it (the warm caches,
 * the store with its description, the workers with their pids and memory). With an admin key of
 * an account: what concerns that account and nothing of the host or of other accounts (the store's
 * state but not its description, the runtimes, the account's functions and its warm instances in
 * the answering worker). Data directories, pids and other accounts' counts helped an attacker
 * learn the host, and the store's description names the database.
 */
export function addHealthRoute(app: TemplatedApp, engine: ManagementApi, connections: Connections, token: string | undefined, more: (() => Promise<Record<string, unknown>>) | undefined): void {
  app.get('/healthz', (res, req) => {
    const authorization = req.getHeader('authorization');
    const apiKey = req.getHeader('x-service-api-key');
    const state = connections.watch(res);
    const answer = async (): Promise<Record<string, unknown>> => {
      if (authorization) {
        if (!isMetricsToken(authorization, token)) throw new ServiceError('ERR_BAD_KEY', "the bearer token is not this server's metrics token");
        const own = { status: 'ok', ...engine.stats() };
        if (!more) return own;
        return { ...own, ...(await more().catch((err: unknown) => ({ healthError: (err as Error).message }))) };
      }
      if (apiKey) {
        const { accountId } = engine.identify(apiKey);
        engine.authorize(accountId, apiKey, 'admin');
        return accountHealth(engine, accountId);
      }
      return { status: 'ok' };
    };
    answer().then(
      (body) => writeResponse(res, state, 200, { 'content-type': 'application/json' }, JSON.stringify(body), false),
      (err: unknown) => {
        const response = errorResponse(err, newRequestId(), 0);
        writeResponse(res, state, response.status, responseHeaders(response), response.body, false);
      },
    );
  });
}

function accountHealth(engine: ManagementApi, accountId: string): Record<string, unknown> {
  const { store, runtimes } = engine.stats();
  const { kind, state } = store;
  let warmInstances = 0;
  let warmMb = 0;
  for (const [fn, warm] of engine.warmByFunction()) {
    if (!fn.startsWith(`${accountId}/`)) continue;
    warmInstances += warm.instances;
    warmMb += warm.mb;
  }
  return {
    status: 'ok',
    store: { kind, state },
    runtimes,
    account: { id: accountId, functions: engine.list(accountId).length, warmInstances, warmMemoryBytes: Math.round(warmMb * 1024 * 1024) },
  };
}
