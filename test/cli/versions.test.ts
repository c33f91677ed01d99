import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import t, { type Test } from 'tap';
import { islet } from '../helpers/cli';
import { reopenTestServer, startTestServer, type TestServer } from '../helpers/server';

// Versions, rollback, traffic splits and promotion, through the real CLI and server.
let s: TestServer;
let env: NodeJS.ProcessEnv;
let work: string;

t.before(async () => {
  // Three versions kept besides the serving ones, so pruning shows quickly.
  s = await startTestServer({ engine: { keepVersions: 3 } });
  work = mkdtempSync(path.join(tmpdir(), 'islet-versions-'));
  env = { PATH: process.env.PATH, HOME: work, XDG_CONFIG_HOME: path.join(work, 'config'), ISLET_URL: s.url, ISLET_ACCOUNT: s.accountId, ISLET_API_KEY: s.apiKey };
});
t.teardown(() => s.stop());

/** A function folder whose handler answers `answer`. */
function release(name: string, answer: string): string {
  const dir = mkdtempSync(path.join(work, `${name}-`));
  writeFileSync(path.join(dir, 'service.yml'), `functions:\n  ${name}:\n    file: function.js\n    entrypoint: handler\n    runtime: node8\n`);
  writeFileSync(path.join(dir, 'function.js'), `exports.handler = () => ${JSON.stringify(answer)};\n`);
  return dir;
}

async function deploy(t: Test, name: string, answer: string, ...flags: string[]): Promise<string> {
  const result = await islet(['deploy', name, '--dir', release(name, answer), ...flags], { env });
  t.equal(result.code, 0, result.stderr);
  return result.stdout;
}

/** Calls `name` n times; answers how many calls each version answered, by X-Service-Version. */
async function versionsOf(name: string, n: number, headers: Record<string, string> = {}): Promise<Record<string, number>> {
  const seen: Record<string, number> = {};
  for (let i = 0; i < n; i++) {
    const res = await s.call(name, { headers });
    await res.text();
    const v = res.headers.get('x-service-version') ?? 'none';
    seen[v] = (seen[v] ?? 0) + 1;
  }
  return seen;
}

t.test('every deploy is a numbered version; versions lists them; rollback switches at once, with no upload', async (t) => {
  await deploy(t, 'app', 'one', '--message', 'first release');
  const second = await deploy(t, 'app', 'two');
  t.notMatch(second, /serves/, 'a plain deploy prints what it always printed');
  const res = await s.call('app');
  t.equal(await res.text(), '"two"');
  t.equal(res.headers.get('x-service-version'), '2', 'every answer names its version');

  const listed = await islet(['versions', 'app'], { env });
  t.equal(listed.code, 0, listed.stderr);
  t.match(listed.stdout, /^VERSION\s+SERVING\s+DEPLOYED\s+HASH\s+MESSAGE\n2\s+100%\s+\S+Z\s+[0-9a-f]{12}\n1\s+\S+Z\s+[0-9a-f]{12}\s+first release\n$/);
  const json = JSON.parse((await islet(['versions', 'app', '--json'], { env })).stdout) as { latest: number; versions: { version: number; percent: number }[] };
  t.same(
    json.versions.map((v) => [v.version, v.percent]),
    [
      [2, 100],
      [1, 0],
    ],
  );

  const back = await islet(['rollback', 'app'], { env });
  t.equal(back.stdout, 'app: version 1 serves all calls\n', back.stderr);
  const after = await s.call('app');
  t.equal(await after.text(), '"one"', 'the next call runs version 1');
  t.equal(after.headers.get('x-service-version'), '1');
  t.equal((await islet(['rollback', 'app', '--to', '2'], { env })).stdout, 'app: version 2 serves all calls\n');
  t.equal(await (await s.call('app')).text(), '"two"');

  const none = await islet(['rollback', 'app', '--to', '7'], { env });
  t.equal(none.code, 1);
  t.match(none.stderr, /^islet: ERR_NOT_FOUND: app has no version 7 \(the latest is 2\)\n$/);
  const bad = await islet(['rollback', 'app', '--to', 'latest'], { env });
  t.match(bad.stderr, /--to latest: expected a version number/);
  t.equal((await islet(['rollback', 'app', '--to', '1'], { env })).code, 0);
  const oldest = await islet(['rollback', 'app'], { env });
  t.match(oldest.stderr, /ERR_NOT_FOUND: app has no version older than 1 to roll back to \(kept: 1, 2\)/);
  const missing = await islet(['rollback', 'nothing'], { env });
  t.match(missing.stderr, /ERR_NO_SUCH_FUNCTION/);
});

