/**
 * `npm run soak [-- --minutes M] [-- --connections C]`: a long mixed load against one islet server
 * (good, failing, spinning and memory-hungry functions, and one taking 10 KB POST bodies, over 128
 * connections by default, 5 minutes). Every answer is checked against what its function must
 * answer; the report gives the unexpected ones (target 0) and the server's RSS at the start (after
 * a minute of warm-up), middle and end (target: growth under 10%). Not part of `npm test`.
 */
import * as os from 'node:os';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { Agent, request } from 'undici';
import { SERVER_V8_FLAGS } from '../engine/node-flags';
import { tenKilobyteJson } from './payloads';
import { rssMb, startProcess } from './process';

interface Kind {
  name: string;
  /** Connections that call this function (the rest call hello). */
  connections: number;
  /** A JSON body to POST (GET when absent). */
  body?: string;
  /** Whether a status and error code are what this function must answer. */
  expected: (status: number, code: string | undefined) => boolean;
}

// Each connection calls one function. One instance runs one call at a time, so `hungry` (~50 ms a
// call) gets a few connections: more would queue its calls until they time out, which is overload,
// not a fault.
const KINDS: Kind[] = [
  { name: 'post', connections: 16, body: tenKilobyteJson(), expected: (s) => s === 200 },
  { name: 'fails', connections: 12, expected: (s, c) => s === 500 && c === 'ERR_FUNCTION_FAILED' },
  { name: 'hungry', connections: 4, expected: (s, c) => s === 200 || (s === 500 && c === 'ERR_RESOURCE_LIMIT') },
  { name: 'spin', connections: 2, expected: (s, c) => s === 504 && c === 'ERR_TIMEOUT' },
];
const HELLO: Kind = { name: 'hello', connections: 0, expected: (s) => s === 200 };

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { minutes: { type: 'string', default: '5' }, connections: { type: 'string', default: '128' } } });
  const minutes = Number(values.minutes);
  const connections = Number(values.connections);
  const config = { core: true, soak: true, coldFunctions: 0, manyFunctions: 0, pythonColdFunctions: 0, python: false, cacheDir: path.join(os.tmpdir(), 'islet-bench-cache') };
  const { child, ready } = await startProcess<{ url: string; accountId: string; apiKey: string }>('server.js', { BENCH_CONFIG: JSON.stringify(config) }, SERVER_V8_FLAGS);
  const agent = new Agent({ connections, pipelining: 1 });
  const assignment: Kind[] = KINDS.flatMap((k) => Array.from({ length: k.connections }, () => k));
  while (assignment.length < connections) assignment.push(HELLO);
  const counts = new Map<string, { ok: number; unexpected: number }>([HELLO, ...KINDS].map((k) => [k.name, { ok: 0, unexpected: 0 }]));
  let unexpectedTotal = 0;
  const unexpected: string[] = [];
  const started = Date.now();
  const endAt = started + minutes * 60_000;
  // RSS every 10 s; single samples swing ±10% with garbage collection, so growth compares the mean
  // of the minute after warm-up with the mean of the last minute.
  const samples: { at: number; rss: number }[] = [];
  const warmupMs = Math.min(60_000, (minutes * 60_000) / 5);
  const sampler = setInterval(() => samples.push({ at: Date.now() - started, rss: rssMb(child.pid!) }), 10_000);
  console.log(`soak: ${minutes} min, c=${connections}: ${KINDS.map((k) => `${k.name} ${k.connections}`).join(', ')}, hello the rest`);
  const progress = setInterval(() => {
    const done = [...counts.values()].reduce((a, c) => a + c.ok + c.unexpected, 0);
    console.log(`  ${Math.round((Date.now() - started) / 1000)} s: ${done} calls, ${unexpectedTotal} unexpected, RSS ${rssMb(child.pid!).toFixed(0)} MB`);
  }, 30_000);
  await Promise.all(
    assignment.slice(0, connections).map(async (kind) => {
      while (Date.now() < endAt) {
        try {
          const res = await request(`${ready.url}/v2/run/${ready.accountId}/${kind.name}?name=soak`, {
            dispatcher: agent,
            method: kind.body === undefined ? 'GET' : 'POST',
            body: kind.body,
            headers: kind.body === undefined ? { 'x-service-api-key': ready.apiKey } : { 'x-service-api-key': ready.apiKey, 'content-type': 'application/json' },
          });
          const text = await res.body.text();
          const code = /"errorCode":"(\w+)"/.exec(text)?.[1];
          const entry = counts.get(kind.name)!;
          if (kind.expected(res.statusCode, code)) entry.ok++;
          else {
            entry.unexpected++;
            unexpectedTotal++;
            if (unexpected.length < 20) unexpected.push(`${kind.name}: ${res.statusCode} ${text.slice(0, 160)}`);
          }
        } catch (err) {
          counts.get(kind.name)!.unexpected++;
          unexpectedTotal++;
          if (unexpected.length < 20) unexpected.push(`${kind.name}: ${(err as Error).message}`);
        }
      }
    }),
  );
  clearInterval(progress);
  clearInterval(sampler);
  samples.push({ at: Date.now() - started, rss: rssMb(child.pid!) });
  child.kill('SIGKILL');
  await agent.close();
  console.log('\ncalls by function (as expected / unexpected):');
  for (const [name, c] of counts) console.log(`  ${name.padEnd(8)} ${c.ok} / ${c.unexpected}`);
  const badTotal = [...counts.values()].reduce((a, c) => a + c.unexpected, 0);
  console.log(`unexpected answers: ${badTotal} (target 0)`);
  for (const line of unexpected) console.log(`  ${line}`);
  const windowMs = Math.min(60_000, (minutes * 60_000 - warmupMs) / 2);
  const mean = (list: { rss: number }[]) => list.reduce((a, x) => a + x.rss, 0) / Math.max(1, list.length);
  const early = samples.filter((x) => x.at >= warmupMs && x.at < warmupMs + windowMs);
  const late = samples.filter((x) => x.at >= samples[samples.length - 1]!.at - windowMs);
  console.log(`RSS every 10 s (MB): ${samples.map((x) => x.rss.toFixed(0)).join(' ')}`);
  console.log(`RSS mean after warm-up ${mean(early).toFixed(0)} MB, last minute ${mean(late).toFixed(0)} MB`);
  const growth = ((mean(late) - mean(early)) / mean(early)) * 100;
  console.log(`growth after warm-up: ${growth.toFixed(1)}% (target < 10%)`);
  process.exitCode = badTotal === 0 && growth < 10 ? 0 : 1;
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
