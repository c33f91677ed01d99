import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import t from 'tap';
import { islet } from '../helpers/cli';
import { fixture, startTestServer, type TestServer } from '../helpers/server';

// Prometheus metrics, `islet stats`, and failed calls in the function's logs.
const TOKEN = 'metrics-token-for-tests';
let s: TestServer;
let env: NodeJS.ProcessEnv;
let other: { accountId: string; apiKey: string };
const probes = fixture('probes-node8');

t.before(async () => {
  s = await startTestServer({ metricsToken: TOKEN });
  const work = mkdtempSync(path.join(tmpdir(), 'islet-metrics-'));
  env = { PATH: process.env.PATH, HOME: work, XDG_CONFIG_HOME: path.join(work, 'config'), ISLET_URL: s.url, ISLET_ACCOUNT: s.accountId, ISLET_API_KEY: s.apiKey };
  await s.deploy('ok', probes, 'ok');
  await s.deploy('throws', probes, 'throws');
  other = await s.createAccount();
  await s.engine.deploy(other.accountId, { name: 'theirs', runtime: 'node8', file: 'function.js', entrypoint: 'ok', env: {} }, { dir: probes });
  for (let i = 0; i < 5; i++) await (await s.call('ok')).text();
  for (let i = 0; i < 2; i++) await (await s.call('throws')).text();
  await (await s.call('theirs', { account: other.accountId, key: other.apiKey })).text();
});
t.teardown(() => s.stop());

const scrape = (headers: Record<string, string> = {}) => fetch(`${s.url}/metrics`, { headers });
const label = (fn: string, extra = '') => `{account="${s.accountId}",function="${fn}"${extra}}`;

