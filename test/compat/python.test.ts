import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import t from 'tap';
import { islet } from '../helpers/cli';
import { fixture, ROOT, startTestServer, type TestServer } from '../helpers/server';
import { missingRequirement } from '../helpers/requirements';

// The Python compatibility suite: 42 request-time cases (popular pure-Python packages laid out as
// `pip install --target .` would, and the standard library), each deployed unchanged with the
// islet CLI and run on islet, and the same cases run under the machine's CPython as the control.
// The packages are Debian's python3-* files (.ci/run installs them), copied into each group's
// folder at test time. The README lists the cases that differ and why.
const COMPAT = path.join(ROOT, 'test', 'compat');
const DIST = '/usr/lib/python3/dist-packages';
const GROUPS: Record<string, string[]> = {
  web: ['requests', 'urllib3', 'idna', 'certifi', 'charset_normalizer', 'chardet', 'six.py'],
  text: ['jinja2', 'markupsafe', 'yaml', 'markdown', 'bs4', 'soupsieve', 'pygments', 'tabulate.py', 'toml', 'simplejson'],
  data: ['dateutil', 'six.py', 'pytz', 'attr', 'attrs', 'jsonschema', 'pyrsistent', '_pyrsistent_version.py', 'jwt', 'click', 'packaging'],
  babel: ['babel', 'pytz'],
  stdlib: [],
};
/** Cases that pass under CPython and cannot on islet, with the reason the README gives. */
const KNOWN_DIFFERENCES: Record<string, string> = {
  'stdlib.thread_pool': 'WebAssembly has no threads: ThreadPoolExecutor raises a RuntimeError that says so',
};

type Outcome = { ok: boolean; value?: unknown; error?: string };

let s: TestServer;
let env: NodeJS.ProcessEnv;
const missing = Object.values(GROUPS)
  .flat()
  .filter((p) => !existsSync(path.join(DIST, p)));

t.before(async () => {
  s = await startTestServer();
  await s.deploy('compat_callee', fixture('seed-node8'), 'hello');
  env = { PATH: process.env.PATH, HOME: tmpdir(), ISLET_URL: s.url, ISLET_ACCOUNT: s.accountId, ISLET_API_KEY: s.apiKey };
});
t.teardown(() => s.stop());

/** A group's function folder as pip --target would lay it out: the function, its cases, its packages. */
function groupFolder(group: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), `islet-compat-${group}-`));
  for (const file of ['function.py', `${group}/cases.py`, `${group}/service.yml`]) cpSync(path.join(COMPAT, file), path.join(dir, path.basename(file)));
  for (const item of GROUPS[group]!) {
    cpSync(path.join(DIST, item), path.join(dir, item), { recursive: true, dereference: true, filter: (src) => !src.includes('__pycache__') });
  }
  return dir;
}

function caseNames(group: string): string[] {
  return [...readFileSync(path.join(COMPAT, group, 'cases.py'), 'utf8').matchAll(/^(?:async )?def case_(\w+)\(/gm)].map((m) => m[1]!);
}

function control(dir: string, context: unknown, cases: string[]): Promise<Record<string, Outcome>> {
  return new Promise((resolve, reject) => {
    execFile('python3', [path.join(COMPAT, 'control.py'), dir, JSON.stringify(context), ...cases], { timeout: 120_000, maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`CPython control failed: ${stderr || err.message}`));
      else resolve(JSON.parse(stdout) as Record<string, Outcome>);
    });
  });
}

async function onIslet(group: string, name: string, context: unknown): Promise<Outcome> {
  const res = await s.call(`compat_${group}`, { query: `case=${name}`, body: JSON.stringify(context) });
  const body = (await res.json()) as unknown;
  if (res.status === 200) return { ok: true, value: body };
  const error = body as { errorCode: string; message: string };
  return { ok: false, error: `${error.errorCode}: ${error.message}` };
}

t.test('compatibility with CPython: at least 95% of the cases that pass there pass on islet, and only the known ones differ', async (t) => {
  if (missing.length > 0) {
    missingRequirement(t, `Debian's python3-* packages are not installed (missing ${missing.join(', ')})`);
    return;
  }
  const context = { base: s.url, account: s.accountId, key: s.apiKey, callee: 'compat_callee' };
  const results: { id: string; control: Outcome; islet: Outcome }[] = [];
  await Promise.all(
    Object.keys(GROUPS).map(async (group) => {
      const dir = groupFolder(group);
      const cases = caseNames(group);
      const controlled = control(dir, context, cases);
      const deployed = await islet(['deploy', `compat_${group}`, '--dir', dir], { env });
      t.equal(deployed.code, 0, `${group} deploys with the CLI: ${deployed.stderr}`);
      for (const name of cases) results.push({ id: `${group}.${name}`, control: (await controlled)[name]!, islet: await onIslet(group, name, context) });
    }),
  );
  results.sort((a, b) => (a.id < b.id ? -1 : 1));
  t.ok(results.length >= 30, `${results.length} cases`);
  const controlPassed = results.filter((r) => r.control.ok);
  t.same(
    results.filter((r) => !r.control.ok).map((r) => `${r.id}: ${r.control.error}`),
    [],
    'every case passes under CPython',
  );
  const differ = controlPassed.filter((r) => !r.islet.ok || JSON.stringify(r.islet.value) !== JSON.stringify(r.control.value));
  const parity = (controlPassed.length - differ.length) / controlPassed.length;
  t.ok(parity >= 0.95, `${controlPassed.length - differ.length} of ${controlPassed.length} pass on islet as on CPython (${(parity * 100).toFixed(1)}%)`);
  t.same(
    differ.map((r) => r.id),
    Object.keys(KNOWN_DIFFERENCES).sort(),
    `only the known differences: ${differ.map((r) => `${r.id} -> ${r.islet.ok ? JSON.stringify(r.islet.value).slice(0, 300) : r.islet.error} (CPython: ${JSON.stringify(r.control.value).slice(0, 300)})`).join('; ')}`,
  );
  const threads = results.find((r) => r.id === 'stdlib.thread_pool');
  t.match(threads?.islet.error, /threads are not available in islet functions/, 'the known difference fails saying why');
});
