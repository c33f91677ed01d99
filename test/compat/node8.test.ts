import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import t from 'tap';
import { islet } from '../helpers/cli';
import { ensureCompatInstalled } from '../helpers/compat-install';
import { type CaseResult, type ControlCase, requestHeaders } from '../helpers/compat-control';
import { copyPackage } from '../helpers/package-closure';
import { removeDir, ROOT, startTestServer, type TestServer } from '../helpers/server';

/**
 * The node8 compatibility suite: popular npm packages a function uses at request time, each
 * installed from npm (test/compat/node8/package-lock.json), copied with its dependencies into a
 * function folder of its own, deployed unchanged through the CLI and called once; each does a
 * real operation. The same handlers run under plain Node as the control. At least 95% of what
 * passes under Node must pass on islet; KNOWN_GAPS (listed in the README) are the exceptions.
 */
const SUITE = path.join(ROOT, 'test', 'compat', 'node8');
const KNOWN_GAPS: Record<string, string> = {};

interface CaseSpec {
  deps?: string[] | Record<string, string>;
  entrypoint?: string;
  requests?: ControlCase['requests'];
}

let s: TestServer;
let fixtures: Server;
let fixturesUrl = '';
const work = mkdtempSync(path.join(tmpdir(), 'islet-compat-'));

/** What network cases call: JSON, text, an echo of the request body, and a 404. */
function startFixtures(): Promise<void> {
  fixtures = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://x');
      if (url.pathname === '/json') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ fixture: true, query: Object.fromEntries(url.searchParams), test: req.headers['x-test'] ?? null }));
      } else if (url.pathname === '/echo') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ method: req.method, body: JSON.parse(Buffer.concat(chunks).toString() || 'null') }));
      } else if (url.pathname === '/text') {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end('plain text from the fixture');
      } else {
        res.writeHead(404, { 'content-type': 'text/plain' });
        res.end('not found');
      }
    });
  });
  return new Promise((resolve) =>
    fixtures.listen(0, '127.0.0.1', () => {
      fixturesUrl = `http://127.0.0.1:${(fixtures.address() as { port: number }).port}`;
      resolve();
    }),
  );
}

interface Case extends ControlCase {
  fn: string;
}

/** A function folder per case: its file, a service.yml and package.json, and its packages. */
function makeCase(file: string, specs: Record<string, CaseSpec>): Case {
  const name = file.replace(/\.(m?js)$/, '');
  const spec = specs[name] ?? {};
  const dir = path.join(work, name);
  mkdirSync(dir, { recursive: true });
  const target = `function${path.extname(file)}`;
  copyFileSync(path.join(SUITE, 'cases', file), path.join(dir, target));
  const deps = spec.deps ?? [name];
  const pairs: [string, string][] = Array.isArray(deps) ? deps.map((d) => [d, d]) : Object.entries(deps);
  for (const [as, from] of pairs) copyPackage(SUITE, from, dir, as);
  const fn = `compat_${name.replace(/[^A-Za-z0-9_-]/g, '_')}`;
  const entrypoint = spec.entrypoint ?? 'handler';
  writeFileSync(path.join(dir, 'service.yml'), `functions:\n  ${fn}:\n    file: ${target}\n    entrypoint: ${entrypoint}\n    runtime: node8\n    env:\n      COMPAT_URL: ${fixturesUrl}\n`);
  writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name, private: true, dependencies: Object.fromEntries(pairs.map(([as]) => [as, '*'])) }));
  return { name, fn, dir, file: target, entrypoint, requests: spec.requests };
}

function runControl(cases: Case[]): Promise<Record<string, CaseResult>> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [path.join(__dirname, '..', 'helpers', 'compat-control.js')],
      { env: { ...process.env, COMPAT_URL: fixturesUrl, COMPAT_CASES: JSON.stringify(cases) }, timeout: 600_000, maxBuffer: 16 * 1024 * 1024 },
      (err, stdout) => (err ? reject(err) : resolve(JSON.parse(stdout) as Record<string, CaseResult>)),
    );
  });
}

