import { readFileSync, statSync } from 'node:fs';
import * as path from 'node:path';
import t from 'tap';
import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cliWorkspace, islet, ISLET_BIN, isletProcess, serviceFolder } from '../helpers/cli';
import { fixture, startTestServer, type TestServer } from '../helpers/server';
import { eventually } from '../helpers/supervised';

// The islet CLI against a real server: the verbs besides the create → deploy → invoke flow
// (test/cli/cli.test.ts), in a file of their own so that each file stays well within tap's limit
// on a loaded machine. Commands run in this process (test/helpers/cli.ts); --help, --version, an
// unknown verb's exit status, logs --tail and the terminal's progress run the executable.
let s: TestServer;
let env: NodeJS.ProcessEnv;
let work: string;

t.before(async () => {
  s = await startTestServer();
  ({ work, env } = cliWorkspace(s));
});
t.teardown(() => s.stop());

function folder(yml: string, files: Record<string, string> = { 'function.js': 'exports.handler = () => process.env;\n' }): string {
  return serviceFolder(work, yml, files);
}

t.test('schedules and asynchronous invocations: islet schedules, invoke --async, invocations', async (t) => {
  const source = "exports.handler = (body, ctx) => { if (body && body.fail) throw new Error('asked to fail'); return { got: body, scheduled: Boolean(ctx.scheduled) }; };\n";
  const dir = folder('functions:\n  cron_cli:\n    file: function.js\n    runtime: node8\n    schedule: "* * * * * *"\n    timezone: Europe/Paris\n    retries: 0\n', { 'function.js': source });
  const deployed = await islet(['deploy', 'cron_cli', '--dir', dir], { env });
  t.equal(deployed.code, 0, deployed.stderr);
  // Waits go through the API: a CLI command per poll would take most of this test's time.
  const api = async (p: string, init: RequestInit = {}) => (await fetch(`${s.url}${p}`, { ...init, headers: { 'X-Service-Api-Key': s.apiKey } })).json() as Promise<Record<string, any>>;
  const lastRun = async () => (await api(`/v2/accounts/${s.accountId}/schedules`)).schedules.find((v: { function: string }) => v.function === 'cron_cli')?.last?.status;
  t.ok(await eventually(async () => (await lastRun()) !== undefined, 30_000), 'the schedule ran');
  const table = await islet(['schedules'], { env });
  t.match(table.stdout, /^FUNCTION\s+SCHEDULE\s+TIME ZONE\s+NEXT\s+LAST\s+OUTCOME$/m);
  const row = new RegExp(`^cron_cli\\s+\\* \\* \\* \\* \\* \\*\\s+Europe/Paris\\s+(\\S+Z)\\s+\\S+Z\\s+200$`, 'm').exec(table.stdout);
  t.ok(row, `its next tick, its last run and how it ended:\n${table.stdout}`);
  t.ok(row && Date.parse(row[1]!) > Date.now() - 5000, 'the next tick is to come');

  const queued = await islet(['invoke', 'cron_cli', '--async', '--data', '{"n":7}'], { env });
  t.equal(queued.code, 0, queued.stderr);
  const id = queued.stdout.trim();
  t.match(id, /^[0-9a-f]{32}$/, 'prints the invocation id');
  const failing = (await api(`/v2/async/${s.accountId}/cron_cli`, { method: 'POST', body: '{"fail":true}' })).invocationId as string;
  const status = async (which: string) => (await api(`/v2/accounts/${s.accountId}/invocations/${which}`)).status;
  t.ok(await eventually(async () => (await status(id)) === 'succeeded' && (await status(failing)) === 'failed', 30_000), 'one succeeded, one failed');
  const one = await islet(['invocations', 'cron_cli', id], { env });
  t.match(
    one.stdout,
    new RegExp(`^${id}  succeeded  attempts 1  accepted \\S+Z  finished \\S+Z\n  request id [0-9a-f]{32} \\(islet logs cron_cli\\)\n  answered 200\n  \\{"got":\\{"n":7\\},"scheduled":false\\}\n$`),
    one.stdout,
  );
  const list = await islet(['invocations', 'cron_cli'], { env });
  t.match(list.stdout, new RegExp(`^${failing}\\s+failed\\s+1\\s+\\S+\\s+\\S+\\s+ERR_FUNCTION_FAILED$`, 'm'), 'retries: 0 fails at the first throw, with its error');
  t.match(list.stdout, new RegExp(`^${id}\\s+succeeded\\s+1\\s`, 'm'));
  t.ok(list.stdout.indexOf(failing) < list.stdout.indexOf(id), 'newest first');
  await api(`/v2/accounts/${s.accountId}/functions/cron_cli`, { method: 'DELETE' });
  t.same(
    (await api(`/v2/accounts/${s.accountId}/schedules`)).schedules.filter((v: { function: string }) => v.function === 'cron_cli'),
    [],
    'a removed function has no schedule',
  );
});

