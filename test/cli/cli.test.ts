import t from 'tap';
import { cliWorkspace, islet, isletProcess, serviceFolder } from '../helpers/cli';
import { startTestServer, type TestServer } from '../helpers/server';

// The islet CLI against a real server: commands run in this process through the CLI's own entry
// (test/helpers/cli.ts), the first and the last of each flow through the real executable.
let s: TestServer;
let env: NodeJS.ProcessEnv;
let work: string;

t.before(async () => {
  s = await startTestServer();
  ({ work, env } = cliWorkspace(s));
});
t.teardown(() => s.stop());

const runtimes = async (): Promise<string[]> => ((await (await fetch(`${s.url}/healthz`, { headers: { 'X-Service-Api-Key': s.apiKey } })).json()) as { runtimes?: string[] }).runtimes ?? [];

for (const runtime of ['node8', 'python2']) {
  t.test(`create → deploy → invoke → list → logs → remove → invoke, ${runtime}`, async (t) => {
    if (!(await runtimes()).includes(runtime)) {
      t.plan(0, `skip: the ${runtime} runtime is not available on this server yet`);
      return;
    }
    const name = `flow_${runtime}`;
    const created = await isletProcess(['create', runtime, name], { cwd: work, env });
    t.equal(created.code, 0, created.stderr);
    t.equal(created.stdout, `Created function ${name} in ./${name}\n  (use "islet deploy ${name}" to deploy the function)\n`);
    const again = await islet(['create', runtime, name], { cwd: work, env });
    t.equal(again.code, 1);
    t.match(again.stderr, /already exists/);

    const deployed = await islet(['deploy', name], { cwd: work, env });
    t.equal(deployed.code, 0, deployed.stderr);
    t.equal(
      deployed.stdout,
      `Deployed function ${name} (version 1)\nInvoke with one of:\n  islet invoke ${name}\n  curl -H "X-Service-Api-Key: $(islet show apiKey)" ${s.url}/v2/run/${s.accountId}/${name}\n`,
    );
    const invoked = await islet(['invoke', name, '--query', 'name=Ada'], { cwd: work, env });
    t.equal(invoked.stdout, '"Hello Ada!"\n');
    const withData = await islet(['invoke', name, '--data', '{"name":"Bob"}'], { cwd: work, env });
    t.equal(withData.stdout, '"Hello Bob!"\n');

    const listed = await islet(['list', '--json'], { cwd: work, env });
    const functions = JSON.parse(listed.stdout) as { name: string; runtime: string }[];
    t.ok(
      functions.some((f) => f.name === name && f.runtime === runtime),
      'list --json is valid JSON with the function',
    );
    const table = await islet(['list'], { cwd: work, env });
    t.match(table.stdout, new RegExp(`^${name}\\s+${runtime}`, 'm'));

    const logs = await islet(['logs', name], { cwd: work, env });
    t.equal(logs.code, 0);
    t.match(logs.stdout, /^\S+Z [0-9a-f]{32} CALL\s+POST 200 [\d.]+ ms handler, [\d.]+ ms total$/m, 'one line per call with its durations');
    const recent = await islet(['logs', name, '--since', '1h'], { cwd: work, env });
    t.equal(recent.stdout.trim().split('\n').length, 2, 'both calls within the last hour');
    const future = await islet(['logs', name, '--since', String(Math.floor(Date.now() / 1000) + 3600)], { cwd: work, env });
    t.equal(future.stdout, '', 'nothing after an hour from now');

    const removed = await islet(['remove', name], { cwd: work, env });
    t.equal(removed.stdout, `Removed function ${name}\n`);
    const gone = await isletProcess(['invoke', name], { cwd: work, env });
    t.equal(gone.code, 1);
    t.match(gone.stderr, /^islet: 404 ERR_NO_SUCH_FUNCTION/);
  });
}

function folder(yml: string, files: Record<string, string> = { 'function.js': 'exports.handler = () => process.env;\n' }): string {
  return serviceFolder(work, yml, files);
}

t.test('env: an empty value is taken from the shell; unset, the deploy fails naming the variable', async (t) => {
  const dir = folder('functions:\n  envy:\n    file: function.js\n    entrypoint: handler\n    runtime: node8\n    env:\n      FIXED: from-file\n      TOKEN:\n');
  const ok = await islet(['deploy', 'envy', '--dir', dir], { env: { ...env, TOKEN: 'from-shell' } });
  t.equal(ok.code, 0, ok.stderr);
  const out = await islet(['invoke', 'envy'], { env });
  t.same(JSON.parse(out.stdout), { FIXED: 'from-file', TOKEN: 'from-shell', SERVICE_ACCOUNT_ID: s.accountId });
  const unset = await islet(['deploy', 'envy', '--dir', dir], { env });
  t.equal(unset.code, 1);
  t.match(unset.stderr, /service\.yml:8: functions\.envy\.env\.TOKEN: .*TOKEN is not set/);
});

t.test('service.yml mistakes name the file, line and key, and deploy nothing', async (t) => {
  const cases: [string, RegExp][] = [
    ['functions:\n  bad:\n    file: function.js\n    runtime: node8\n   entrypoint: x\n', /service\.yml:5:/],
    ['functions:\n  bad:\n    file: function.js\n    entrypoint: handler\n    runtime: node9\n', /service\.yml:5: functions\.bad\.runtime: unknown runtime "node9"/],
    ['functions:\n  bad:\n    file: nope.js\n    entrypoint: handler\n    runtime: node8\n', /service\.yml:3: functions\.bad\.file: nope\.js does not exist/],
    [
      'functions:\n  bad:\n    file: function.js\n    entrypoint: handler\n    runtime: node8\n    env:\n      PORT: 8080\n',
      /service\.yml:7: functions\.bad\.env\.PORT: value must be a string, got number/,
    ],
    ['functions:\n  bad:\n    file: function.js\n    entrypoint: missing\n    runtime: node8\n', /service\.yml:4: .*does not export a function named "missing"/],
    ['functions:\n  other:\n    file: function.js\n    runtime: node8\n', /functions\.bad: not found \(functions in this file: other\)/],
  ];
  for (const [yml, expected] of cases) {
    const result = await islet(['deploy', 'bad', '--dir', folder(yml)], { env });
    t.equal(result.code, 1);
    t.match(result.stderr, expected);
  }
  const listed = JSON.parse((await islet(['list', '--json'], { env })).stdout) as { name: string }[];
  t.notOk(
    listed.some((f) => f.name === 'bad'),
    'nothing deployed',
  );
});
