import { copyFileSync, cpSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import t from 'tap';
import { fixture, ROOT, startTestServer, type TestServer } from '../helpers/server';

// The prototype probe: user code that, before anything else, puts an accessor on the prototypes
// every object reaches (Object, Array, Function, Promise, Map, Set, the iterators) for every
// property name islet's runtimes and libraries use, wraps the global functions they call, then
// uses every built-in a runtime offers. No accessor or wrapper may be handed a host value: the
// bridge's object, one of its callbacks, an isolated-vm Reference, islet's internal object, the
// module system, or an object or closure holding one (test/fixtures/prototype-probe/probe.js).

/** Every property name islet's code inside isolates uses: member accesses, quoted names and object keys of the built runtimes and libraries. */
function runtimeNames(): string[] {
  const lib = path.join(ROOT, 'dist', 'engine', 'sandbox', 'lib');
  const files = [path.join(ROOT, 'dist', 'engine', 'node8', 'sandbox.js'), path.join(ROOT, 'dist', 'python', 'sandbox.js')];
  for (const dir of ['', 'node', 'web']) for (const file of readdirSync(path.join(lib, dir))) if (file.endsWith('.js')) files.push(path.join(lib, dir, file));
  const names = new Set<string>();
  for (const file of files) {
    const text = readFileSync(file, 'utf8');
    for (const pattern of [/\.([A-Za-z_$][\w$]*)/g, /["'`]([A-Za-z_$][\w$]*)["'`]/g, /[{,]([A-Za-z_$][\w$]*):/g]) {
      for (const m of text.matchAll(pattern)) names.add(m[1]!);
    }
  }
  return [...names].sort();
}

/** A deployable folder: the runtime's probe function, the probe and the names. */
function probeFolder(runtime: 'node8' | 'python', names: string[]): string {
  const dir = mkdtempSync(path.join(tmpdir(), `islet-prototype-probe-${runtime}-`));
  cpSync(fixture(path.join('prototype-probe', runtime)), dir, { recursive: true });
  copyFileSync(fixture(path.join('prototype-probe', 'probe.js')), path.join(dir, 'probe.js'));
  writeFileSync(path.join(dir, 'names.json'), JSON.stringify(names));
  return dir;
}

interface Report {
  steps: Record<string, string>;
  probe: { events: number; accessors: number; wrapped: number; hits: { where: string; what: string }[] };
}

let s: TestServer;
const names = runtimeNames();
const node8 = probeFolder('node8', names);

t.before(async () => {
  // The calls go to the server itself (fetch, http, urllib), so private egress is allowed.
  s = await startTestServer({ engine: { allowPrivateEgress: true } });
  await s.deploy('probe_hello', node8, 'hello');
});
t.teardown(() => s.stop());

async function exercise(name: string): Promise<Report> {
  const port = Number(new URL(s.url).port);
  const first = await s.call(name, { body: JSON.stringify({ url: s.url, accountId: s.accountId, apiKey: s.apiKey, port }) });
  const text = await first.text();
  if (first.status !== 200) throw new Error(`${name}: ${first.status} ${text}`);
  // The report comes from the next call, so it includes what the first call's answer went through.
  const report = await s.call(name, { body: '{"action":"report"}' });
  return (await report.json()) as Report;
}

/** Steps that did not answer, but for those expected to fail (with the error they must give). */
function failedSteps(steps: Record<string, string>, expected: Record<string, RegExp>): string[] {
  return Object.entries(steps)
    .filter(([name, outcome]) => (expected[name] ? !expected[name]!.test(outcome) : !outcome.startsWith('ok')))
    .map(([name, outcome]) => `${name}: ${outcome}`);
}

t.test('the names come from the built runtimes and libraries', async (t) => {
  t.ok(names.length > 1000, `${names.length} names`);
  for (const name of ['then', 'call', 'apply', 'constructor', 'applySyncPromise', 'requestId']) t.ok(names.includes(name), name);
});

t.test('the probe sees a host-shaped value handed to one of its setters', async (t) => {
  await s.deploy('probe_selftest', node8, 'selftest');
  const report = (await (await s.call('probe_selftest')).json()) as Pick<Report, 'probe'>;
  t.match(report.probe.hits, [{ where: 'Object.prototype.then set value', what: /host callbacks/ }]);
});

t.test('node8: no accessor on a prototype receives a host value while every built-in is used', async (t) => {
  await s.deploy('probe_node8', node8, 'handler', { timeoutMs: 60_000 });
  const report = await exercise('probe_node8');
  t.same(failedSteps(report.steps, { 'unavailable module': /^error Error: child_process\.execSync is not available in islet functions$/ }), [], 'every step ran');
  t.ok(Object.keys(report.steps).length > 100, `${Object.keys(report.steps).length} steps`);
  t.ok(report.probe.accessors > 1000, `${report.probe.accessors} accessors`);
  t.ok(report.probe.wrapped > 50, `${report.probe.wrapped} global functions wrapped`);
  t.ok(report.probe.events > 50_000, `${report.probe.events} accesses and calls seen`);
  t.same(report.probe.hits, [], 'no host value reached user code');
});

t.test('python: no accessor on a prototype receives a host value while Python uses what crosses to the host', async (t) => {
  await s.deployPython('probe_python', probeFolder('python', names), 'handler', { timeoutMs: 60_000 });
  const report = await exercise('probe_python');
  t.same(failedSteps(report.steps, { 'egress refused': /^error HTTPError: HTTP Error 403/ }), [], 'every step ran');
  t.ok(Object.keys(report.steps).length >= 16, `${Object.keys(report.steps).length} steps`);
  t.ok(report.probe.accessors > 1000, `${report.probe.accessors} accessors`);
  t.ok(report.probe.events > 1000, `${report.probe.events} accesses and calls seen`);
  t.same(report.probe.hits, [], 'no host value reached Python code or the JavaScript it can run');
});