t.test('a function with an npm dependency in node_modules deploys and uses it', async (t) => {
  const result = await islet(['deploy', 'greet_deps', '--dir', fixture('deps-node8')], { env });
  t.equal(result.code, 0, result.stderr);
  const out = await islet(['invoke', 'greet_deps', '--query', 'name=npm', '--method', 'GET'], { env });
  t.equal(out.stdout, '"Hi npm! (v2, from json)"\n');
});

t.test('redeploy under load: no call fails, every answer is from the old or the new version', async (t) => {
  const yml = 'functions:\n  loaded:\n    file: function.js\n    entrypoint: handler\n    runtime: node8\n';
  const v1 = folder(yml, { 'function.js': 'exports.handler = () => "v1";\n' });
  const v2 = folder(yml, { 'function.js': 'exports.handler = () => "v2";\n' });
  t.equal((await islet(['deploy', 'loaded', '--dir', v1], { env })).code, 0);
  let stop = false;
  const answers: string[] = [];
  const failures: string[] = [];
  const loop = async () => {
    while (!stop) {
      const res = await s.call('loaded');
      const text = await res.text();
      if (res.status === 200) answers.push(text);
      else failures.push(`${res.status} ${text}`);
    }
  };
  const loops = [loop(), loop(), loop(), loop()];
  await new Promise((r) => setTimeout(r, 100));
  const redeploy = await islet(['deploy', 'loaded', '--dir', v2], { env });
  await new Promise((r) => setTimeout(r, 100));
  stop = true;
  await Promise.all(loops);
  t.equal(redeploy.code, 0, redeploy.stderr);
  t.same(failures, [], 'no call failed');
  t.same([...new Set(answers)].sort(), ['"v1"', '"v2"'], `${answers.length} answers, all v1 or v2`);
  t.equal(answers[answers.length - 1], '"v2"', 'the new version serves after the deploy');
});