t.test('the newest versions are kept (3 here), serving ones too; a rollback to a pruned one says so', async (t) => {
  await deploy(t, 'pruned', 'v1');
  for (let i = 2; i <= 5; i++) await deploy(t, 'pruned', `v${i}`, '--percent', '0');
  const versionsOfPruned = async () => (JSON.parse((await islet(['versions', 'pruned', '--json'], { env })).stdout) as { versions: { version: number }[] }).versions.map((v) => v.version);
  t.same(await versionsOfPruned(), [5, 4, 3, 1], 'version 1 still serves, so it is kept beside the newest 3');
  t.equal((await islet(['promote', 'pruned'], { env })).code, 0);
  await deploy(t, 'pruned', 'v6');
  t.same(await versionsOfPruned(), [6, 5, 4], 'once it stopped serving, the next deploy pruned it');
  const gone = await islet(['rollback', 'pruned', '--to', '1'], { env });
  t.equal(gone.code, 1);
  t.match(gone.stderr, /ERR_NOT_FOUND: version 1 of pruned was pruned \(kept: 4, 5, 6\)/);
  t.equal(await (await s.call('pruned')).text(), '"v6"', 'a refused rollback changes nothing');
});

t.test('deploy --percent splits the calls; a sticky key always gets the same version; traffic and promote', async (t) => {
  await deploy(t, 'canary', 'stable');
  const split = await deploy(t, 'canary', 'new', '--percent', '30', '--message', 'try it');
  t.match(split, /canary: version 1 serves 70% of calls, version 2 serves 30%\n/);
  const seen = await versionsOf('canary', 300);
  t.ok(seen['2']! > 45 && seen['2']! < 135, `about 30% of 300 calls answered by version 2 (${JSON.stringify(seen)})`);
  t.equal((seen['1'] ?? 0) + (seen['2'] ?? 0), 300, 'every call by one of the two');
  for (const user of ['ada', 'bob', 'cy']) {
    const sticky = await versionsOf('canary', 20, { 'X-Service-Version-Key': user });
    t.equal(Object.keys(sticky).length, 1, `user ${user} always gets one version (${JSON.stringify(sticky)})`);
  }
  const listed = await islet(['list'], { env });
  t.match(listed.stdout, /^canary\s+node8\s+1 \(70%\), 2 \(30%\)/m, 'list shows the split');

  t.equal((await islet(['traffic', 'canary', '1=50', '2=50'], { env })).stdout, 'canary: version 1 serves 50% of calls, version 2 serves 50%\n');
  for (const [args, error] of [
    [['1=50', '2=40'], /ERR_BAD_REQUEST: traffic: the percents add up to 90, not 100/],
    [['1=150'], /ERR_BAD_REQUEST: traffic: the percent of version 1 must be a number from 0 to 100, got 150/],
    [['1=40', '2=30', '3=30'], /ERR_BAD_REQUEST: traffic can be shared by two versions at most/],
    [['9=100'], /ERR_NOT_FOUND: canary has no version 9/],
    [['one=100'], /traffic: "one=100" is not VERSION=PERCENT/],
    [[], /give VERSION=PERCENT pairs/],
  ] as const) {
    const refused = await islet(['traffic', 'canary', ...args], { env });
    t.equal(refused.code, 1, args.join(' '));
    t.match(refused.stderr, error, args.join(' '));
  }
  const rolled = await islet(['rollback', 'canary'], { env });
  t.equal(rolled.stdout, 'canary: version 1 serves all calls\n', 'a rollback during a split goes back to the older version');
  t.same(await versionsOf('canary', 20), { 1: 20 });
  t.equal((await islet(['promote', 'canary'], { env })).stdout, 'canary: version 2 serves all calls\n');
  t.same(await versionsOf('canary', 20), { 2: 20 });

  for (const percent of ['150', '-5', 'half']) {
    const refused = await islet(['deploy', 'canary', '--dir', release('canary', 'x'), `--percent=${percent}`], { env });
    t.equal(refused.code, 1, `--percent ${percent}`);
    t.match(refused.stderr, /ERR_BAD_REQUEST: percent must be a number from 0 to 100/, `--percent ${percent}`);
  }
  t.equal(JSON.parse((await islet(['versions', 'canary', '--json'], { env })).stdout).latest, 2, 'refused deploys stored nothing');
  const staged = await deploy(t, 'canary', 'staged', '--percent', '0');
  t.match(staged, /canary: version 2 serves all calls/, 'a 0% deploy stores the version and serves it nothing');
});

