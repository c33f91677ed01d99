import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import t from 'tap';
import type { LogEntry } from '../../engine/logs';
import { stackBelow } from '../../engine/log-text';
import { islet } from '../helpers/cli';
import { functionFolder } from '../helpers/functions';
import { startTestServer, type TestServer } from '../helpers/server';

// Issue 26, item 7: logs that read well: no colour codes, each error said once, Python's warnings
// as warnings of the call that caused them, and a call line with the cold start's time in it.
let s: TestServer;
let env: NodeJS.ProcessEnv;

const COLOURED = `exports.handler = () => { console.log('\\x1b[32m<-- \\x1b[1mGET\\x1b[22m /\\x1b[39m'); console.log('plain'); return 1; };\n`;
const WARNS = `import warnings

class RequestsDependencyWarning(Warning):
    pass

warnings.warn("urllib3 (2.0) or chardet (5.2) doesn't match a supported version!", RequestsDependencyWarning)

def handler(body, req):
    warnings.warn('called with %s' % req.method, UserWarning)
    return 'ok'
`;

t.before(async () => {
  // One warm instance at most: a call of one function makes the next call of the other a cold start.
  s = await startTestServer({ limits: { maxWarmInstances: 1 } });
  const work = mkdtempSync(path.join(tmpdir(), 'islet-devloop-logs-'));
  env = { PATH: process.env.PATH, HOME: work, XDG_CONFIG_HOME: path.join(work, 'config'), ISLET_URL: s.url, ISLET_ACCOUNT: s.accountId, ISLET_API_KEY: s.apiKey };
  await s.deploy('coloured', functionFolder(COLOURED), 'handler');
  const py = mkdtempSync(path.join(tmpdir(), 'islet-warns-'));
  writeFileSync(path.join(py, 'function.py'), WARNS);
  await s.deployPython('warns', py, 'handler');
});
t.teardown(() => s.stop());

async function entriesOf(name: string): Promise<LogEntry[]> {
  await s.internals.logs.flush();
  return s.engine.readLogs(s.accountId, name, {});
}

t.test('colour codes are kept out of the logs: the API, islet logs and its --json', async (t) => {
  const res = await s.call('coloured');
  t.equal(res.status, 200);
  const requestId = res.headers.get('x-service-request-id')!;
  const lines = (await entriesOf('coloured')).filter((e) => e.requestId === requestId && e.level === 'info');
  t.same(
    lines.map((e) => e.message),
    ['<-- GET /', 'plain'],
  );
  const text = await islet(['logs', 'coloured'], { env });
  t.equal(text.code, 0, text.stderr);
  t.notMatch(text.stdout, /\x1b/, 'no escape in islet logs');
  t.match(text.stdout, new RegExp(`${requestId} INFO  <-- GET /\\n`));
  t.notMatch((await islet(['logs', 'coloured', '--json'], { env })).stdout, /\\u001b|\x1b/, 'nor in --json');
});

t.test('a Python warning is a warn line of the call that caused it, at load and in the handler', async (t) => {
  const atDeploy = (await entriesOf('warns')).filter((e) => e.level === 'warn');
  t.equal(atDeploy.length, 1, "the deploy's load: its import-time warning, once");
  t.match(atDeploy[0]?.message, /^function\.py:6: RequestsDependencyWarning: /);
  // The deploy's instance served no call yet; a call of another function takes the one warm place.
  t.equal((await s.call('coloured')).status, 200);
  const res = await s.call('warns', { method: 'PUT', body: '{}' });
  t.equal(res.status, 200, await res.clone().text());
  const requestId = res.headers.get('x-service-request-id')!;
  const mine = (await entriesOf('warns')).filter((e) => e.requestId === requestId);
  const warnings = mine.filter((e) => e.level === 'warn');
  t.equal(warnings.length, 2, 'both warnings, as one line each');
  t.match(
    warnings[0]?.message,
    /^function\.py:6: RequestsDependencyWarning: urllib3 \(2\.0\) or chardet \(5\.2\) doesn't match a supported version!/,
    'the import-time one, with the call that cold-started the instance',
  );
  t.match(warnings[1]?.message, /^function\.py:9: UserWarning: called with PUT/);
  t.equal(mine.filter((e) => e.level === 'error').length, 0, 'nothing at error');
  t.notOk(
    (await entriesOf('warns')).some((e) => e.level === 'error'),
    'no error line at all',
  );
});

t.test("the call line has the handler's time and the whole wait, cold start included", async (t) => {
  const first = await s.call('warns', { method: 'GET' });
  t.equal(first.status, 200);
  for (const name of ['coloured', 'warns']) {
    const calls = (await entriesOf(name)).filter((e) => e.level === 'call');
    t.ok(calls.length > 0, name);
    for (const call of calls) {
      const m = /^(GET|PUT) 200 ([\d.]+) ms handler, ([\d.]+) ms total$/.exec(call.message);
      t.ok(m, `${name}: ${call.message}`);
      if (m) t.ok(Number(m[3]) >= Number(m[2]), 'the total holds the handler');
    }
  }
  const cli = await islet(['logs', 'warns', '--level', 'call'], { env });
  t.match(cli.stdout, /CALL\s+GET 200 [\d.]+ ms handler, [\d.]+ ms total\n/);
});

t.test("a stack under its message says no line twice (the console's logs, islet invoke)", async (t) => {
  t.equal(stackBelow('TypeError: boom', 'TypeError: boom\n    at handler (function.js:1:20)'), '    at handler (function.js:1:20)');
  t.equal(stackBelow('boom', 'Error: boom\n    at handler (function.js:1:20)'), '    at handler (function.js:1:20)', "a plain Error's name is not in its message");
  t.equal(
    stackBelow('ValueError: bad', 'Traceback (most recent call last):\n  File "/function/function.py", line 2, in handler\n    raise ValueError("bad")\nValueError: bad'),
    'Traceback (most recent call last):\n  File "/function/function.py", line 2, in handler\n    raise ValueError("bad")',
  );
  t.equal(stackBelow('something else', 'at a\nat b'), 'at a\nat b', 'a stack that repeats nothing is kept whole');
});