t.test('logs --tail prints new lines as calls happen', async (t) => {
  const dir = folder('functions:\n  tailed:\n    file: function.js\n    entrypoint: handler\n    runtime: node8\n', {
    'function.js': 'exports.handler = (body) => { console.log("tail marker", body.n); return body.n; };\n',
  });
  t.equal((await islet(['deploy', 'tailed', '--dir', dir], { env })).code, 0);
  const tail = spawn(ISLET_BIN, ['logs', 'tailed', '--tail'], { env });
  let output = '';
  tail.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  try {
    await new Promise((r) => setTimeout(r, 800));
    await (await s.call('tailed', { body: '{"n":1}' })).text();
    await (await s.call('tailed', { body: '{"n":2}' })).text();
    const deadline = Date.now() + 10_000;
    while (!/tail marker 2/.test(output) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    t.match(output, /INFO\s+tail marker 1\n/);
    t.match(output, /INFO\s+tail marker 2\n/);
    t.equal(output.match(/tail marker 1/g)?.length, 1, 'each line printed once');
  } finally {
    tail.kill();
  }
});

t.test('upload progress is drawn on a terminal only, not into a pipe or a log', async (t) => {
  const dir = folder('functions:\n  heavy:\n    file: function.js\n    entrypoint: handler\n    runtime: node8\n', {
    'function.js': 'exports.handler = () => "heavy";\n',
    'blob.bin': randomBytes(3 * 1024 * 1024).toString('base64'),
  });
  const piped = await islet(['deploy', 'heavy', '--dir', dir], { env });
  t.equal(piped.code, 0, piped.stderr);
  t.equal(piped.stderr, '', 'nothing on a stderr that is not a terminal');
  t.equal((await islet(['invoke', 'heavy'], { env })).stdout, '"heavy"\n');
  // script(1) runs the CLI on a pseudo-terminal and copies what it draws to its own stdout.
  const onTerminal = await new Promise<{ code: number; out: string }>((resolve) => {
    execFile('script', ['-qec', `${ISLET_BIN} deploy heavy --dir ${dir}`, '/dev/null'], { env, timeout: 60_000 }, (error, stdout) => resolve({ code: error ? 1 : 0, out: String(stdout) }));
  });
  t.equal(onTerminal.code, 0, onTerminal.out);
  t.match(onTerminal.out, /Uploading [\d.]+ MB: 100%/);
});

t.test('a key of account A cannot deploy, remove, list or read logs of account B (403)', async (t) => {
  const other = await s.createAccount();
  const asOther = { ...env, ISLET_ACCOUNT: s.accountId, ISLET_API_KEY: other.apiKey };
  const dir = fixture('deps-node8');
  for (const args of [['deploy', 'greet_deps', '--dir', dir], ['remove', 'greet_deps'], ['list'], ['logs', 'greet_deps']]) {
    const result = await islet(args, { env: asOther });
    t.equal(result.code, 1, args[0]);
    t.match(result.stderr, /ERR_BAD_KEY/, args[0]);
  }
  const base = `${s.url}/v2/accounts/${s.accountId}/functions`;
  const headers = { 'X-Service-Api-Key': other.apiKey };
  t.equal((await fetch(base, { headers })).status, 403);
  t.equal((await fetch(`${base}/greet_deps`, { method: 'DELETE', headers })).status, 403);
  t.equal((await fetch(`${base}/greet_deps/logs`, { headers })).status, 403);
  t.equal((await fetch(`${base}/greet_deps`, { method: 'PUT', headers, body: 'x' })).status, 403);
  t.equal((await fetch(base)).status, 401, 'no key at all is 401');
  t.ok(s.engine.describe(s.accountId, 'greet_deps'), 'the function is still there');
});

t.test('login checks the key with the server and stores it readable only by the user; show prints it', async (t) => {
  const plain = { PATH: env.PATH, HOME: work, XDG_CONFIG_HOME: path.join(work, 'login-config') };
  const bad = await islet(['login', '--url', s.url, '--account', s.accountId, '--key', 'isk_wrong'], { env: plain });
  t.equal(bad.code, 1);
  t.match(bad.stderr, /ERR_BAD_KEY/);
  const ok = await islet(['login', '--url', s.url, '--account', s.accountId, '--key', s.apiKey], { env: plain });
  t.equal(ok.code, 0, ok.stderr);
  const file = path.join(plain.XDG_CONFIG_HOME, 'islet', 'credentials.json');
  t.equal(statSync(file).mode & 0o777, 0o600);
  t.same(JSON.parse(readFileSync(file, 'utf8')), { url: s.url, accountId: s.accountId, apiKey: s.apiKey });
  t.equal((await islet(['show', 'apiKey'], { env: plain })).stdout, `${s.apiKey}\n`);
  t.equal((await islet(['show', 'accountId'], { env: plain })).stdout, `${s.accountId}\n`);
  t.equal((await islet(['show', 'url'], { env: { ...plain, ISLET_URL: 'http://example.test:1' } })).stdout, 'http://example.test:1\n', 'env overrides the stored value');
});

t.test('perf prints totals and latency percentiles', async (t) => {
  const result = await islet(['perf', 'greet_deps', '-n', '50', '-c', '2'], { env });
  t.equal(result.code, 0, result.stderr);
  t.match(result.stdout, /Invocations:\s+50\n/);
  t.match(result.stdout, /Errors:\s+0\n/);
  t.match(result.stdout, /Rate:\s+[\d.]+ invocations\/s/);
  t.match(result.stdout, /p50 [\d.]+\s+p90 [\d.]+\s+p95 [\d.]+\s+p99 [\d.]+/);
  t.match(result.stdout, /mean [\d.]+\s+min [\d.]+\s+max [\d.]+/);
});

t.test('account create (offline) prints a working account; --json is valid JSON', async (t) => {
  const result = await islet(['account', 'create', '--data', s.dataDir, '--json'], { env });
  t.equal(result.code, 0, result.stderr);
  const account = JSON.parse(result.stdout) as { accountId: string; apiKey: string };
  t.match(account.accountId, /^[a-z0-9]{16}$/);
  t.match(account.apiKey, /^isk_/);
});

t.test('--help lists every verb, and every verb has --help with its options', async (t) => {
  const help = await isletProcess(['--help'], { env });
  for (const verb of ['create', 'deploy', 'invoke', 'remove', 'list', 'logs', 'login', 'show', 'perf', 'serve', 'account', 'invocations', 'schedules']) {
    t.match(help.stdout, new RegExp(`^\\s+${verb}\\b`, 'm'), verb);
  }
  const options: Record<string, string[]> = {
    deploy: ['--dir'],
    invoke: ['--data', '--query', '--method', '--path', '--async'],
    invocations: ['--limit', '--json'],
    schedules: ['--json'],
    list: ['--json'],
    logs: ['--since', '--tail'],
    login: ['--url', '--account', '--key'],
    perf: ['--number', '--concurrency'],
    serve: ['--port', '--console-port', '--console-origin', '--host', '--data'],
    account: ['--data', '--json'],
  };
  for (const [verb, flags] of Object.entries(options)) {
    const out = (await islet([verb, '--help'], { env })).stdout;
    for (const flag of flags) t.match(out, flag, `${verb} --help shows ${flag}`);
  }
  t.match((await isletProcess(['--version'], { env })).stdout, /^islet\/\d+\.\d+\.\d+/);
  const unknown = await isletProcess(['frobnicate'], { env });
  t.equal(unknown.code, 1);
  t.match(unknown.stderr, /unknown command "frobnicate"/);
});