t.test('routes: the version routes answer JSON, need an admin key, and refuse bad input', async (t) => {
  const base = `${s.url}/v2/accounts/${s.accountId}/functions/app`;
  const admin = { 'X-Service-Api-Key': s.apiKey, 'content-type': 'application/json' };
  const put = await fetch(`${base}/traffic`, {
    method: 'PUT',
    headers: admin,
    body: JSON.stringify({
      traffic: [
        { version: 1, percent: 25 },
        { version: 2, percent: 75 },
      ],
    }),
  });
  t.same(await put.json(), {
    name: 'app',
    traffic: [
      { version: 1, percent: 25 },
      { version: 2, percent: 75 },
    ],
  });
  const described = (await (await fetch(base, { headers: admin })).json()) as { function: { version: number; traffic: unknown } };
  t.equal(described.function.version, 2, 'a description shows the version serving most');
  t.same(described.function.traffic, [
    { version: 1, percent: 25 },
    { version: 2, percent: 75 },
  ]);
  t.equal((await fetch(`${base}/traffic`, { method: 'PUT', headers: admin, body: '{"traffic":' })).status, 400, 'a body that is not JSON');
  t.equal((await fetch(`${base}/traffic`, { method: 'PUT', headers: admin, body: '[]' })).status, 400, 'a body that is not an object');
  const rollback = await fetch(`${base}/rollback`, { method: 'POST', headers: admin, body: JSON.stringify({ to: 'two' }) });
  t.equal(rollback.status, 400);
  t.match(((await rollback.json()) as { message: string }).message, /to must be a version number/);
  t.equal((await fetch(`${base}/promote`, { method: 'POST', headers: admin })).status, 200);
  t.equal((await fetch(`${base}/versions`)).status, 401, 'no key');
  const other = await s.createAccount();
  t.equal((await fetch(`${base}/versions`, { headers: { 'X-Service-Api-Key': other.apiKey } })).status, 403, "another account's key");
  const missing = await fetch(`${s.url}/v2/accounts/${s.accountId}/functions/nothing/versions`, { headers: admin });
  t.equal(missing.status, 404);
});

t.test('versions and splits survive a restart, and the split keeps serving both', async (t) => {
  await deploy(t, 'lasting', 'old');
  await deploy(t, 'lasting', 'new', '--percent', '50');
  const before = (await islet(['versions', 'lasting', '--json'], { env })).stdout;
  const { dataDir, accountId, apiKey } = s;
  await s.stop();
  s = await reopenTestServer(dataDir, accountId, apiKey, undefined, { engine: { keepVersions: 3 } });
  env.ISLET_URL = s.url;
  t.equal((await islet(['versions', 'lasting', '--json'], { env })).stdout, before, 'the same versions and split');
  const seen = await versionsOf('lasting', 60);
  t.ok(seen['1']! > 0 && seen['2']! > 0, `both versions serve (${JSON.stringify(seen)})`);
  t.equal(await (await s.call('app')).text(), '"two"', 'a promoted version stays promoted');
});
