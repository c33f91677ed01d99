/**
 * `npm run soak [-- --minutes M] [-- --connections C]`: a long mixed load against one islet server
 * (good, failing, spinning and memory-hungry functions at c=128 by default, 5 minutes). Every
 * answer is checked against what its function must answer; the report gives the unexpected ones
 * (target 0) and the server's RSS at the start (after a minute of warm-up), middle and end
 * (target: growth under 10%). Not part of `npm test`.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { Agent, request } from 'undici';

interface Kind {
  name: string;
  weight: number;
  /** Whether a status and error code are what this function must answer. */
  expected: (status: number, code: string | undefined) => boolean;
}

// One instance runs one call at a time: `hungry` (~50 ms a call) serves about 20 calls/s, so its
// share stays under that; past it, calls queue until they time out, which is overload, not a fault.
const KINDS: Kind[] = [
  { name: 'hello', weight: 85, expected: (s) => s === 200 },
  { name: 'fails', weight: 10, expected: (s, c) => s === 500 && c === 'ERR_FUNCTION_FAILED' },
  { name: 'hungry', weight: 3, expected: (s, c) => s === 200 || (s === 500 && c === 'ERR_RESOURCE_LIMIT') },
  { name: 'spin', weight: 2, expected: (s, c) => s === 504 && c === 'ERR_TIMEOUT' },
];

function rssMb(pid: number): number {
  return Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { minutes: { type: 'string', default: '5' }, connections: { type: 'string', default: '128' } } });
  const minutes = Number(values.minutes);
  const connections = Number(values.connections);
  const config = { core: true, soak: true, coldFunctions: 0, manyFunctions: 0, pythonColdFunctions: 0, python: false, cacheDir: path.join(os.tmpdir(), 'islet-bench-cache') };
  const child = spawn(process.execPath, ['--no-node-snapshot', path.join(__dirname, 'server.js')], { env: { ...process.env, BENCH_CONFIG: JSON.stringify(config) }, stdio: ['ignore', 'pipe', 'inherit'] });
  const ready = await new Promise<{ url: string; accountId: string; apiKey: string }>((resolve, reject) => {
    let out = '';
    child.once('exit', (code) => reject(new Error(`server exited with ${code}`)));
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes('\n')) resolve(JSON.parse(out.split('\n')[0]!));
    });
  });
  const agent = new Agent({ connections, pipelining: 1 });
  const total = KINDS.reduce((a, k) => a + k.weight, 0);
  const pick = (): Kind => {
    let r = Math.random() * total;
    for (const kind of KINDS) if ((r -= kind.weight) < 0) return kind;
    return KINDS[0]!;
  };
  const counts = new Map<string, { ok: number; unexpected: number }>(KINDS.map((k) => [k.name, { ok: 0, unexpected: 0 }]));
  const unexpected: string[] = [];
  const started = Date.now();
  const endAt = started + minutes * 60_000;
  const samples: { label: string; rss: number }[] = [];
  const warmupMs = Math.min(60_000, (minutes * 60_000) / 5);
  const sampleAt = (label: string, ms: number) => setTimeout(() => samples.push({ label, rss: rssMb(child.pid!) }), ms);
  const timers = [sampleAt('start (after warm-up)', warmupMs), sampleAt('middle', minutes * 30_000)];
  console.log(`soak: ${minutes} min, c=${connections}, mix ${KINDS.map((k) => `${k.name} ${k.weight}%`).join(', ')}`);
  const progress = setInterval(() => {
    const done = [...counts.values()].reduce((a, c) => a + c.ok + c.unexpected, 0);
    console.log(`  ${Math.round((Date.now() - started) / 1000)} s: ${done} calls, ${unexpected.length} unexpected, RSS ${rssMb(child.pid!).toFixed(0)} MB`);
  }, 30_000);
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (Date.now() < endAt) {
        const kind = pick();
        try {
          const res = await request(`${ready.url}/v2/run/${ready.accountId}/${kind.name}?name=soak`, { dispatcher: agent, headers: { 'x-service-api-key': ready.apiKey } });
          const text = await res.body.text();
          const code = /"errorCode":"(\w+)"/.exec(text)?.[1];
          const entry = counts.get(kind.name)!;
          if (kind.expected(res.statusCode, code)) entry.ok++;
          else {
            entry.unexpected++;
            if (unexpected.length < 20) unexpected.push(`${kind.name}: ${res.statusCode} ${text.slice(0, 160)}`);
          }
        } catch (err) {
          counts.get(kind.name)!.unexpected++;
          if (unexpected.length < 20) unexpected.push(`${kind.name}: ${(err as Error).message}`);
        }
      }
    }),
  );
  clearInterval(progress);
  timers.forEach(clearTimeout);
  samples.push({ label: 'end', rss: rssMb(child.pid!) });
  child.kill('SIGKILL');
  await agent.close();
  console.log('\ncalls by function (as expected / unexpected):');
  for (const [name, c] of counts) console.log(`  ${name.padEnd(8)} ${c.ok} / ${c.unexpected}`);
  const badTotal = [...counts.values()].reduce((a, c) => a + c.unexpected, 0);
  console.log(`unexpected answers: ${badTotal} (target 0)`);
  for (const line of unexpected) console.log(`  ${line}`);
  console.log('RSS:');
  for (const s of samples) console.log(`  ${s.label.padEnd(22)} ${s.rss.toFixed(0)} MB`);
  const base = samples[0]?.rss ?? 0;
  const growth = base ? ((samples[samples.length - 1]!.rss - base) / base) * 100 : 0;
  console.log(`growth after warm-up: ${growth.toFixed(1)}% (target < 10%)`);
  process.exitCode = badTotal === 0 && growth < 10 ? 0 : 1;
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
