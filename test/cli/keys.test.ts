import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import t from 'tap';
import { execFile } from 'node:child_process';
import { islet, ISLET_BIN } from '../helpers/cli';
import { fixture, reopenTestServer, startTestServer, type TestServer } from '../helpers/server';

// Scoped keys through the real CLI and server: create, list, revoke; what an invoke key may do.
let s: TestServer;
let env: NodeJS.ProcessEnv;
let work: string;
let invokeKey = '';

t.before(async () => {
  s = await startTestServer();
  work = mkdtempSync(path.join(tmpdir(), 'islet-keys-'));
  env = { PATH: process.env.PATH, HOME: work, XDG_CONFIG_HOME: path.join(work, 'config'), ISLET_URL: s.url, ISLET_ACCOUNT: s.accountId, ISLET_API_KEY: s.apiKey };
  await s.deploy('hello', fixture('seed-node8'), 'hello');
});
t.teardown(() => s.stop());

t.test('keys create prints the key once; names are unique; list shows names, scopes and use, never a key', async (t) => {
  const created = await islet(['keys', 'create', '--name', 'caller'], { env });
  t.equal(created.code, 0, created.stderr);
  const m = /^Created key caller \(scope invoke\); it is shown only now, only its hash is stored:\n(isk_[A-Za-z0-9_-]{43})\n$/.exec(created.stdout);
  t.ok(m, 'the key, on a line of its own; invoke is the default scope');
  invokeKey = m![1]!;
  const again = await islet(['keys', 'create', '--name', 'caller'], { env });
  t.equal(again.code, 1);
  t.match(again.stderr, /ERR_CONFLICT: account \w+ already has a key named caller/);
  t.match((await islet(['keys', 'create', '--scope', 'root'], { env })).stderr, /ERR_BAD_REQUEST: invalid key scope "root"/);
  t.match((await islet(['keys', 'create', '--name', 'no spaces'], { env })).stderr, /ERR_BAD_REQUEST: invalid key name/);
  const quiet = await islet(['keys', 'create', '--name', 'ci', '--quiet'], { env });
  t.match(quiet.stdout, /^isk_[A-Za-z0-9_-]{43}\n$/, '--quiet prints the key alone');

  const listed = await islet(['keys', 'list'], { env });
  t.match(listed.stdout, /^NAME\s+SCOPE\s+CREATED\s+LAST USED\n/);
  t.match(listed.stdout, /^default\s+admin\s+\S+Z\s+\S+Z$/m, 'the first key is admin, and in use');
  t.match(listed.stdout, /^caller\s+invoke\s+\S+Z\s+never$/m);
  t.notMatch(listed.stdout, /isk_/, 'no key is ever listed');
  const json = JSON.parse((await islet(['keys', 'list', '--json'], { env })).stdout) as { name: string; sha256?: string }[];
  t.same(json.map((k) => k.name).sort(), ['caller', 'ci', 'default']);
  t.notOk(
    json.some((k) => 'sha256' in k),
    'no digest either',
  );
});

t.test('an invoke key calls functions (directly and from a function), and nothing else: 403 ERR_FORBIDDEN naming the scope', async (t) => {
  const res = await s.call('hello', { key: invokeKey, query: 'name=ada' });
  t.equal(res.status, 200);
  t.equal(await res.text(), '"Hello ADA!"');
  const asCaller = { ...env, ISLET_API_KEY: invokeKey };
  t.equal((await islet(['invoke', 'hello', '--query', 'name=bo'], { env: asCaller })).stdout, '"Hello BO!"\n');
  // The way `islet create` suggests: the function gets an invoke key with --env, while the CLI
  // deploys with the admin key.
  const dir = mkdtempSync(path.join(work, 'caller-'));
  writeFileSync(path.join(dir, 'service.yml'), `functions:\n  caller_sdk:\n    file: function.js\n    entrypoint: callerSdk\n    runtime: node8\n    env:\n      SERVICE_API_KEY:\n`);
  writeFileSync(path.join(dir, 'function.js'), readFileSync(path.join(fixture('seed-node8'), 'function.js')));
  const deployed = await islet(['deploy', 'caller_sdk', '--dir', dir, '--env', `SERVICE_API_KEY=${invokeKey}`], { env });
  t.equal(deployed.code, 0, deployed.stderr);
  // callerSdk returns the callee's body, itself JSON text.
  t.equal(await (await s.call('caller_sdk', { query: 'name=fn' })).text(), JSON.stringify('"Hello FN!"'), 'sdk.invoke with an invoke key');
  t.match((await islet(['deploy', 'caller_sdk', '--dir', dir, '--env', 'no-name'], { env })).stderr, /--env no-name: expected NAME=VALUE/);

  const forbidden = /^islet: ERR_FORBIDDEN: this needs a key with the admin scope; the key caller has the invoke scope, which may only call functions \(the key came from ISLET_API_KEY\)\n$/;
  // Through the CLI, the verbs the issue names; every route below, over HTTP.
  for (const args of [
    ['deploy', 'hello', '--dir', fixture('seed-node8')],
    ['remove', 'hello'],
    ['logs', 'hello'],
    ['rollback', 'hello'],
    ['keys', 'create', '--name', 'escalate', '--scope', 'admin'],
    ['keys', 'revoke', 'default'],
  ]) {
    const result = await islet(args, { env: asCaller });
    t.equal(result.code, 1, args.join(' '));
    if (args[0] === 'deploy') t.match(result.stderr, /ERR_FORBIDDEN/, 'deploy');
    else t.match(result.stderr, forbidden, args.join(' '));
  }
  const base = `${s.url}/v2/accounts/${s.accountId}`;
  const headers = { 'X-Service-Api-Key': invokeKey };
  for (const [method, route] of [
    ['GET', '/functions'],
    ['GET', '/functions/hello'],
    ['PUT', '/functions/hello'],
    ['DELETE', '/functions/hello'],
    ['GET', '/functions/hello/logs'],
    ['GET', '/functions/hello/versions'],
    ['POST', '/functions/hello/rollback'],
    ['PUT', '/functions/hello/traffic'],
    ['POST', '/functions/hello/promote'],
    ['GET', '/functions/hello/stats'],
    ['GET', '/keys'],
    ['POST', '/keys'],
    ['DELETE', '/keys/default'],
  ] as const) {
    const answer = await fetch(`${base}${route}`, { method, headers });
    t.equal(answer.status, 403, `${method} ${route}`);
    t.equal(((await answer.json()) as { errorCode: string }).errorCode, 'ERR_FORBIDDEN', `${method} ${route}`);
  }
  t.ok(s.engine.describe(s.accountId, 'hello'), 'the function is still there');
  const whoami = (await (await fetch(`${s.url}/v2/whoami`, { headers })).json()) as unknown;
  t.same(whoami, { accountId: s.accountId, key: { name: 'caller', scope: 'invoke' } }, 'whoami tells the scope');
  const login = await islet(['login', '--url', s.url, '--account', s.accountId, '--key', invokeKey], { env: { PATH: env.PATH, HOME: work, XDG_CONFIG_HOME: path.join(work, 'login') } });
  t.equal(login.code, 0, `an invoke key can log in (to invoke) ${login.stderr}`);
  const used = JSON.parse((await islet(['keys', 'list', '--json'], { env })).stdout) as { name: string; lastUsedAt?: string }[];
  t.ok(used.find((k) => k.name === 'caller')?.lastUsedAt, 'its use shows in the listing');
});

