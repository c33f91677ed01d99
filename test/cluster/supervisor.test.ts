import { createServer } from 'node:net';
import { readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { spawn } from 'node:child_process';
import t from 'tap';
import { Client } from 'undici';
import { eventually, keepCalling, serveArgs, startSupervised, type Health, type Supervised } from '../helpers/supervised';

// islet serve with a supervisor and two workers, the way a user runs it: one server for the whole
// file, the tests in order, ending with SIGTERM.
let s: Supervised;

t.before(async () => {
  s = await startSupervised(['--workers', '2', '--max-worker-rss', '400']);
});
t.teardown(() => s?.crash());

const pids = async () => (await s.health()).workers.map((w) => w.pid).sort();
/** Replacements so far, all slots together (a draining worker and its replacement share a slot). */
const restarts = (health: Health) => [...new Map(health.workers.map((w) => [w.slot, w.restarts])).values()].reduce((a, b) => a + b, 0);

t.test('one account is created, once, and /healthz reports each worker', async (t) => {
  t.equal(s.stdout.split('Created the first account').length - 1, 1, 'printed once');
  t.equal(readdirSync(path.join(s.dataDir, 'accounts')).filter((f) => f.endsWith('.json')).length, 1, 'one account on disk');
  const health = await s.health();
  t.equal(health.workers.length, 2);
  t.same(
    health.workers.map((w) => [w.slot, w.state]),
    [
      [1, 'ready'],
      [2, 'ready'],
    ],
  );
  t.ok(
    health.workers.some((w) => w.pid === health.worker.pid),
    'the answering worker is one of them',
  );
  t.equal(new Set(health.workers.map((w) => w.pid)).size, 2, 'two processes');
});

t.test('the port is exclusive: a second islet, or any other program on it, makes start-up fail', async (t) => {
  const second = spawn(
    process.execPath,
    [...serveArgs(s.dataDir, ['--workers', '1'])].map((a) => (a === '0' ? String(s.port) : a)),
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stderr = '';
  second.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const code = await new Promise((r) => second.once('exit', r));
  t.equal(code, 1);
  t.match(stderr, new RegExp(`port ${s.port} is in use`));
  const other = createServer();
  await new Promise<void>((r) => other.listen(0, '127.0.0.1', r));
  const otherPort = (other.address() as { port: number }).port;
  const third = spawn(
    process.execPath,
    [...serveArgs(s.dataDir, ['--workers', '1'])].map((a) => (a === '0' ? String(otherPort) : a)),
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stderr3 = '';
  third.stderr.on('data', (c: Buffer) => (stderr3 += c.toString()));
  t.equal(await new Promise((r) => third.once('exit', r)), 1);
  t.match(stderr3, `port ${otherPort} is in use`);
  other.close();
  t.equal((await s.call('nothing')).status, 404, 'the running islet still answers');
});

t.test("the console's port is exclusive too, and served by the workers", async (t) => {
  const other = createServer();
  await new Promise<void>((r) => other.listen(0, '127.0.0.1', r));
  const otherPort = (other.address() as { port: number }).port;
  const taken = spawn(process.execPath, serveArgs(s.dataDir, ['--workers', '1', '--console-port', String(otherPort)]), { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  taken.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  t.equal(await new Promise((r) => taken.once('exit', r)), 1);
  t.match(stderr, `the console's port ${otherPort} is in use`);
  t.match(stderr, /--console-port chooses another/);
  other.close();
  t.match(s.stdout, `console on ${s.consoleUrl}/console/`, 'the console is printed at start');
  t.not(new URL(s.consoleUrl).port, String(s.port));
  const page = await fetch(`${s.consoleUrl}/console/`);
  t.equal(page.status, 200);
  t.match(await page.text(), /<title>islet console<\/title>/);
  const who = await fetch(`${s.consoleUrl}/v2/whoami`, { headers: { 'X-Service-Api-Key': s.apiKey } });
  t.match(await who.json(), { accountId: s.accountId });
});

t.test('a deploy through one worker is served by every worker on the next call', async (t) => {
  for (const version of ['v1', 'v2', 'v3']) {
    const res = await s.deploy('spread', `exports.handler = () => ${JSON.stringify(version)};\n`);
    t.ok(res.status === 200 || res.status === 201, `deploy ${version}: ${res.status}`);
    const seen = new Map<number, Set<string>>();
    for (let i = 0; i < 24; i++) {
      const { pid, status, body } = await s.callOnFreshConnection('spread');
      t.equal(status, 200);
      if (!seen.has(pid)) seen.set(pid, new Set());
      seen.get(pid)!.add(body);
    }
    t.equal(seen.size, 2, `both workers answered (${[...seen.keys()].join(', ')})`);
    t.same(
      [...seen.values()].map((bodies) => [...bodies]),
      [[`"${version}"`], [`"${version}"`]],
      `every answer is ${version}`,
    );
  }
});

t.test('SIGHUP under continuous load: a rolling restart with no failed request, every answer from the deployed version', async (t) => {
  await s.deploy('steady', 'exports.handler = () => "steady";\n');
  const before = await pids();
  const slots = (await s.health()).workers.map((w) => [w.slot, w.pid]).sort();
  let stop!: () => void;
  const stopped = new Promise<void>((r) => (stop = r));
  const load = keepCalling(s, 'steady', 4, stopped);
  await new Promise((r) => setTimeout(r, 500));
  const logged = s.stderr.length;
  process.kill(s.child.pid!, 'SIGHUP');
  t.ok(await eventually(() => s.stderr.slice(logged).includes('rolling restart done'), 30_000), 'the rolling restart finished');
  await new Promise((r) => setTimeout(r, 500));
  stop();
  const result = await load;
  t.comment(`${result.ok} calls during the rolling restart, ${result.failed} failed`);
  t.equal(result.failed, 0, `no failed request ${result.errors.slice(0, 3).join('; ')}`);
  t.ok(result.ok > 100, 'the load kept going');
  t.same([...result.bodies], ['"steady"']);
  const after = await pids();
  t.equal(after.filter((p) => before.includes(p)).length, 0, 'both workers were replaced');
  // The server's log: JSON lines on stderr, each naming its process (the supervisor, or a worker's slot).
  const lines = s.stderr
    .slice(logged)
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as { level: string; worker: number | string; pid: number; msg: string });
  t.match(
    lines.find((l) => l.msg === 'rolling restart done'),
    { level: 'info', worker: 'supervisor', pid: s.child.pid },
  );
  const drained = lines.filter((l) => /^worker \d \(pid \d+\) draining: rolling restart/.test(l.msg));
  t.same(drained.map((l) => [l.worker, l.pid]).sort(), slots, 'each old worker said it drained, naming its slot');
});

t.test('kill -9 of a worker under load: it is replaced and the service keeps answering', async (t) => {
  const victim = (await s.health()).workers[0]!;
  let stop!: () => void;
  const stopped = new Promise<void>((r) => (stop = r));
  const load = keepCalling(s, 'steady', 4, stopped);
  await new Promise((r) => setTimeout(r, 300));
  process.kill(victim.pid, 'SIGKILL');
  t.ok(await eventually(async () => (await s.health()).workers.some((w) => w.slot === victim.slot && w.pid !== victim.pid && w.state === 'ready'), 15_000), 'a new worker took the slot');
  await new Promise((r) => setTimeout(r, 300));
  stop();
  const result = await load;
  t.comment(`kill -9 of one worker: ${result.ok} calls answered, ${result.failed} failed (${[...new Set(result.errors)].slice(0, 3).join('; ')})`);
  t.ok(result.ok > 100, 'the service kept answering');
  t.equal((await s.call('steady')).status, 200);
});

t.test('a catastrophic out-of-memory in a worker leads to its replacement', async (t) => {
  await s.deploy('oom', 'exports.handler = () => new Array(70e6).fill(0).length;\n', { memoryMb: 64 });
  const before = await s.health();
  const res = await s.call('oom');
  t.equal(res.status, 500);
  t.equal(((await res.json()) as { errorCode: string }).errorCode, 'ERR_RESOURCE_LIMIT');
  t.ok(
    await eventually(async () => {
      const now = await s.health();
      return now.workers.length === 2 && now.workers.every((w) => w.state === 'ready') && restarts(now) > restarts(before);
    }, 20_000),
    'the poisoned worker was drained and replaced',
  );
  t.match(s.stderr, /fatal out-of-memory/);
  t.equal((await s.call('steady')).status, 200);
});

t.test('a worker whose resident memory passes --max-worker-rss is drained and replaced', async (t) => {
  // Filled at the first call, not at load: on a loaded machine (a load of 12) filling 450 MB while
  // the deploy validated the code passed the 10 s a load may take. The call has a timeout that only
  // memory, not time, should reach.
  const source = 'let kept;\nexports.handler = () => {\n  if (!kept) kept = new Uint8Array(450 * 1024 * 1024).fill(1);\n  return kept.length;\n};\n';
  const deployed = await s.deploy('hoard', source, { memoryMb: 1024, timeoutMs: 60_000 });
  t.equal(deployed.status, 201, `deployed: ${await deployed.text()}`);
  const before = await s.health();
  const logged = s.stderr.length;
  t.equal((await s.call('hoard')).status, 200);
  t.ok(
    await eventually(async () => {
      const now = await s.health();
      return now.workers.length === 2 && now.workers.every((w) => w.state === 'ready') && restarts(now) > restarts(before);
    }, 20_000),
    'the worker was replaced',
  );
  t.match(s.stderr.slice(logged), /passed the ceiling of 400 MB/);
  t.equal((await s.call('steady')).status, 200);
});

t.test('a worker that keeps dying soon after its start is started again after a growing delay', async (t) => {
  const logged = s.stderr.length;
  for (let i = 0; i < 3; i++) {
    const victim = (await s.health()).workers.find((w) => w.slot === 2)!;
    process.kill(victim.pid, 'SIGKILL');
    t.ok(await eventually(async () => (await s.health()).workers.some((w) => w.slot === 2 && w.pid !== victim.pid && w.state === 'ready'), 15_000), `replaced (${i + 1})`);
  }
  const delays = [...s.stderr.slice(logged).matchAll(/worker 2 \(pid \d+\) exited with SIGKILL; starting a new one(?: in (\d+) ms)?/g)].map((m) => Number(m[1] ?? 0));
  // The first may come after a long run (at once); the next two die within 30 s of their start.
  t.equal(delays.length, 3);
  t.ok(delays[1]! >= 250 && delays[2] === 2 * delays[1]!, `delays ${delays.join(', ')} ms`);
  t.equal((await s.call('steady')).status, 200);
});

t.test('SIGTERM with calls in flight: every one completes, calls on idle kept-alive connections are answered while the drain lingers, then islet exits 0', async (t) => {
  await s.deploy('slow', 'exports.handler = async () => { await new Promise((r) => setTimeout(r, 600)); return "done"; };\n');
  // Kept-alive connections with nothing in flight when the drain starts: a client may still send a
  // call on one at any moment until the worker exits.
  const path_ = `/v2/run/${s.accountId}/steady`;
  const headers = { 'x-service-api-key': s.apiKey };
  const idle = await Promise.all(
    Array.from({ length: 24 }, async () => {
      const client = new Client(s.url, { pipelining: 1, keepAliveTimeout: 60_000 });
      const res = await client.request({ method: 'GET', path: path_, headers });
      await res.body.text();
      return client;
    }),
  );
  const calls = Array.from({ length: 6 }, () => s.call('slow').then(async (res) => [res.status, await res.text()] as const));
  await new Promise((r) => setTimeout(r, 300));
  process.kill(s.child.pid!, 'SIGTERM');
  const answers = await Promise.all(calls);
  t.same(
    answers,
    Array.from({ length: 6 }, () => [200, '"done"']),
    'all six answered',
  );
  // A draining worker lingers until no call has come for 1 s. 200 ms after the calls in flight are
  // answered (longer than a worker needs to close once it is quiet), one straggler every 30 ms on
  // the idle connections: this fails if a worker exits, or closes its engine, as soon as it has
  // nothing in flight.
  await new Promise((r) => setTimeout(r, 200));
  const stragglers: string[] = [];
  for (const client of idle) {
    try {
      const res = await client.request({ method: 'GET', path: path_, headers });
      stragglers.push(`${res.statusCode} ${await res.body.text()} ${res.headers.connection}`);
    } catch (err) {
      stragglers.push(String(err));
    }
    void client.close().catch(() => undefined);
    await new Promise((r) => setTimeout(r, 30));
  }
  t.same(
    stragglers,
    idle.map(() => '200 "steady" close'),
    'every straggler answered, closing its connection',
  );
  t.equal(await s.exited, 0, 'exit code 0');
  const dir = path.join(s.dataDir, 'logs', s.accountId);
  const lines = readdirSync(dir)
    .filter((f) => f.startsWith('slow.'))
    .flatMap((f) => readFileSync(path.join(dir, f), 'utf8').split('\n'))
    .filter((line) => line.includes('"level":"call"'));
  t.equal(lines.length, 6, 'the logs were written before the exit: one call line each');
});
