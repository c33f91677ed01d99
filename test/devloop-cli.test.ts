import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import t from 'tap';
import { islet } from './helpers/cli';
import { functionFolder } from './helpers/functions';
import { startTestServer, type TestServer } from './helpers/server';

// Issue 26: the islet command as a new user meets it: where its key comes from (item 1).
let s: TestServer;
let work: string;
let invokeKey: string;
/** No credentials at all: each test adds what it is about. */
let bare: NodeJS.ProcessEnv;

t.setTimeout(300_000);

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

t.test('item 1: ISLET_URL, ISLET_ACCOUNT and ISLET_API_KEY are the CLI\'s own, with nothing on stderr', async (t) => {
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

t.test('item 1: a function\'s invoke key exported as SERVICE_API_KEY (as service.yml says) is named in the refusal', async (t) => {
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
  t.match(refused.stderr, new RegExp(`^islet: ERR_FORBIDDEN: .*hello-calls.* \\(the key came from the login file ${path.join(fromFile.XDG_CONFIG_HOME!, 'islet', 'credentials.json').replace(/[.]/g, '\\.')}\\)\\n$`));
  const fromVariable = await islet(['versions', 'echo'], { env: { ...own(), ISLET_API_KEY: invokeKey } });
  t.equal(fromVariable.code, 1);
  t.match(fromVariable.stderr, /\(the key came from ISLET_API_KEY\)\n$/);
  const badKey = await islet(['list'], { env: { ...own(), ISLET_API_KEY: 'isk_not_a_key' } });
  t.match(badKey.stderr, /^islet: ERR_BAD_KEY: .* \(the key came from ISLET_API_KEY\)\n$/);
});
