import { cpSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { removeDir, ROOT, type TestServer } from './server';

/**
 * The vendored web-platform-tests (test/wpt, made by scripts/wpt-vendor.mjs) run on node8: each
 * test file is a function of its own, so each has a fresh isolate as a worker has a fresh global.
 * Its handler evaluates testharness.js, the file's META scripts and the file as global scripts
 * (indirect eval), tells the harness no more tests come (`done()`), and answers each subtest's
 * status when the harness completes, or when its deadline has passed (the harness's `timeout()`
 * then marks what is still running as timed out): WPT_DEADLINE_MS, longer in the test, where a
 * loaded machine runs WebCrypto's heavy files for minutes.
 */
export const WPT_DIR = path.join(ROOT, 'test', 'wpt');
export const WPT_DEADLINE_MS = 20_000;

export interface ManifestTest {
  file: string;
  directory: string;
  scripts: string[];
}
export interface WptManifest {
  commit: string;
  /** Data files the tests fetch, answered by the handler. */
  data: string[];
  directories: string[];
  tests: ManifestTest[];
}
export interface WptFileResult {
  file: string;
  directory: string;
  passed: number;
  total: number;
  /** The harness's own trouble (an error while loading, a timeout), when it had some. */
  harness?: string;
  failed: string[];
  /** The names of the subtests that passed (to compare islet with the Node control). */
  passedNames: string[];
}

export function wptManifest(): WptManifest {
  return JSON.parse(readFileSync(path.join(WPT_DIR, 'manifest.json'), 'utf8')) as WptManifest;
}

/**
 * The harness's run, the same JavaScript in islet and in the controls (./wpt-node.ts,
 * ./wpt-workerd.ts): `runHarness(order, read, evaluate)` gives the file a worker's surroundings,
 * evaluates it as a global script, and answers each subtest's status. `evaluate(code, name)` is
 * indirect eval where a runtime allows it (workerd offers its unsafe-eval binding instead).
 */
export const HARNESS = `async function runHarness(order, read, evaluate = (code, name) => (0, eval)(code + '\\n//# sourceURL=' + name)) {
  globalThis.GLOBAL = { isWindow: () => false, isWorker: () => false, isShadowRealm: () => false };
  // A worker's location, which some helpers read (common/subset-tests.js: location.search), and
  // its server for the data files tests fetch (urltestdata.json): the vendored ones are answered here.
  const here = new URL('https://wpt.test/' + order.test);
  globalThis.location = { href: here.href, origin: here.origin, protocol: here.protocol, host: here.host, hostname: here.hostname, port: here.port, pathname: here.pathname, search: '', hash: '', toString: () => here.href };
  const networkFetch = fetch;
  globalThis.fetch = (input, init) => {
    const url = typeof input === 'string' ? new URL(input, location.href) : undefined;
    const file = url && url.origin === location.origin ? url.pathname.slice(1) : undefined;
    if (file !== undefined && order.data.includes(file)) return Promise.resolve(new Response(read(file), { headers: { 'content-type': 'application/json' } }));
    return networkFetch(input, init);
  };
  evaluate(read(order.harness), order.harness);
  let loadError;
  const finished = new Promise((resolve) => add_completion_callback((tests, status) => resolve({
    tests: tests.map((t) => ({ name: String(t.name), status: t.status, message: t.message == null ? null : String(t.message) })),
    status: status.status,
    message: status.message == null ? null : String(status.message),
  })));
  // The META scripts and the test in one script: each of eval's lexical declarations (const, let,
  // class) would stay in its own eval, where the next file could not see them, as it does in a page.
  try {
    evaluate(order.scripts.map(read).join('\\n;\\n'), order.test);
  } catch (err) {
    loadError = order.test + ': ' + (err && err.stack ? err.stack.split('\\n')[0] : String(err));
  }
  done();
  const deadline = setTimeout(() => timeout(), order.deadlineMs);
  const result = await finished;
  clearTimeout(deadline);
  return { ...result, loadError };
}
`;

const HANDLER = `const fs = require('fs');
const order = JSON.parse(fs.readFileSync('/wpt-order.json', 'utf8'));
const read = (file) => fs.readFileSync('/' + file, 'utf8');
${HARNESS}
exports.handler = () => runHarness(order, read);
`;

export interface HarnessAnswer {
  tests: { name: string; status: number; message: string | null }[];
  status: number;
  message: string | null;
  loadError?: string;
}

/** What `runHarness` is given for one file: the files to evaluate, in order, and the data files it may fetch. */
export interface WptOrder {
  harness: string;
  scripts: string[];
  test: string;
  data: string[];
  /** When the harness stops waiting for the file's subtests. */
  deadlineMs: number;
}

export function wptOrder(test: ManifestTest, deadlineMs = WPT_DEADLINE_MS): WptOrder {
  // The data files the test's scripts name (a few hundred KB: not copied into every function).
  const texts = [...test.scripts, test.file].map((file) => readFileSync(path.join(WPT_DIR, file), 'utf8')).join('\n');
  const data = wptManifest().data.filter((file) => texts.includes(path.posix.basename(file)));
  return { harness: 'resources/testharness.js', scripts: [...test.scripts, test.file], test: test.file, data, deadlineMs };
}

export function emptyResult(test: ManifestTest): WptFileResult {
  return { file: test.file, directory: test.directory, passed: 0, total: 0, failed: [], passedNames: [] };
}

/** Counts the harness's answer for one file into its result. */
export function countAnswer(result: WptFileResult, answer: HarnessAnswer): void {
  result.total = answer.tests.length;
  for (const t of answer.tests) {
    if (t.status === 0) {
      result.passed++;
      result.passedNames.push(t.name);
    } else {
      result.failed.push(`${t.name}: ${['PASS', 'FAIL', 'TIMEOUT', 'NOTRUN', 'PRECONDITION_FAILED'][t.status] ?? t.status}${t.message ? ` (${t.message.slice(0, 200)})` : ''}`);
    }
  }
  if (answer.loadError) result.harness = answer.loadError;
  else if (answer.status !== 0) result.harness = `${['OK', 'ERROR', 'TIMEOUT', 'PRECONDITION_FAILED'][answer.status] ?? answer.status}${answer.message ? `: ${answer.message.slice(0, 200)}` : ''}`;
  // A file that failed before declaring any test counts as one failed subtest.
  if (result.total === 0 && result.harness) result.total = 1;
}

/** One test file as a function: deploys it, calls it, and counts its subtests. */
async function runFile(s: TestServer, test: ManifestTest, index: number, work: string, deadlineMs: number): Promise<WptFileResult> {
  const dir = path.join(work, String(index));
  mkdirSync(dir, { recursive: true });
  const order = wptOrder(test, deadlineMs);
  for (const file of [order.harness, ...order.scripts, ...order.data]) {
    mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    cpSync(path.join(WPT_DIR, file), path.join(dir, file));
  }
  writeFileSync(path.join(dir, 'wpt-order.json'), JSON.stringify(order));
  writeFileSync(path.join(dir, 'function.js'), HANDLER);
  const name = `wpt_${index}`;
  const result = emptyResult(test);
  try {
    await s.engine.deploy(s.accountId, { name, runtime: 'node8', file: 'function.js', env: {}, timeoutMs: deadlineMs + 20_000 }, { dir });
    const res = await s.invoke(name);
    if (res.status !== 200) {
      result.harness = `the call answered ${res.status}: ${String(res.body).slice(0, 300)}`;
      result.total = 1;
      return result;
    }
    countAnswer(result, JSON.parse(String(res.body)) as HarnessAnswer);
  } catch (err) {
    result.harness = `deploy failed: ${(err as Error).message.slice(0, 300)}`;
    result.total = 1;
  } finally {
    await s.engine.remove(s.accountId, name).catch(() => undefined);
  }
  return result;
}

/** Runs the vendored tests (those whose file matches `only`), `concurrency` at a time. */
/**
 * Runs `run` over the vendored tests whose file matches `only`, `concurrency` at a time: islet's
 * run and each control's. The results keep the manifest's order.
 */
export async function eachWptTest(only: RegExp | undefined, concurrency: number, run: (test: ManifestTest, index: number) => Promise<WptFileResult>): Promise<WptFileResult[]> {
  const tests = wptManifest().tests.filter((t) => !only || only.test(t.file));
  const results: WptFileResult[] = [];
  let next = 0;
  const worker = async () => {
    while (next < tests.length) {
      const index = next++;
      results[index] = await run(tests[index]!, index);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return results;
}

export async function runWpt(s: TestServer, options: { only?: RegExp; concurrency?: number; deadlineMs?: number } = {}): Promise<WptFileResult[]> {
  const work = mkdtempSync(path.join(tmpdir(), 'islet-wpt-'));
  try {
    return await eachWptTest(options.only, options.concurrency ?? 3, (test, index) => runFile(s, test, index, work, options.deadlineMs ?? WPT_DEADLINE_MS));
  } finally {
    removeDir(work);
  }
}

/** Passed and total subtests per directory, in the manifest's order. */
export function wptCounts(results: WptFileResult[]): Map<string, { passed: number; total: number; files: number }> {
  const counts = new Map<string, { passed: number; total: number; files: number }>();
  for (const directory of wptManifest().directories) counts.set(directory, { passed: 0, total: 0, files: 0 });
  for (const r of results) {
    const c = counts.get(r.directory)!;
    c.passed += r.passed;
    c.total += r.total;
    c.files++;
  }
  return counts;
}

/** The table `npm run wpt` prints. */
export function wptTable(results: WptFileResult[]): string {
  const rows = [...wptCounts(results)].filter(([, c]) => c.files > 0);
  const width = Math.max(...rows.map(([d]) => d.length), 'total'.length);
  const line = (name: string, passed: number, total: number, files: number | string) =>
    `${name.padEnd(width)}  ${String(passed).padStart(6)} / ${String(total).padEnd(6)} ${total === 0 ? '' : `${((100 * passed) / total).toFixed(1).padStart(5)}%`}  ${files} files`;
  const all = rows.reduce((a, [, c]) => ({ passed: a.passed + c.passed, total: a.total + c.total, files: a.files + c.files }), { passed: 0, total: 0, files: 0 });
  return [...rows.map(([d, c]) => line(d, c.passed, c.total, c.files)), line('total', all.passed, all.total, all.files)].join('\n');
}

/**
 * islet beside a control (Node or workerd), per directory: islet's passes, the control's, and
 * islet's share of the subtests the control passes (those islet passes too, by file and name, over
 * those the control passes).
 */
export function wptComparison(islet: WptFileResult[], control: WptFileResult[], name: string): string {
  const controlByFile = new Map(control.map((r) => [r.file, r]));
  const rows = new Map<string, { islet: number; control: number; both: number; total: number }>();
  for (const directory of wptManifest().directories) rows.set(directory, { islet: 0, control: 0, both: 0, total: 0 });
  for (const r of islet) {
    const row = rows.get(r.directory)!;
    const theirs = controlByFile.get(r.file);
    const controlPassed = new Set(theirs?.passedNames ?? []);
    row.islet += r.passed;
    row.total += r.total;
    row.control += theirs?.passed ?? 0;
    row.both += r.passedNames.filter((n) => controlPassed.has(n)).length;
  }
  const shown = [...rows].filter(([, c]) => c.total > 0);
  const all = shown.reduce((a, [, c]) => ({ islet: a.islet + c.islet, control: a.control + c.control, both: a.both + c.both, total: a.total + c.total }), { islet: 0, control: 0, both: 0, total: 0 });
  const width = Math.max(...shown.map(([d]) => d.length), 'directory'.length);
  const percent = (n: number, of: number) => (of === 0 ? '-' : `${((100 * n) / of).toFixed(1)}%`);
  const line = (directory: string, c: { islet: number; control: number; both: number; total: number }) =>
    `${directory.padEnd(width)}  ${String(c.islet).padStart(6)}  ${String(c.control).padStart(7)}  ${String(c.total).padStart(6)}  ${percent(c.both, c.control).padStart(6)}  ${c.islet >= c.control ? '' : 'below'}`;
  const header = `${'directory'.padEnd(width)}  ${'islet'.padStart(6)}  ${name.padStart(7)}  ${'of'.padStart(6)}  ${'share'.padStart(6)}`;
  return [header, ...shown.map(([d, c]) => line(d, c)), line('total', all)].join('\n');
}
