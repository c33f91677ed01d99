import type { TemplatedApp } from '@trufflesuite/uws-js-unofficial';
import type { ManagementApi } from '../../engine/api';
import type { Peers } from '../peers';
import type { ActiveCounter } from '../in-flight';
import type { Connections } from '../respond';
import { Routes } from './common';
import { addFunctionRoutes } from './functions';
import { addJobRoutes } from './jobs';
import { addKeyRoutes } from './keys';
import { addStatsRoute } from './stats';
import { addVersionRoutes } from './versions';

/**
 * The management API under /v2 (JSON; same key header and error shape as invocations; routes in
 * the README). Every route of an account needs one of its admin keys: an invoke key is 403
 * ERR_FORBIDDEN, another account's key 403 ERR_BAD_KEY. Keys are checked by the engine's admission,
 * as calls are.
 */
export function addManagementRoutes(app: TemplatedApp, engine: ManagementApi, counter: ActiveCounter, connections: Connections, peers?: Peers): void {
  const routes = new Routes(app, engine, counter, connections, peers);
  addKeyRoutes(routes);
  addFunctionRoutes(routes);
  addVersionRoutes(routes);
  addStatsRoute(routes);
  addJobRoutes(routes);
}
