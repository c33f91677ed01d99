import { readdirSync, statSync } from 'node:fs';
import * as path from 'node:path';
import t, { type Test } from 'tap';
import type { FunctionSpec } from '../../engine/manifest';
import { functionFolder } from '../helpers/functions';
import { startNode } from '../helpers/nodes';
import { withPostgres } from '../helpers/postgres';
import { parseServeOptions } from '../../supervisor/options';
import { islet } from '../helpers/cli';
import { reopenTestServer, startTestServer, type TestServer } from '../helpers/server';

/** A server on either store (a test server, or a node on PostgreSQL). */
type Served = Pick<TestServer, 'engine' | 'internals' | 'createAccount' | 'url' | 'stop'>;

// Finding 9 of issue 22: nothing bounded what an account keeps (three deploys of a 717 KB upload
// added 600 MB; functions and versions were unbounded; a full disk stops every tenant). Per-account
// quotas: functions, code kept (every kept version, unpacked), kept versions, log bytes.

const KB = 1024;
const spec = (name: string): FunctionSpec => ({ name, runtime: 'node8', file: 'function.js', entrypoint: 'handler', env: {} });
const small = () => functionFolder('exports.handler = () => 1;\n');
/** A function folder of about `kb` KB (a data file besides the handler). */
const sized = (kb: number, tag: string) => functionFolder(`exports.handler = () => '${tag}';\n`, { 'data.txt': 'x'.repeat(kb * KB) });

async function refusal(work: Promise<unknown>): Promise<{ code?: string; status?: number; message?: string }> {
  return work.then(
    () => ({}),
    (err: { code?: string; status?: number; message?: string }) => ({ code: err.code, status: err.status, message: err.message }),
  );
}

/** The function-count quota on any store: the count, concurrent deploys, an account's own limit. */
function functionCount(t: Test, open: () => Promise<Served>): void {
  t.test('at most N functions: the N+1th is refused with ERR_QUOTA_EXCEEDED, a new version of one is not', async (t) => {
    const s = await open();
    t.teardown(() => s.stop());
    const { accountId, apiKey } = await s.createAccount();
    await s.engine.deploy(accountId, spec('one'), { dir: small() });
    await s.engine.deploy(accountId, spec('two'), { dir: small() });
    const third = await refusal(s.engine.deploy(accountId, spec('three'), { dir: small() }));
    t.same(third, { code: 'ERR_QUOTA_EXCEEDED', status: 403, message: `account ${accountId} is at its quota of 2 functions (it has 2); remove one to deploy another` });
    await s.engine.deploy(accountId, spec('one'), { dir: small() });
    t.equal(s.engine.describe(accountId, 'one')?.version, 2, 'a new version of a function it has is not one more function');
    const res = await fetch(`${s.url}/v2/accounts/${accountId}/functions/three`, { method: 'DELETE', headers: { 'X-Service-Api-Key': apiKey } });
    t.equal(res.status, 404);
    await s.engine.remove(accountId, 'two');
    await s.engine.deploy(accountId, spec('three'), { dir: small() });
    t.same(
      s.engine
        .list(accountId)
        .map((f) => f.name)
        .sort(),
      ['one', 'three'],
      'a removal makes room',
    );
    const other = await s.createAccount();
    await s.engine.deploy(other.accountId, spec('one'), { dir: small() });
    await s.engine.deploy(other.accountId, spec('two'), { dir: small() });
    t.equal(s.engine.list(other.accountId).length, 2, 'each account has its own count');
  });

  t.test('deploys of new functions at once cannot pass the quota together', async (t) => {
    const s = await open();
    t.teardown(() => s.stop());
    const { accountId } = await s.createAccount();
    const outcomes = await Promise.all(['a', 'b', 'c', 'd', 'e'].map((name) => refusal(s.engine.deploy(accountId, spec(name), { dir: small() }))));
    t.equal(outcomes.filter((o) => o.code === undefined).length, 2, 'two deployed');
    t.equal(outcomes.filter((o) => o.code === 'ERR_QUOTA_EXCEEDED').length, 3, 'three refused');
    t.equal(s.engine.list(accountId).length, 2);
  });

  t.test("an account's own limit overrides the server's", async (t) => {
    const s = await open();
    t.teardown(() => s.stop());
    const { accountId } = await s.createAccount();
    await s.internals.manage.setAccountLimits(accountId, { maxFunctions: 1 });
    await s.engine.deploy(accountId, spec('one'), { dir: small() });
    t.match(await refusal(s.engine.deploy(accountId, spec('two'), { dir: small() })), { code: 'ERR_QUOTA_EXCEEDED', message: /quota of 1 function \(it has 1\)/ });
  });
}

