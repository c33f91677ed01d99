import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import t from 'tap';
import { islet, ISLET_BIN, type CliResult } from '../helpers/cli';
import { functionFolder } from '../helpers/functions';
import { startTestServer, type TestServer } from '../helpers/server';

// Issue 26: the islet command as a new user meets it: where its key comes from (item 1) and what
// `islet invoke` shows (item 4).
let s: TestServer;
let work: string;
let invokeKey: string;
/** No credentials at all: each test adds what it is about. */
let bare: NodeJS.ProcessEnv;

t.before(async () => {
  s = await startTestServer();
  work = mkdtempSync(path.join(tmpdir(), 'islet-devloop-cli-'));
  bare = { PATH: process.env.PATH, HOME: work, XDG_CONFIG_HOME: path.join(work, 'config') };
  const created = await fetch(`${s.url}/v2/accounts/${s.accountId}/keys`, {
    method: 'POST',
    headers: { 'X-Service-Api-Key': s.apiKey, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'hello-calls', scope: 'invoke' }),
  });
  invokeKey = ((await created.json()) as { apiKey: string }).apiKey;
  await s.deploy('echo', functionFolder('exports.handler = (body, context) => ({ bytes: context.request.body.length, name: body && body.name });\n'), 'handler');
  await s.deploy('fail', functionFolder('function total(x) {\n  return x.nope();\n}\nexports.handler = (body) => total(body);\n'), 'handler');
  await s.deploy(
    'teapot',
    functionFolder('exports.handler = (b, context) => new context.HTTPResponse({ statusCode: 422, headers: { "content-type": "application/json" }, body: \'{"error":"nope"}\' });\n'),
    'handler',
  );
});
t.teardown(() => s.stop());

const own = () => ({ ...bare, ISLET_URL: s.url, ISLET_ACCOUNT: s.accountId, ISLET_API_KEY: s.apiKey });

/** Stores credentials as `islet login` does, in a config folder of its own. */
async function loggedIn(key: string): Promise<NodeJS.ProcessEnv> {
  const env = { ...bare, XDG_CONFIG_HOME: mkdtempSync(path.join(work, 'config-')) };
  const login = await islet(['login', '--url', s.url, '--account', s.accountId, '--key', key], { env });
  if (login.code !== 0) throw new Error(login.stderr);
  return env;
}

t.test("item 1: ISLET_URL, ISLET_ACCOUNT and ISLET_API_KEY are the CLI's own, with nothing on stderr", async (t) => {
  const listed = await islet(['list', '--json'], { env: own() });
  t.equal(listed.code, 0, listed.stderr);
  t.equal(listed.stderr, '');
  t.ok((JSON.parse(listed.stdout) as { name: string }[]).some((f) => f.name === 'echo'));
  t.equal((await islet(['show', 'url'], { env: own() })).stdout, `${s.url}\n`);
});

t.test('item 1: the old SERVICE_* names still work, with a one-line notice on stderr', async (t) => {
  const old = { ...bare, SERVICE_URL: s.url, SERVICE_ACCOUNT_ID: s.accountId, SERVICE_API_KEY: s.apiKey };
  const listed = await islet(['list'], { env: old });
  t.equal(listed.code, 0, listed.stderr);
  t.match(listed.stdout, /^echo\s+node8/m);
  t.equal(listed.stderr.split('\n').filter(Boolean).length, 1, 'one line');
  t.match(listed.stderr, /^islet: using SERVICE_URL, SERVICE_ACCOUNT_ID and SERVICE_API_KEY, the old names of ISLET_URL, ISLET_ACCOUNT and ISLET_API_KEY/);
});

t.test("item 1: a function's invoke key exported as SERVICE_API_KEY (as service.yml says) is named in the refusal", async (t) => {
  // The case: logged in with the admin key, then `export SERVICE_API_KEY=<invoke key>` for a deploy.
  const env = { ...(await loggedIn(s.apiKey)), SERVICE_API_KEY: invokeKey };
  const listed = await islet(['list'], { env });
  t.equal(listed.code, 1);
  const lines = listed.stderr.trim().split('\n');
  t.match(lines[0], /^islet: using SERVICE_API_KEY, the old name of ISLET_API_KEY/, 'the notice says which variable is read');
  t.match(lines[1], /^islet: ERR_FORBIDDEN: .*the key hello-calls has the invoke scope.* \(the key came from SERVICE_API_KEY\)$/, 'the refusal names the key and its variable');
  // ISLET_API_KEY wins over the old name, and says it ignores it.
  const fixed = await islet(['list'], { env: { ...env, ISLET_API_KEY: s.apiKey } });
  t.equal(fixed.code, 0, fixed.stderr);
  t.equal(fixed.stderr, 'islet: ignoring SERVICE_API_KEY (ISLET_API_KEY is set)\n');
});

