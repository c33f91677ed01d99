/**
 * Schedules on one node: each tick runs exactly once across two workers (a 6-field schedule every
 * 2 s, over 20 s), a deploy and a rollback change the schedule from their answer on and a remove ends it; the
 * handler styles (seed, fetch's scheduled(), Python) are told their tick; service.yml's errors
 * name their line.
 */
import t from 'tap';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { readServiceFile } from '../../cli/service-yml';
import { startCollector, tickProblems } from '../helpers/collector';
import { functionFolder } from '../helpers/functions';
import { reopenTestServer, startTestServer } from '../helpers/server';
import { eventually, startSupervised } from '../helpers/supervised';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

t.test("service.yml: a schedule's mistakes name file, line and key", async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'islet-yml-'));
  writeFileSync(path.join(dir, 'function.js'), 'exports.handler = () => 1;');
  const write = (extra: string) => writeFileSync(path.join(dir, 'service.yml'), `functions:\n  nightly:\n    file: function.js\n    runtime: node8\n${extra}`);
  const specOf = () => readServiceFile(dir, 'nightly').spec('nightly', {});
  write('    schedule:\n      - "0 3 * * *"\n      - "*/2 * * *"\n');
  t.throws(specOf, /service\.yml:7: functions\.nightly\.schedule: "\*\/2 \* \* \*" is not a cron expression/);
  write('    schedule: "0 3 * * *"\n    timezone: Mars/Olympus\n');
  t.throws(specOf, /service\.yml:6: functions\.nightly\.timezone: "Mars\/Olympus" is not an IANA time zone/);
  write('    retries: 99\n');
  t.throws(specOf, /service\.yml:5: functions\.nightly\.retries: must be a whole number from 0 to 10/);
  write('    schedule: ["*/2 * * * * *", "0 3 * * *"]\n    timezone: Europe/Paris\n    catchup: true\n    retries: 0\n');
  t.same(specOf(), {
    name: 'nightly',
    runtime: 'node8',
    file: 'function.js',
    entrypoint: 'handler',
    env: {},
    schedules: ['*/2 * * * * *', '0 3 * * *'],
    timezone: 'Europe/Paris',
    catchup: true,
    retries: 0,
  });
});

t.test('each handler style is told its tick', async (t) => {
  const s = await startTestServer({ limits: { pythonSpare: false } });
  t.teardown(() => s.stop());
  const seed = functionFolder(`exports.handler = (body, ctx) => { console.log('seed ' + JSON.stringify({ body, scheduled: ctx.scheduled, method: ctx.request.method })); return 1; };`);
  const fetchStyle = functionFolder(
    `export default { fetch() { return new Response('no'); }, async scheduled(controller, env, ctx) { console.log('fetch ' + JSON.stringify({ cron: controller.cron, scheduledTime: controller.scheduledTime, env: env.NOTE })); } };`,
  );
  const py = mkdtempSync(path.join(tmpdir(), 'islet-py-'));
  writeFileSync(path.join(py, 'function.py'), "def handler(body, req):\n    print('python %s %s' % (body['scheduledTime'], req.scheduled['cron']))\n    return 1\n");
  await s.deploy('seed', seed, 'handler', { schedules: ['* * * * * *'] });
  await s.deploy('fetchstyle', fetchStyle, 'default', { schedules: ['* * * * * *'], env: { NOTE: 'env' } });
  await s.deployPython('py', py, 'handler', { schedules: ['* * * * * *'] });
  const lines = async (name: string) => (await s.engine.readLogs(s.accountId, name, {})).map((e) => e.message);
  t.ok(await eventually(async () => (await lines('seed')).some((m) => m.startsWith('seed ')), 20_000), 'seed style ran');
  const seedRun = JSON.parse((await lines('seed')).find((m) => m.startsWith('seed '))!.slice(5)) as {
    body: { cron: string; scheduledTime: number };
    scheduled: { cron: string; scheduledTime: number };
    method: string;
  };
  t.equal(seedRun.body.cron, '* * * * * *');
  t.equal(seedRun.body.scheduledTime % 1000, 0, "scheduledTime is the tick's nominal time");
  t.same(seedRun.scheduled, seedRun.body, 'context.scheduled says it is a scheduled run');
  t.ok(
    (await lines('seed')).some((m) => /^SCHEDULED 200 /.test(m)),
    'its call line names the trigger',
  );
  t.ok(await eventually(async () => (await lines('fetchstyle')).some((m) => m.startsWith('fetch ')), 20_000), 'fetch style ran scheduled()');
  const fetchRun = JSON.parse((await lines('fetchstyle')).find((m) => m.startsWith('fetch '))!.slice(6)) as { cron: string; scheduledTime: number; env: string };
  t.equal(fetchRun.cron, '* * * * * *');
  t.equal(fetchRun.env, 'env');
  t.ok(await eventually(async () => (await lines('py')).some((m) => /^python \d+000 \* \* \* \* \* \*$/.test(m)), 60_000), 'Python gets the body and req.scheduled');
  // HTTP cannot pass for a tick.
  const res = await s.call('seed', { method: 'POST', body: '{"cron":"x","scheduledTime":1}' });
  t.equal(res.status, 200);
  t.ok(await eventually(async () => (await lines('seed')).some((m) => m.includes('"cron":"x"') && !m.includes('"scheduled":{')), 5_000), 'a call over HTTP has no context.scheduled');
});

