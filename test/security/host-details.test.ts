import { rmSync } from 'node:fs';
import * as path from 'node:path';
import t from 'tap';
import { functionFolder } from '../helpers/functions';
import { startNode } from '../helpers/nodes';
import { withPostgres } from '../helpers/postgres';
import { reopenTestServer, startTestServer } from '../helpers/server';

// Finding 10 of issue 22, what the host told anyone about itself: /healthz needed no key and showed
// the data directory, worker pids and every count; ERR_INTERNAL messages carried host paths and
// host error text (to the caller, and into the function's own logs).

const TOKEN = 'host-details-token';
const hello = () => functionFolder("exports.handler = () => 'hi';\n");

t.test('/healthz: {"status":"ok"} to anyone; the operator sees everything; an admin key sees its own account only', async (t) => {
  const s = await startTestServer({ metricsToken: TOKEN, limits: { pythonSpare: false } });
  t.teardown(() => s.stop());
  await s.deploy('hello', hello(), 'handler');
  t.equal((await s.call('hello')).status, 200);
  const other = await s.createAccount();
  await s.engine.deploy(other.accountId, { name: 'theirs', runtime: 'node8', file: 'function.js', entrypoint: 'handler', env: {} }, { dir: hello() });
  const invoke = await s.internals.store.createKey(s.accountId, { name: 'caller', scope: 'invoke' });

  const anyone = await fetch(`${s.url}/healthz`);
  t.equal(anyone.status, 200);
  t.same(await anyone.json(), { status: 'ok' }, 'nothing but the status, without credentials');

  const operator = (await (await fetch(`${s.url}/healthz`, { headers: { authorization: `Bearer ${TOKEN}` } })).json()) as Record<string, unknown>;
  t.match(
    operator,
    { status: 'ok', accounts: 2, functions: 2, warm: 2, store: { kind: 'file', description: `data directory ${s.dataDir}`, state: 'ok' } },
    'the metrics token reads everything (warm: each deploy keeps its instance)',
  );

  const res = await fetch(`${s.url}/healthz`, { headers: { 'X-Service-Api-Key': s.apiKey } });
  const text = await res.text();
  t.same(JSON.parse(text), {
    status: 'ok',
    store: { kind: 'file', state: 'ok' },
    runtimes: ['node8', 'python2', 'python3'],
    account: { id: s.accountId, functions: 1, warmInstances: 1, warmMemoryBytes: (JSON.parse(text) as { account: { warmMemoryBytes: number } }).account.warmMemoryBytes },
  });
  for (const secret of [s.dataDir, other.accountId, 'description', 'pid']) t.notOk(text.includes(secret), `an admin key does not see ${secret}`);

  const refusals: [Record<string, string>, number, string][] = [
    [{ authorization: 'Bearer not-the-token' }, 403, 'ERR_BAD_KEY'],
    [{ 'X-Service-Api-Key': invoke.apiKey }, 403, 'ERR_FORBIDDEN'],
    [{ 'X-Service-Api-Key': 'isk_nobody' }, 403, 'ERR_BAD_KEY'],
  ];
  for (const [headers, status, code] of refusals) {
    const refused = await fetch(`${s.url}/healthz`, { headers });
    t.equal(refused.status, status, JSON.stringify(headers).slice(0, 40));
    t.equal(((await refused.json()) as { errorCode: string }).errorCode, code);
  }
});

t.test('ERR_INTERNAL: the caller and the function logs get a message naming the request id; the server log has the detail', async (t) => {
  let s = await startTestServer({ limits: { pythonSpare: false } });
  await s.deploy('ok', hello(), 'handler');
  const manifest = s.engine.describe(s.accountId, 'ok')!;
  const { dataDir, accountId, apiKey } = s;
  await s.stop();
  rmSync(path.join(dataDir, 'functions', accountId, 'ok', 'versions', String(manifest.version), 'code'), { recursive: true });
  s = await reopenTestServer(dataDir, accountId, apiKey, { pythonSpare: false });
  t.teardown(() => s.stop());
  const logged: string[] = [];
  const write = process.stderr.write;
  process.stderr.write = ((line: string) => logged.push(line) > 0) as typeof process.stderr.write;
  let res: Response;
  try {
    res = await s.call('ok');
  } finally {
    process.stderr.write = write;
  }
  t.equal(res.status, 500);
  const body = (await res.json()) as { errorCode: string; message: string; requestId: string };
  t.equal(body.errorCode, 'ERR_INTERNAL');
  t.equal(body.message, `internal error (request ${body.requestId}); the server's log has the details`);
  const line = logged
    .filter((text) => text.startsWith('{'))
    .map((text) => JSON.parse(text) as { level: string; code: string; requestId: string; err: { message: string } })
    .find((entry) => entry.requestId === body.requestId);
  t.match(line, { level: 'error', code: 'ERR_INTERNAL', requestId: body.requestId }, `the server's log has a JSON line with the request id: ${logged.join(' | ').slice(0, 300)}`);
  t.match(line?.err.message, dataDir, 'and the detail');
  await s.internals.logs.flush();
  const lines = JSON.stringify(await s.internals.logs.read(accountId, 'ok'));
  t.match(lines, body.requestId, "the function's logs have the failed call");
  t.notMatch(lines, dataDir, 'but no host path');
  t.notMatch(lines, /ENOENT/, 'nor host error text');
});

t.test('postgres store: /healthz never shows the database URL or its password', async (t) => {
  withPostgres(t, (pg) => {
    t.test('the operator sees host, port and database; an admin key not even that', async (t) => {
      const url = pg().createDatabase('health').replace('postgres://islet@', 'postgres://islet:hunter2-secret@');
      const node = await startNode(url, {}, TOKEN);
      t.teardown(() => node.stop());
      const { apiKey } = await node.createAccount();
      const operator = await (await fetch(`${node.url}/healthz`, { headers: { authorization: `Bearer ${TOKEN}` } })).text();
      t.notMatch(operator, 'hunter2', 'no password for the operator either');
      t.match(operator, /"description":"PostgreSQL at 127\.0\.0\.1:\d+\/health"/);
      const account = await (await fetch(`${node.url}/healthz`, { headers: { 'X-Service-Api-Key': apiKey } })).text();
      t.match(JSON.parse(account), { store: { kind: 'postgres', state: 'ok' } });
      t.notMatch(account, /PostgreSQL at|hunter2|127\.0\.0\.1/, 'an admin key sees the state only');
    });
  });
});
