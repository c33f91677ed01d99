import { ServiceError } from '../../engine/errors';
import { checkName } from '../../engine/names';
import type { Routes } from './common';

/**
 * Asynchronous invocations and schedules (engine/jobs): an invocation's record, a function's
 * recent invocations, the account's schedules with their next and last runs. Admin keys only, as
 * every management route: an invoke key may queue an invocation but not read its result.
 */
export function addJobRoutes(r: Routes): void {
  const { engine } = r;
  r.account('get', '/v2/accounts/:account/invocations/:invocation', 'admin', async ({ account, name }) => ({ status: 200, body: await engine.readInvocation(account, name) }));

  r.account('get', '/v2/accounts/:account/functions/:function/invocations', 'admin', async ({ account, name, query }) => {
    engine.existing(account, name);
    const given = query.get('limit');
    const limit = given === null ? 20 : Number(given);
    if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw new ServiceError('ERR_BAD_REQUEST', `limit ${JSON.stringify(given)}: expected a whole number from 1 to 1000`);
    return { status: 200, body: { invocations: await engine.listInvocations(account, name, limit) } };
  });

  // `?function=<name>`: that function's alone (the console's function page).
  r.account('get', '/v2/accounts/:account/schedules', 'admin', async ({ account, query }) => {
    const fn = query.get('function');
    if (fn !== null) checkName('function', fn);
    return { status: 200, body: { schedules: await engine.schedules(account, fn ?? undefined) } };
  });
}