/** Calls a deployed case as a user would: once, or each of its requests for a fetch-style app. */
async function callCase(c: Case): Promise<CaseResult> {
  if (c.requests) {
    const out: unknown[] = [];
    for (const [method, url, body, headers] of c.requests) {
      const res = await s.call(c.fn, { method, path: url.split('?')[0] === '/' ? '' : url.split('?')[0], query: url.split('?')[1], body, headers: requestHeaders(body, headers) });
      out.push({ status: res.status, body: await res.text() });
    }
    return { ok: true, value: out };
  }
  const res = await s.call(c.fn);
  const text = await res.text();
  if (res.status !== 200) return { ok: false, error: `${res.status} ${text}` };
  return { ok: true, value: JSON.parse(text) as unknown };
}

/** Runs `work` over `items`, `limit` at a time. */
async function pool<T, R>(items: T[], limit: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: limit }, async () => {
      while (next < items.length) {
        const i = next++;
        results[i] = await work(items[i]!);
      }
    }),
  );
  return results;
}

// Some sixty deploys through the CLI: about 260 s alone on 2 cores, four times that beside four
// busy loops. The limit catches a hang; it does not time the file.
t.setTimeout(1_800_000);

t.before(async () => {
  ensureCompatInstalled(SUITE);
  await startFixtures();
  s = await startTestServer({ engine: { allowPrivateEgress: true } });
});

t.teardown(async () => {
  fixtures?.close();
  await s?.stop();
  removeDir(work);
});

t.test('popular npm packages deploy unchanged and work as under Node', async (t) => {
  const specs = JSON.parse(readFileSync(path.join(SUITE, 'cases.json'), 'utf8')) as Record<string, CaseSpec>;
  const cases = readdirSync(path.join(SUITE, 'cases'))
    .sort()
    .map((file) => makeCase(file, specs));
  t.ok(cases.length >= 40, `${cases.length} cases`);
  const control = await runControl(cases);
  const env = { ...process.env, ISLET_URL: s.url, ISLET_ACCOUNT: s.accountId, ISLET_API_KEY: s.apiKey, XDG_CONFIG_HOME: work };
  // Each case's node_modules holds its package's closure only: nothing for the CLI to leave out,
  // so it skips the build that finds what to leave out (test/cli/devloop-deploy.test.ts tests that).
  const deploys = await pool(cases, 3, (c) => islet(['deploy', c.fn, '--dir', c.dir, '--whole-node-modules'], { env }));
  let passedNode = 0;
  let passedBoth = 0;
  const failures: string[] = [];
  for (const [i, c] of cases.entries()) {
    const expected = control[c.name]!;
    const deploy = deploys[i]!;
    const actual: CaseResult = deploy.code === 0 ? await callCase(c) : { ok: false, error: `deploy: ${deploy.stderr.trim()}` };
    if (!expected.ok) {
      t.comment(`${c.name}: fails under plain Node too (${expected.error}); not counted`);
      continue;
    }
    passedNode++;
    const same = actual.ok && JSON.stringify(actual.value) === JSON.stringify(expected.value);
    if (same) passedBoth++;
    else failures.push(`${c.name}: ${actual.ok ? `islet answered ${JSON.stringify(actual.value)}, Node ${JSON.stringify(expected.value)}` : actual.error}`);
    if (KNOWN_GAPS[c.name]) t.notOk(same, `${c.name} is a known gap (${KNOWN_GAPS[c.name]}): remove it from KNOWN_GAPS and the README when it passes`);
    else t.ok(same, `${c.name} answers as under Node`, same ? {} : { actual, expected });
  }
  const ratio = passedBoth / passedNode;
  t.comment(`node8 compatibility: ${passedBoth} of ${passedNode} cases that pass under Node pass on islet (${(ratio * 100).toFixed(1)}%)`);
  for (const failure of failures) t.comment(`  ${failure}`);
  t.ok(ratio >= 0.95, `at least 95% pass (${passedBoth}/${passedNode})`);
});
