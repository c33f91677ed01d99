import type { FunctionRecord } from '../../engine/api';
import { describeVersion } from '../../engine/describe';
import type { Routes } from './common';

/** Versions and traffic: list, rollback, split, promote. Each answers the split that now serves. */
export function addVersionRoutes(r: Routes): void {
  const { engine } = r;
  const base = '/v2/accounts/:account/functions/:function';

  r.account('get', `${base}/versions`, 'admin', async ({ account, name }) => {
    const list = await engine.versions(account, name);
    return { status: 200, body: { latest: list.latest, traffic: list.traffic, versions: list.versions.map((m) => describeVersion(m, list.traffic)) } };
  });

  r.account('post', `${base}/rollback`, 'admin', async ({ account, name, body }) => serving(await engine.rollback(account, name, body.to)));

  r.account('put', `${base}/traffic`, 'admin', async ({ account, name, body }) => serving(await engine.setTraffic(account, name, body.traffic)));

  r.account('post', `${base}/promote`, 'admin', async ({ account, name }) => serving(await engine.promote(account, name)));
}

function serving(record: FunctionRecord) {
  return { status: 200, body: { name: record.name, traffic: record.traffic } };
}
