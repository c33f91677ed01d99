import { execFile } from 'node:child_process';
import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import t from 'tap';
import { islet, ISLET_BIN } from '../helpers/cli';
import { startTestServer, type TestServer } from '../helpers/server';

// Issue 26, item 8: what `islet deploy` says and uploads, runtime names, and Node server apps.
let s: TestServer;
let work: string;
let env: NodeJS.ProcessEnv;

t.before(async () => {
  s = await startTestServer();
  work = mkdtempSync(path.join(tmpdir(), 'islet-devloop-deploy-'));
  env = { PATH: `${path.dirname(ISLET_BIN)}:${process.env.PATH}`, HOME: work, XDG_CONFIG_HOME: path.join(work, 'config'), ISLET_URL: s.url, ISLET_ACCOUNT: s.accountId, ISLET_API_KEY: s.apiKey };
});
t.teardown(() => s.stop());

/** A function folder with service.yml (node8 unless said) and the given files. */
function folder(name: string, files: Record<string, string | Buffer>, runtime = 'node8'): string {
  const dir = path.join(work, name);
  const all = { 'service.yml': `functions:\n  ${name}:\n    file: function.js\n    entrypoint: handler\n    runtime: ${runtime}\n`, ...files };
  for (const [file, content] of Object.entries(all)) {
    mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    writeFileSync(path.join(dir, file), content);
  }
  return dir;
}

const MB = Buffer.alloc(1024 * 1024, 'x');

/** A package used through another one, which reads its own data file at run time (fs and __dirname). */
const USED = {
  'node_modules/used/package.json': '{"name":"used","main":"index.js"}',
  'node_modules/used/index.js': 'const fs = require("fs");\nmodule.exports = () => require("dep")() + fs.readFileSync(__dirname + "/data.txt", "utf8").trim();\n',
  'node_modules/used/data.txt': '+data\n',
  'node_modules/used/node_modules/dep/package.json': '{"name":"dep"}',
  'node_modules/used/node_modules/dep/index.js': 'module.exports = () => "dep";\n',
  'node_modules/used/node_modules/stale/index.js': 'module.exports = 1;\n',
  'node_modules/unused/package.json': '{"name":"unused"}',
  'node_modules/unused/big.bin': MB,
  'node_modules/@scope/unused/index.js': 'module.exports = 2;\n',
  'node_modules/@scope/unused/big.bin': MB,
  'node_modules/.package-lock.json': '{}',
};

async function versionBytes(name: string): Promise<number[]> {
  const res = await fetch(`${s.url}/v2/accounts/${s.accountId}/functions/${name}/versions`, { headers: { 'X-Service-Api-Key': s.apiKey } });
  return ((await res.json()) as { versions: { bytes: number }[] }).versions.map((v) => v.bytes);
}

t.test('deploy prints the version it made, leaves out the packages the code never imports, and its curl line pastes as it is', async (t) => {
  folder('modules', { 'function.js': 'const used = require("used");\nexports.handler = () => used();\n', ...USED });
  const first = await islet(['deploy', 'modules'], { cwd: work, env });
  t.equal(first.code, 0, first.stderr);
  const lines = first.stdout.split('\n');
  t.equal(lines[0], 'Deployed function modules (version 1)');
  // unused (2 files), @scope/unused (2), used/node_modules/stale (1), .package-lock.json (1).
  t.equal(lines[1], 'Left out 6 files (2.0 MB) of node_modules: packages the code never imports');
  t.equal(lines[3], '  islet invoke modules');
  const curl = lines[4]!;
  t.equal(curl, `  curl -H "X-Service-Api-Key: $(islet show apiKey)" ${s.url}/v2/run/${s.accountId}/modules`);
  const second = await islet(['deploy', 'modules'], { cwd: work, env });
  t.match(second.stdout, /^Deployed function modules \(version 2\)\n/);
  for (const bytes of await versionBytes('modules')) t.ok(bytes < 64 * 1024, `a version keeps ${bytes} bytes, not the 2 MB of packages never imported`);

  // The line as printed, pasted into a shell: the package kept whole answers, its data file with it.
  const pasted = await new Promise<string>((resolve, reject) =>
    execFile('bash', ['-c', curl.trim()], { env, cwd: work }, (err, stdout, stderr) => (err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(stdout))),
  );
  t.equal(pasted, '"dep+data"');
});

t.test("a public function's curl line needs no key", async (t) => {
  folder('public_hi', { 'function.js': 'exports.handler = () => "hi";\n' });
  const deployed = await islet(['deploy', 'public_hi'], { cwd: work, env });
  t.equal(deployed.code, 0, deployed.stderr);
  t.equal(deployed.stdout.split('\n')[3], `  curl ${s.url}/v2/run/${s.accountId}/public_hi`);
  t.notMatch(deployed.stdout, /Left out/);
});

