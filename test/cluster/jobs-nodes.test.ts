/**
 * Schedules and asynchronous invocations across two nodes on one PostgreSQL: each tick exactly
 * once between the nodes, and when one node is killed (kill -9) the next ticks run on the other,
 * and so do the invocations that were accepted by the dead one.
 */
import t from 'tap';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { startCollector, tickProblems } from '../helpers/collector';
import { withPostgres } from '../helpers/postgres';
import { eventually, startSupervised, type Supervised } from '../helpers/supervised';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

withPostgres(t, (pg) => {
  t.test('two nodes: each tick exactly once; a node killed mid-schedule, the next ticks run on the other', async (t) => {
    const collector = await startCollector();
    t.teardown(() => collector.close());
    const flags = ['--store', pg().url, '--workers', '1', '--allow-private-egress', '--async-concurrency', '2'];
    const a = await startSupervised(flags);
    t.teardown(() => a.crash());
    const b: Supervised = await startSupervised(flags, {}, { dataDir: mkdtempSync(path.join(tmpdir(), 'islet-node-b-')), accountId: a.accountId, apiKey: a.apiKey });
    t.teardown(() => b.crash());
    const headers = { 'X-Service-Api-Key': a.apiKey };
    // Fetch style, as a Workers module with a Cron Trigger.
    const source = `export default { async scheduled(controller, env) { await fetch(env.COLLECTOR + '?t=' + controller.scheduledTime); } };`;
    const res = await a.deploy('ticker', source, { entrypoint: 'default', schedules: ['*/2 * * * * *'], env: { COLLECTOR: collector.url } });
    t.equal(res.status, 201);
    const ticks = () => collector.hits.map((h) => Number(h.t));
    await sleep(20_000);
    t.ok(ticks().length >= 8, `about ten ticks in 20 s (${ticks().length})`);
    t.same(tickProblems(ticks(), 2000), [], 'each tick exactly once between the two nodes');

    // Invocations accepted by the node about to die: slow ones, so that most still wait.
    t.equal((await a.deploy('slow', `exports.handler = async (body) => { await new Promise((r) => setTimeout(r, 200)); return body.n; };`)).status, 201);
    const ids: string[] = [];
    for (let n = 0; n < 40; n++) {
      const queued = await fetch(`${a.url}/v2/async/${a.accountId}/slow`, { method: 'POST', headers, body: JSON.stringify({ n }) });
      t.equal(queued.status, 202);
      ids.push(((await queued.json()) as { invocationId: string }).invocationId);
    }

    const killedAt = Date.now();
    a.crash();
    await a.exited;
    await sleep(12_000);
    const after = ticks().filter((time) => time > killedAt);
    t.ok(after.length >= 4, `the ticks go on on the live node (${after.length} since the kill)`);
    // The tick the dead node had claimed when it died may be lost with it (it ran, at most, once).
    t.same(tickProblems(ticks(), 2000, 1), [], 'each tick at most once, and no more than the one in flight missing');

    const status = async (id: string) => ((await (await fetch(`${b.url}/v2/accounts/${a.accountId}/invocations/${id}`, { headers })).json()) as { status: string }).status;
    const done = await eventually(async () => (await Promise.all(ids.map(status))).every((s) => s === 'succeeded'), 120_000);
    const statuses = await Promise.all(ids.map(status));
    t.ok(done, `the dead node's invocations ran on the live one (${statuses.filter((s) => s === 'succeeded').length} of ${ids.length} succeeded)`);
  });
});