t.test('catchup: true runs the latest tick missed while no process was up, once; without it none is replayed', async (t) => {
  const s = await startTestServer({ limits: { pythonSpare: false } });
  const source = (label: string) => functionFolder(`exports.handler = (body, ctx) => { console.log('${label} ' + ctx.scheduled.scheduledTime); return 1; };`);
  await s.deploy('late', source('late'), 'handler', { schedules: ['*/2 * * * * *'], catchup: true });
  await s.deploy('strict', source('strict'), 'handler', { schedules: ['*/2 * * * * *'] });
  const runs = async (server: typeof s, name: string) =>
    (await server.engine.readLogs(s.accountId, name, {}))
      .map((e) => /^(?:late|strict) (\d+)$/.exec(e.message))
      .filter((m) => m !== null)
      .map((m) => Number(m![1]));
  t.ok(await eventually(async () => (await runs(s, 'late')).length > 0 && (await runs(s, 'strict')).length > 0, 20_000), 'both ran once before the stop');
  await s.stop();
  const stoppedAt = Date.now();
  await sleep(5_000); // two ticks or more pass with no process up
  const reopenedAt = Date.now();
  const again = await reopenTestServer(s.dataDir, s.accountId, s.apiKey, { pythonSpare: false });
  t.teardown(() => again.stop());
  const after = async (name: string) => (await runs(again, name)).filter((time) => time > stoppedAt).sort((a, b) => a - b);
  t.ok(await eventually(async () => (await after('late')).length >= 2 && (await after('strict')).length >= 1, 20_000), 'both run again');
  const [late, strict] = [await after('late'), await after('strict')];
  t.ok(strict[0]! > reopenedAt, 'without catchup, no missed tick runs');
  // Both follow the same schedule from the same start: the one caught up is the tick just before the first one planned.
  t.equal(late[0], strict[0]! - 2000, 'with catchup, the latest missed tick runs');
  t.equal(late.filter((time) => time < strict[0]!).length, 1, 'and no other missed one');
  t.same(tickProblems(late, 2000), [], 'each once');
});

t.test('two workers: each tick exactly once; a deploy and a rollback change the schedule, a remove ends it', async (t) => {
  const collector = await startCollector();
  t.teardown(() => collector.close());
  const s = await startSupervised(['--workers', '2', '--allow-private-egress']);
  t.teardown(() => s.crash());
  const source = (label: string) => `exports.handler = async (body, ctx) => { await fetch(process.env.COLLECTOR + '?v=${label}&t=' + ctx.scheduled.scheduledTime); return 'ok'; };`;
  const deploy = async (label: string, schedule: string) => {
    const res = await s.deploy('ticker', source(label), { schedules: [schedule], env: { COLLECTOR: collector.url } });
    t.ok(res.status === 200 || res.status === 201, `deploy ${label}: ${res.status}`);
    return Date.now();
  };
  const ticks = (label: string) => collector.hits.filter((h) => h.v === label).map((h) => Number(h.t));

  const firstAnswer = await deploy('v1', '*/2 * * * * *');
  await sleep(20_000);
  const v1 = ticks('v1');
  t.ok(v1.length >= 8, `about ten ticks in 20 s (${v1.length})`);
  t.same(tickProblems(v1, 2000), [], 'each tick exactly once across both workers');
  t.ok(Math.min(...v1) >= firstAnswer - 2000, 'from the first tick after the deploy');
  const logs = (await (await fetch(`${s.url}/v2/accounts/${s.accountId}/functions/ticker/logs?limit=10000`, { headers: { 'X-Service-Api-Key': s.apiKey } })).json()) as {
    entries: { message: string }[];
  };
  t.ok(logs.entries.filter((e) => /^SCHEDULED 200 /.test(e.message)).length >= v1.length, 'every run is in islet logs');

  const secondAnswer = await deploy('v2', '1-59/2 * * * * *');
  await sleep(9_000);
  t.same(
    ticks('v1').filter((time) => time >= secondAnswer),
    [],
    'the old schedule runs no tick after the deploy answered',
  );
  const v2 = ticks('v2');
  t.ok(v2.length >= 3, `the new schedule runs (${v2.length} ticks)`);
  t.ok(
    v2.every((time) => time % 2000 === 1000),
    'on odd seconds',
  );
  t.same(
    tickProblems(
      v2.map((time) => time - 1000),
      2000,
    ),
    [],
    'each of its ticks exactly once',
  );

  // A rollback brings the first version's schedule back, from its answer on.
  const rolledBack = await fetch(`${s.url}/v2/accounts/${s.accountId}/functions/ticker/rollback`, {
    method: 'POST',
    headers: { 'X-Service-Api-Key': s.apiKey, 'Content-Type': 'application/json' },
    body: '{}',
  });
  t.equal(rolledBack.status, 200, 'rolled back');
  const rollbackAt = Date.now();
  await sleep(6_000);
  t.same(
    ticks('v2').filter((time) => time >= rollbackAt),
    [],
    'the second schedule runs no tick after the rollback answered',
  );
  const back = ticks('v1').filter((time) => time >= secondAnswer);
  t.ok(back.length >= 2, `the first schedule runs again (${back.length} ticks)`);
  t.same(tickProblems(back, 2000), [], 'each of its ticks exactly once, on even seconds');

  const removed = await fetch(`${s.url}/v2/accounts/${s.accountId}/functions/ticker`, { method: 'DELETE', headers: { 'X-Service-Api-Key': s.apiKey } });
  t.equal(removed.status, 200);
  const removedAt = Date.now();
  await sleep(5_000);
  t.same(
    collector.hits.filter((h) => Number(h.t) >= removedAt),
    [],
    'no tick after the remove answered',
  );
});