t.test('a scrape without credentials, with a wrong token or with an invoke key is refused', async (t) => {
  const none = await scrape();
  t.equal(none.status, 401);
  t.match(await none.json(), { errorCode: 'ERR_NO_KEY', message: /admin key .* or the server's metrics token/ });
  t.equal((await scrape({ authorization: 'Bearer wrong' })).status, 401);
  t.equal((await scrape({ 'X-Service-Api-Key': 'isk_nothing' })).status, 403);
  const invoke = await s.engine.createKey(s.accountId, { name: 'caller', scope: 'invoke' });
  const refused = await scrape({ 'X-Service-Api-Key': invoke.apiKey });
  t.equal(refused.status, 403);
  t.equal(((await refused.json()) as { errorCode: string }).errorCode, 'ERR_FORBIDDEN');
});

t.test("an account's admin key reads its own functions' figures, and nothing of other accounts or of the server", async (t) => {
  const res = await scrape({ 'X-Service-Api-Key': s.apiKey });
  t.equal(res.status, 200);
  t.equal(res.headers.get('content-type'), 'text/plain; version=0.0.4; charset=utf-8');
  const text = await res.text();
  t.match(text, `islet_function_calls_total${label('ok', ',code="200"')} 5\n`);
  t.match(text, `islet_function_calls_total${label('throws', ',code="500"')} 2\n`);
  t.match(text, `islet_function_errors_total${label('throws', ',error_code="ERR_FUNCTION_FAILED"')} 2\n`);
  t.match(text, `islet_function_duration_seconds_count${label('ok')} 5\n`);
  t.match(text, `islet_function_duration_seconds_bucket${label('ok', ',le="+Inf"')} 5\n`);
  t.match(text, new RegExp(`islet_function_duration_seconds_sum\\{account="${s.accountId}",function="ok"\\} \\d`));
  t.match(text, `islet_function_cold_starts_total${label('ok')} 0\n`, "none: the deploy's check left its instance warm");
  t.match(text, `islet_function_calls_in_flight${label('ok')} 0\n`);
  t.match(text, `islet_function_warm_instances${label('ok')} 1\n`);
  t.match(text, new RegExp(`islet_function_warm_memory_bytes\\{account="${s.accountId}",function="ok"\\} [1-9]\\d+`));
  t.match(text, `islet_function_traffic_percent${label('ok', ',version="1"')} 100\n`);
  t.match(text, '# TYPE islet_function_duration_seconds histogram');
  t.notMatch(text, other.accountId, "no series of another account's functions");
  t.notMatch(text, /process_cpu|islet_egress/, 'no server-wide figures');
});

t.test("the server's token reads everything: every account, the server's figures, the process's", async (t) => {
  const text = await (await scrape({ authorization: `Bearer ${TOKEN}` })).text();
  t.match(text, `islet_function_calls_total{account="${other.accountId}",function="theirs",code="200"} 1\n`);
  t.match(text, `islet_function_calls_total${label('ok', ',code="200"')} 5\n`);
  for (const outcome of ['ok', 'refused', 'timeout', 'too_large', 'invalid', 'failed']) t.match(text, `islet_egress_requests_total{outcome="${outcome}"} `);
  for (const name of [
    'islet_log_lines_dropped_total',
    'islet_catastrophic_oom_total',
    'islet_warm_instances',
    'islet_warm_memory_bytes',
    'islet_accounts',
    'islet_functions',
    'process_cpu_user_seconds_total',
    'process_resident_memory_bytes',
    'nodejs_eventloop_lag_seconds',
  ]) {
    t.match(text, new RegExp(`^${name} \\d`, 'm'), name);
  }
});

t.test('refused calls are counted by status and code; X-Service-Version is on every answer of a function', async (t) => {
  // Through the engine, as sdk.invoke from a function goes (over HTTP, a body over the limit is
  // refused while it is read, before its function is looked up).
  const big = await s.invoke('ok', { body: 'x'.repeat(7 * 1024 * 1024) });
  t.equal(big.status, 413);
  t.equal(big.version, 1);
  const failed = await s.call('throws');
  t.equal(failed.headers.get('x-service-version'), '1', 'on a failed call too');
  t.equal((await s.call('nothing')).headers.get('x-service-version'), null, 'not when no function was found');
  const text = await (await scrape({ 'X-Service-Api-Key': s.apiKey })).text();
  t.match(text, `islet_function_errors_total${label('ok', ',error_code="ERR_PAYLOAD_TOO_LARGE"')} 1\n`);
  t.match(text, `islet_function_duration_seconds_count${label('ok')} 5\n`, 'a refused call has no duration');
});

t.test('islet stats prints rate, errors and p50/p99 over the window; --json has a series', async (t) => {
  const out = await islet(['stats', 'ok'], { env });
  t.equal(out.code, 0, out.stderr);
  t.match(
    out.stdout,
    /^ok, last 5m:\n  calls\s+5 \([\d.]+\/s\)\n  errors\s+0 \(0\.00%\)\n  refused\s+1 \(over a limit: 413, 429, 503\)\n  p50\s+[\d.]+ ms\n  p99\s+[\d.]+ ms\n  in flight\s+0\n  warm\s+1 instance \([\d.]+ MB\)\n  cold starts\s+0 since the server started\n$/,
  );
  const failing = JSON.parse((await islet(['stats', 'throws', '--json', '--window', '1m'], { env })).stdout) as {
    calls: number;
    errors: number;
    errorRate: number;
    series: { t: number; calls: number }[];
    stepSec: number;
  };
  t.equal(failing.calls, 3);
  t.equal(failing.errors, 3);
  t.equal(failing.errorRate, 1);
  t.equal(failing.stepSec, 5);
  t.equal(failing.series.length, 12, 'a point per 5 s over a minute');
  t.equal(
    failing.series.reduce((n, p) => n + p.calls, 0),
    3,
  );
  const hour = JSON.parse((await islet(['stats', 'ok', '--json', '--window', '1h'], { env })).stdout) as { stepSec: number; series: unknown[]; calls: number };
  t.same([hour.stepSec, hour.series.length, hour.calls], [60, 60, 5], 'an hour: a point per minute');
  t.match((await islet(['stats', 'ok', '--window', '2d'], { env })).stderr, /ERR_BAD_REQUEST: window "2d": expected 30s to 24h/);
  t.match((await islet(['stats', 'nothing'], { env })).stderr, /ERR_NO_SUCH_FUNCTION/);
});

t.test("a failed call's error and the user's stack are in the function's logs, at level error", async (t) => {
  const text = await islet(['logs', 'throws', '--level', 'error'], { env });
  t.equal(text.code, 0, text.stderr);
  const lines = text.stdout.trimEnd().split('\n');
  t.match(lines[0], /^\S+Z [0-9a-f]{32} ERROR ERR_FUNCTION_FAILED TypeError: the handler failed on purpose/);
  t.match(lines[1], /^ {4}at .*function\.js:41:\d+/, "the user's frame, in the user's file");
  t.notMatch(text.stdout, /CALL|dist\/|isolated-vm/, 'no call lines, no frame of islet');
  t.equal(text.stdout.match(/ERROR/g)?.length, 3, 'one per failed call');
  const json = (await islet(['logs', 'throws', '--level', 'error', '--json'], { env })).stdout
    .trimEnd()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
  t.equal(json.length, 3);
  t.match(json[0], { level: 'error', code: 'ERR_FUNCTION_FAILED', version: 1, message: /the handler failed on purpose/, stack: /function\.js:41/ });
  const all = (await islet(['logs', 'throws', '--json'], { env })).stdout
    .trimEnd()
    .split('\n')
    .map((line) => JSON.parse(line) as { level: string });
  t.same([...new Set(all.map((e) => e.level))].sort(), ['call', 'error'], 'call lines and error lines');
  const warn = (await islet(['logs', 'throws', '--level', 'warn'], { env })).stdout;
  t.equal(warn.match(/ERROR/g)?.length, 3, '--level warn shows errors too');
  t.match((await islet(['logs', 'throws', '--level', 'loud'], { env })).stderr, /ERR_BAD_REQUEST: unknown log level "loud"/);
});

t.test("a removed function's series are gone from the next scrape", async (t) => {
  await s.engine.remove(s.accountId, 'throws');
  const text = await (await scrape({ 'X-Service-Api-Key': s.apiKey })).text();
  t.notMatch(text, 'function="throws"');
  t.match(text, 'function="ok"');
});

t.test('a server started without metrics counts nothing: /metrics and stats say so', async (t) => {
  const quiet = await startTestServer({ metricsToken: TOKEN, engine: { metrics: false } });
  try {
    await quiet.deploy('ok', probes, 'ok');
    t.equal((await quiet.call('ok')).status, 200);
    const res = await fetch(`${quiet.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
    t.equal(res.status, 404);
    t.match(await res.json(), { errorCode: 'ERR_NOT_FOUND', message: /--no-metrics/ });
    const stats = await fetch(`${quiet.url}/v2/accounts/${quiet.accountId}/functions/ok/stats`, { headers: { 'X-Service-Api-Key': quiet.apiKey } });
    t.equal(stats.status, 404);
    t.equal((await quiet.call('throws')).status, 404);
    await quiet.deploy('throws', probes, 'throws');
    await (await quiet.call('throws')).text();
    t.equal((await quiet.internals.logs.read(quiet.accountId, 'throws', { level: 'error' })).length, 1, 'failed calls are still logged');
  } finally {
    await quiet.stop();
  }
});