t.test('a require of a computed name keeps all of node_modules (only a run could tell which)', async (t) => {
  folder('computed', {
    'function.js': 'exports.handler = (body) => require(body.name || "unused");\n',
    'node_modules/unused/index.js': 'module.exports = "found at run time";\n',
    'node_modules/unused/big.bin': MB,
  });
  const deployed = await islet(['deploy', 'computed'], { cwd: work, env });
  t.equal(deployed.code, 0, deployed.stderr);
  t.notMatch(deployed.stdout, /Left out/);
  const called = await islet(['invoke', 'computed'], { cwd: work, env });
  t.equal(called.stdout, '"found at run time"\n');
});

t.test('node18, node20, nodejs and python3.12 are refused with the runtime name to write', async (t) => {
  for (const [runtime, hint] of [
    ['node20', 'write runtime: node8'],
    ['nodejs', 'write runtime: node8'],
    ['nodejs18.x', 'write runtime: node8'],
    ['python3.12', 'write runtime: python3'],
  ] as const) {
    folder(`rt_${runtime.replace(/\W/g, '')}`, { 'function.js': 'exports.handler = () => 1;\n' }, runtime);
    const deployed = await islet(['deploy', `rt_${runtime.replace(/\W/g, '')}`], { cwd: work, env });
    t.equal(deployed.code, 1);
    t.match(deployed.stderr, new RegExp(`service\\.yml:5: functions\\.\\w+\\.runtime: unknown runtime "${runtime.replace('.', '\\.')}": .*${hint}`), runtime);
  }
  // The server says the same to any other client.
  const form = new FormData();
  form.set('spec', JSON.stringify({ runtime: 'node18', file: 'function.js' }));
  form.set('bundle', new Blob([Buffer.alloc(0)]), 'bundle.tar.gz');
  const res = await fetch(`${s.url}/v2/accounts/${s.accountId}/functions/api_node18`, { method: 'PUT', headers: { 'X-Service-Api-Key': s.apiKey }, body: form });
  t.equal(res.status, 400);
  t.match(((await res.json()) as { message: string }).message, /unknown runtime "node18": JavaScript and TypeScript run as node8 .*write runtime: node8/);
});

// What Express 4 does as it loads and listens (lib/request.js, lib/response.js, lib/application.js).
const EXPRESS = {
  'node_modules/express/package.json': '{"name":"express","main":"index.js"}',
  'node_modules/express/index.js': [
    'var http = require("http");',
    'var req = Object.create(http.IncomingMessage.prototype);',
    'var res = Object.create(http.ServerResponse.prototype);',
    'module.exports = function createApplication() {',
    '  var app = function (req, res, next) { app.handle(req, res, next); };',
    '  app.request = Object.create(req); app.response = Object.create(res);',
    '  app.use = function () { return app; };',
    '  app.get = function () { return app; };',
    '  app.handle = function (req, res) { res.setHeader("x", "y"); };',
    '  app.listen = function () { var server = http.createServer(this); return server.listen.apply(server, arguments); };',
    '  return app;',
    '};',
    '',
  ].join('\n'),
};

t.test('an Express app exported as a handler gets a sentence saying how it runs; one that listens deploys', async (t) => {
  const app = 'const express = require("express");\nconst app = express();\napp.get("/", (req, res) => res.send("hi"));\n';
  for (const [name, tail, says] of [
    [
      'express_handler',
      'exports.handler = app;\n',
      /function\.js: its export "handler" is a Node server app \(Express, Connect, Koa or Fastify\), which is not a handler: call its listen\(\) as the module loads/,
    ],
    ['express_module', 'module.exports = app;\n', /function\.js: its export is a Node server app .*[Ee]xport handler\(body, context\), or a default export with fetch\(request, env, ctx\)/],
  ] as const) {
    folder(name, { 'function.js': app + tail, ...EXPRESS });
    const deployed = await islet(['deploy', name], { cwd: work, env });
    t.equal(deployed.code, 1, name);
    t.match(deployed.stderr, says, name);
    t.notMatch(deployed.stderr, /prototype may only be/, name);
  }
  folder('express_listen', { 'function.js': `${app}app.listen(3000);\n`, ...EXPRESS });
  const listening = await islet(['deploy', 'express_listen'], { cwd: work, env });
  t.equal(listening.code, 0, `an app that listens is served (${listening.stderr})`);
});
