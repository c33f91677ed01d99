import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import t from 'tap';
import { Egress } from '../../engine/capabilities/fetch/egress';
import { HostMemory } from '../../engine/isolate/host-memory';
import { LogStore } from '../../engine/logs';
import { startChildServer, type ChildServer } from '../helpers/child';
import { fixture } from '../helpers/server';

// Memory the host holds for a function outside its isolate (issue 22, finding 6): log lines are
// cut on the host, one function's burst of lines cannot crowd out another's, and the bodies of a
// function's fetches count against its memory limit.
const MiB = 1024 * 1024;
const BIG = 6 * MiB - 1024;
let upstream: Server;
let upstreamUrl: string;
let s: ChildServer;

t.before(async () => {
  const big = Buffer.alloc(BIG, 0x61);
  upstream = createServer((req, res) => res.end(big));
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/`;
  const folder = fixture('host-memory-node8');
  s = await startChildServer({
    otherAccounts: 1,
    allowPrivateEgress: true,
    deploys: [
      ...['logHuge', 'logBurst', 'fetchMany'].map((name) => ({ name, folder, entrypoint: name, extra: { timeoutMs: 60_000, memoryMb: 64 } })),
      { name: 'hello', folder, entrypoint: 'ok', account: 1 },
    ],
  });
});
t.teardown(() => {
  s.stop();
  upstream.close();
});

function rssMb(): number {
  return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${s.process.pid}/status`, 'utf8'))![1]) / 1024;
}

async function post(name: string, body: unknown, account?: number): Promise<{ status: number; json: unknown }> {
  const res = await s.call(name, { method: 'POST', body: JSON.stringify(body), account });
  return { status: res.status, json: await res.json() };
}

async function logs(name: string, account = 0): Promise<{ message: string; level: string }[]> {
  const who = account === 0 ? { accountId: s.accountId, apiKey: s.apiKey } : s.others[account - 1]!;
  const res = await fetch(`${s.url}/v2/accounts/${who.accountId}/functions/${name}/logs?limit=100000`, { headers: { 'X-Service-Api-Key': who.apiKey } });
  return ((await res.json()) as { entries: { message: string; level: string }[] }).entries;
}

t.test("a log line is cut on the host, whatever the function did to the sandbox's own cut", async (t) => {
  const before = rssMb();
  t.equal((await post('logHuge', { chars: 3 * MiB, lines: 1 })).status, 200);
  const lines = (await logs('logHuge')).filter((e) => e.level === 'info');
  t.equal(lines.length, 1, 'the line is kept');
  t.ok(
    lines.every((line) => line.message.length < 16 * 1024 + 64 && /^x+… \[\d+ more characters\]$/.test(line.message)),
    `each is cut to 16 KiB and says by how much (${lines[0]?.message.length} characters)`,
  );
  t.ok(rssMb() - before < 400, `RSS grew ${(rssMb() - before).toFixed(0)} MB`);
});

t.test("lines past an instance's log budget are dropped in the sandbox, and the next line says how many", async (t) => {
  // 600 lines of 16 KB: 9.8 million characters, over the budget of 4 seconds' worth at once.
  t.equal((await post('logBurst', { lines: 600 })).status, 200);
  await new Promise((resolve) => setTimeout(resolve, 1500));
  t.equal((await post('logBurst', { lines: 1 })).status, 200);
  const entries = await logs('logBurst');
  const kept = entries.filter((e) => e.level === 'info').length;
  t.ok(kept > 0 && kept < 600, `some lines were kept, not all (${kept} of 601)`);
  // The sandbox drops what is over the budget; the host what is over a flush's worth of pending lines.
  const counted = (pattern: RegExp) => entries.map((e) => pattern.exec(e.message)).reduce((n, m) => n + (m ? Number(m[1]) : 0), 0);
  const inSandbox = counted(/^(\d+) log lines dropped: over the log budget of 1048576 characters a second$/);
  const onHost = counted(/^(\d+) log lines dropped \(more than fit/);
  t.ok(inSandbox > 0, `the sandbox dropped ${inSandbox} and said so`);
  t.equal(kept + inSandbox + onHost, 601, `every line is kept or counted (${kept} kept, ${inSandbox} + ${onHost} dropped)`);
});

t.test("one function's burst of lines does not crowd out another function's line", async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'islet-logs-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  // An arena of 4 MB that every function's pending lines share; a burst of 12 MB in one turn, in
  // lines shorter than the neighbour's, so they fill the arena to its last bytes.
  const store = new LogStore(dir, { arenaBytes: 4 * MiB });
  const line = JSON.stringify({ t: 1, requestId: 'a', level: 'log', message: 'y'.repeat(150) });
  for (let i = 0; i < 60_000; i++) store.appendLine('acct-a/burst', line);
  store.appendLine('acct-b/quiet', JSON.stringify({ t: 2, requestId: 'b', level: 'log', message: `the neighbour was here ${'.'.repeat(300)}` }));
  await store.flush();
  await store.flush();
  const mine = await store.read('acct-b', 'quiet');
  t.same(
    mine.map((e) => e.message.slice(0, 22)),
    ['the neighbour was here'],
    "the neighbour's line is kept",
  );
  const theirs = await store.read('acct-a', 'burst');
  t.ok(theirs.length < 60_000, `the burst keeps what fits its share (${theirs.length} of 60,000 lines)`);
  t.ok(
    theirs.some((e) => /dropped/.test(e.message)),
    'and says how many it dropped',
  );
});

t.test("the bodies of a function's fetches count against its memory limit", async (t) => {
  const before = rssMb();
  let peak = before;
  const sampling = setInterval(() => (peak = Math.max(peak, rssMb())), 20);
  const result = await post('fetchMany', { url: upstreamUrl, count: 100 });
  clearInterval(sampling);
  t.comment(`100 fetches of 6 MiB: ${result.status} ${JSON.stringify(result.json)}; RSS ${before.toFixed(0)} -> peak ${peak.toFixed(0)} MB`);
  // 100 answers of 6 MiB are 600 MB; a function of 64 MB gets at most that much held for it.
  t.ok(peak - before < 450, `the server's RSS grew ${(peak - before).toFixed(0)} MB (it held 1.2 GB before)`);
  t.equal((await s.call('hello', { account: 1 })).status, 200, 'another account is served');
});

t.test('the egress takes a response body from the budget as it arrives and gives it back', async (t) => {
  const egress = new Egress({ allowPrivate: true, selfPorts: () => [], maxResponseBytes: 8 * MiB, timeoutMs: 10_000 });
  t.teardown(() => egress.close());
  const small = new HostMemory(2 * MiB);
  const request = { url: upstreamUrl, method: 'GET', headers: [], redirect: 'follow', timeoutMs: undefined };
  await t.rejects(egress.fetch(request, undefined, small), { code: 'ERR_EGRESS_TOO_LARGE', message: /would pass its memory limit/ });
  t.equal(small.held, 0, 'a refused body gives back what it took');
  const roomy = new HostMemory(64 * MiB);
  const answer = await egress.fetch(request, undefined, roomy);
  t.equal(answer.body?.byteLength, BIG);
  t.equal(roomy.held, 0, 'a body read whole is given back for its holder to take');
});