t.test('item 1: a refusal names the login file or ISLET_API_KEY when the key came from there', async (t) => {
  const fromFile = await loggedIn(invokeKey);
  const refused = await islet(['keys', 'list'], { env: fromFile });
  t.equal(refused.code, 1);
  t.match(
    refused.stderr,
    new RegExp(`^islet: ERR_FORBIDDEN: .*hello-calls.* \\(the key came from the login file ${path.join(fromFile.XDG_CONFIG_HOME!, 'islet', 'credentials.json').replace(/[.]/g, '\\.')}\\)\\n$`),
  );
  const fromVariable = await islet(['versions', 'echo'], { env: { ...own(), ISLET_API_KEY: invokeKey } });
  t.equal(fromVariable.code, 1);
  t.match(fromVariable.stderr, /\(the key came from ISLET_API_KEY\)\n$/);
  const badKey = await islet(['list'], { env: { ...own(), ISLET_API_KEY: 'isk_not_a_key' } });
  t.match(badKey.stderr, /^islet: ERR_BAD_KEY: .* \(the key came from ISLET_API_KEY\)\n$/);
});

/** The CLI with `input` on its standard input. */
function isletWithInput(args: string[], env: NodeJS.ProcessEnv, input: Buffer): Promise<CliResult> {
  return new Promise((resolve) => {
    const child = spawn(ISLET_BIN, args, { env });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('close', (code) => resolve({ code: code ?? 1, stdout, stderr }));
    child.stdin.end(input);
  });
}

t.test('item 4: a failed call prints its error body on stdout and its status and stack on stderr', async (t) => {
  const failed = await islet(['invoke', 'fail', '--data', '{}'], { env: own() });
  t.equal(failed.code, 1);
  const body = JSON.parse(failed.stdout) as { errorCode: string; message: string; stack: string };
  t.equal(body.errorCode, 'ERR_FUNCTION_FAILED', 'stdout is the body the server sent');
  const lines = failed.stderr.trim().split('\n');
  t.match(lines[0], /^islet: 500 ERR_FUNCTION_FAILED: TypeError: x\.nope is not a function/);
  t.match(lines[1], /^\s+at total \(\/?function\.js:2:\d+\)$/, "the user's stack follows, without repeating the message");
  t.match(lines[2], /^\s+at (exports\.)?handler \(\/?function\.js:4:\d+\)$/);
});

t.test('item 4: an answer over 400 that is not an islet error is the body on stdout, its status on stderr', async (t) => {
  const teapot = await islet(['invoke', 'teapot'], { env: own() });
  t.equal(teapot.code, 1);
  t.equal(teapot.stdout, '{"error":"nope"}\n');
  t.equal(teapot.stderr, 'islet: 422 Unprocessable Entity\n');
});

t.test('item 4: -i / --include prints the status line and the headers first', async (t) => {
  for (const flag of ['-i', '--include']) {
    const shown = await islet(['invoke', 'echo', flag, '--data', '{"name":"Ada"}'], { env: own() });
    t.equal(shown.code, 0, shown.stderr);
    const [head, body] = shown.stdout.split('\n\n');
    const lines = head!.split('\n');
    t.equal(lines[0], 'HTTP/1.1 200 OK', flag);
    t.ok(lines.includes('content-type: application/json'), 'the headers');
    t.ok(
      lines.some((l) => /^x-service-request-id: [0-9a-f]{32}$/.test(l)),
      'the X-Service-* headers among them',
    );
    t.equal(body, '{"bytes":14,"name":"Ada"}\n');
  }
});

t.test('item 4: --data @file and --data @- send a body too large for an argument list', async (t) => {
  // 5 MB: under the 6 MiB request limit, far over what one argument may hold (128 KB on Linux).
  const big = Buffer.from(JSON.stringify({ name: 'big', pad: 'x'.repeat(5 * 1024 * 1024) }));
  const file = path.join(work, 'big.json');
  writeFileSync(file, big);
  const fromFile = await islet(['invoke', 'echo', '--data', `@${file}`], { env: own() });
  t.equal(fromFile.code, 0, fromFile.stderr);
  t.same(JSON.parse(fromFile.stdout), { bytes: big.length, name: 'big' });
  const fromStdin = await isletWithInput(['invoke', 'echo', '--data', '@-'], own(), big);
  t.equal(fromStdin.code, 0, fromStdin.stderr);
  t.same(JSON.parse(fromStdin.stdout), { bytes: big.length, name: 'big' });
  const missing = await islet(['invoke', 'echo', '--data', '@/nonexistent.json'], { env: own() });
  t.equal(missing.code, 1);
  t.match(missing.stderr, /^islet: --data @\/nonexistent\.json: cannot read \/nonexistent\.json: ENOENT/);
});