/** The code quota on any store: kept versions' bytes, what a deploy's pruning frees, an account's own keep. */
function codeBytes(t: Test, open: () => Promise<Served>): void {
  t.test('code kept: a version that would pass the quota is refused naming it and the usage; pruning makes room', async (t) => {
    const s = await open();
    t.teardown(() => s.stop());
    const { accountId } = await s.createAccount();
    await s.engine.deploy(accountId, spec('big'), { dir: sized(40, 'v1') });
    await s.engine.deploy(accountId, spec('big'), { dir: sized(40, 'v2') });
    const third = await refusal(s.engine.deploy(accountId, spec('big'), { dir: sized(40, 'v3') }));
    t.equal(third.code, 'ERR_QUOTA_EXCEEDED');
    t.match(third.message, new RegExp(`account ${accountId} is over its quota of 0\\.1 MB of code: it keeps 0\\.1 MB in 2 versions, and this version \\(0\\.0 MB\\) would take it to 0\\.1 MB`));
    t.same(
      (await s.engine.versions(accountId, 'big')).versions.map((m) => m.version),
      [2, 1],
      'nothing was stored',
    );
    t.match(await refusal(s.engine.deploy(accountId, spec('other'), { dir: sized(40, 'o') })), { code: 'ERR_QUOTA_EXCEEDED' }, 'the quota is the whole account’s');
    await s.internals.manage.setAccountLimits(accountId, { keepVersions: 2 });
    await s.engine.deploy(accountId, spec('big'), { dir: sized(40, 'v3') });
    t.same(
      (await s.engine.versions(accountId, 'big')).versions.map((m) => m.version),
      [3, 2],
      'the account keeps 2 versions: version 1 was pruned, which made room',
    );
    await s.internals.manage.setAccountLimits(accountId, { keepVersions: 2, maxCodeBytes: 1024 * KB });
    await s.engine.deploy(accountId, spec('other'), { dir: sized(40, 'o') });
    t.ok(s.engine.describe(accountId, 'other'), "the account's own quota overrides the server's");
  });
}