t.test('islet create steers a function to an invoke key, and the command it shows works as written', async (t) => {
  t.equal((await islet(['create', 'node8', 'steered'], { cwd: work, env })).code, 0);
  const yml = readFileSync(path.join(work, 'steered', 'service.yml'), 'utf8');
  const hint = /^\s*#\s+(islet deploy steered --env SERVICE_API_KEY=\$\(islet keys create --name steered-calls --scope invoke --quiet\))$/m.exec(yml);
  t.ok(hint, 'service.yml shows how to give the function an invoke key');
  const command = hint![1]!.replace(/\bislet /g, `${ISLET_BIN} `);
  const ran = await new Promise<number | null>((resolve) => execFile('sh', ['-c', command], { cwd: work, env }, (err) => resolve(err ? 1 : 0)));
  t.equal(ran, 0, 'the shown command deploys');
  const key = JSON.parse((await islet(['keys', 'list', '--json'], { env })).stdout).find((k: { name: string }) => k.name === 'steered-calls');
  t.equal(key?.scope, 'invoke', 'with a new invoke key');
});

t.test('a revoked key is refused on the next call, although it matched a moment before', async (t) => {
  t.equal((await s.call('hello', { key: invokeKey })).status, 200, 'it works (and is remembered)');
  const revoked = await islet(['keys', 'revoke', 'caller'], { env });
  t.equal(revoked.stdout, 'Revoked key caller\n', revoked.stderr);
  const refused = await s.call('hello', { key: invokeKey });
  t.equal(refused.status, 403);
  t.equal(((await refused.json()) as { errorCode: string }).errorCode, 'ERR_BAD_KEY');
  t.match(await (await s.call('caller_sdk')).text(), /ERR_BAD_KEY/, 'the function holding it is refused too');
  const twice = await islet(['keys', 'revoke', 'caller'], { env });
  t.match(twice.stderr, /ERR_NOT_FOUND: account \w+ has no key named caller in use/);
  t.notMatch((await islet(['keys', 'list'], { env })).stdout, /^caller/m, 'gone from the listing');
});

t.test('the last admin key cannot be revoked; with another admin key, it can', async (t) => {
  const last = await islet(['keys', 'revoke', 'default'], { env });
  t.equal(last.code, 1);
  t.match(last.stderr, /^islet: ERR_CONFLICT: key default is the last admin key of account \w+: create another admin key first \("islet keys create --scope admin"\)\n$/);
  t.equal((await s.call('hello')).status, 200, 'it still works');
  const ops = (await islet(['keys', 'create', '--name', 'ops', '--scope', 'admin', '--quiet'], { env })).stdout.trim();
  t.equal((await islet(['keys', 'revoke', 'default'], { env })).stdout, 'Revoked key default\n', 'a key may revoke itself when another admin remains');
  t.equal((await s.call('hello')).status, 403, 'the old admin key is refused');
  env.ISLET_API_KEY = ops;
  t.equal((await islet(['list'], { env })).code, 0, 'the new one manages');
});

t.test('keys and revocations survive a restart', async (t) => {
  const { dataDir, accountId } = s;
  const ops = env.ISLET_API_KEY!;
  await s.stop();
  s = await reopenTestServer(dataDir, accountId, ops);
  env.ISLET_URL = s.url;
  t.equal((await s.call('hello')).status, 200, 'the admin key created before');
  t.equal((await s.call('hello', { key: invokeKey })).status, 403, 'the revoked key');
  t.match((await islet(['keys', 'list'], { env })).stdout, /^ci\s+invoke/m);
});