t.test('file store', async (t) => {
  functionCount(t, () => startTestServer({ limits: { accountMaxFunctions: 2, pythonSpare: false } }));
  codeBytes(t, () => startTestServer({ limits: { accountMaxCodeBytes: 100 * KB, pythonSpare: false } }));

  t.test('the data directory holds what the quota says: the folder of an account stays under it', async (t) => {
    const s = await startTestServer({ limits: { accountMaxCodeBytes: 300 * KB, pythonSpare: false } });
    t.teardown(() => s.stop());
    for (let i = 0; i < 8; i++) await refusal(s.engine.deploy(s.accountId, spec(`f${i % 3}`), { dir: sized(60, String(i)) }));
    const bytes = folderBytes(path.join(s.dataDir, 'functions', s.accountId), (file) => file !== 'manifest.json' && file !== 'traffic.json');
    t.ok(bytes <= 300 * KB, `the account's code takes ${Math.round(bytes / KB)} KB on disk`);
  });

  t.test('log bytes: an account over its quota loses its oldest log files, and no one else’s', async (t) => {
    const s = await startTestServer({ limits: { accountMaxLogBytes: 256 * KB, pythonSpare: false } });
    t.teardown(() => s.stop());
    const noisy = functionFolder("exports.handler = (body, ctx) => { console.log(ctx.request.query.n + ' ' + 'x'.repeat(8000)); return 1; };\n");
    for (const name of ['a', 'b', 'c']) await s.deploy(name, noisy, 'handler');
    const other = await s.createAccount();
    await s.internals.manage.setAccountLimits(other.accountId, { maxLogBytes: 64 * 1024 * KB });
    await s.engine.deploy(other.accountId, spec('loud'), { dir: noisy });
    for (let i = 0; i < 40; i++) {
      await s.invoke('loud', { account: other.accountId, key: other.apiKey, query: `n=${i}` });
      for (const name of ['a', 'b', 'c']) await s.invoke(name, { query: `n=${i}` });
      if (i % 10 === 9) await s.internals.logs.flush();
    }
    await s.internals.logs.flush();
    const mine = folderBytes(path.join(s.dataDir, 'logs', s.accountId));
    t.ok(mine <= 256 * KB, `the account's log files weigh ${Math.round(mine / KB)} KB (quota 256 KB; 40 calls of 3 functions wrote about 970 KB)`);
    const last = await s.internals.logs.read(s.accountId, 'c');
    t.match(last.filter((e) => e.level === 'info').at(-1)?.message, /^39 x/, 'the newest lines are kept');
    const theirs = await s.internals.logs.read(other.accountId, 'loud');
    t.equal(
      theirs.filter((e) => e.level === 'info').length,
      40,
      `the other account (its own quota: 64 MB) keeps all its lines, ${Math.round(folderBytes(path.join(s.dataDir, 'logs', other.accountId)) / KB)} KB`,
    );
  });
});

t.test('the flags: islet serve --account-max-…, and an account’s own with islet account limits', async (t) => {
  const options = parseServeOptions(['--account-max-functions', '5', '--account-max-code-mb', '10', '--account-max-log-mb', '2']);
  t.same(options.limits, { accountMaxFunctions: 5, accountMaxCodeBytes: 10 * 1024 * KB, accountMaxLogBytes: 2 * 1024 * KB });
  t.throws(() => parseServeOptions(['--account-max-functions', '0']), /--account-max-functions: "0" is not a whole number from 1/);
  const s = await startTestServer({ limits: { pythonSpare: false } });
  await s.deploy('one', small(), 'handler');
  const { dataDir, accountId, apiKey } = s;
  await s.stop();
  const set = await islet(['account', 'limits', accountId, '--max-functions', '1', '--max-code-mb', '5', '--max-log-mb', '1', '--keep-versions', '3', '--data', dataDir]);
  t.equal(set.stdout, `Account ${accountId}: maxFunctions 1, maxCodeBytes 5242880, maxLogBytes 1048576, keepVersions 3 (a running server applies them when it starts again)\n`, set.stderr);
  t.match((await islet(['account', 'limits', accountId, '--keep-versions', '0', '--data', dataDir])).stderr, /--keep-versions 0: expected a number of 1 or more/);
  const again = await reopenTestServer(dataDir, accountId, apiKey, { pythonSpare: false });
  t.teardown(() => again.stop());
  t.match(await refusal(again.deploy('two', small(), 'handler')), { code: 'ERR_QUOTA_EXCEEDED', message: /quota of 1 function/ });
});

t.test('postgres store', async (t) => {
  withPostgres(t, (pg) => {
    let n = 0;
    functionCount(t, () => startNode(pg().createDatabase(`quota_functions_${++n}`), { accountMaxFunctions: 2 }));
    codeBytes(t, () => startNode(pg().createDatabase(`quota_code_${++n}`), { accountMaxCodeBytes: 100 * KB }));
  });
});

function folderBytes(dir: string, counts: (file: string) => boolean = () => true): number {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) total += folderBytes(p, counts);
    else if (counts(entry.name)) total += statSync(p).size;
  }
  return total;
}
