import { generateKeyPairSync } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import t, { type Test } from 'tap';
import { packFolder } from '../../cli/pack';
import { startChildServer, type ChildServer } from '../helpers/child';
import { functionFolder } from '../helpers/functions';
import { fixture } from '../helpers/server';

// Host work a hostile tenant asks for (issue 22, findings 4 and 5): work over the host-work limits
// fails at once naming the limit, and heavy work within them runs on islet's host-work threads, so
// that another account's calls, deploys and log reads are not held behind it, also while the same
// tenant floods its logs and holds many fetch answers (finding 6). The server runs in a
// child process: the test's own timers must not wait behind a server thread that is held.
let s: ChildServer;
/** A site the attacker's fetches read 1 MiB answers from. */
let upstream: Server;
const NEIGHBOUR = 1;
/** The attacker's kinds of heavy work (findings 4-6), each run in a loop beside the neighbour. */
const KINDS = ['brotli', 'pbkdf2', 'pbkdf2Async', 'scrypt', 'random', 'logs', 'fetch'];
// The neighbour test runs until every kind of heavy work has answered once: 129 s at a load of 15
// on 2 cores (195 s for the file), and up to 300 s by its own bound.
t.setTimeout(900_000);

t.before(async () => {
  const folder = fixture('host-work-node8');
  const attacks = ['ok', 'randomHuge', 'shakeHuge', 'pbkdf2LongKey', 'pbkdf2ManyIterations', 'scryptHugeP', 'rsaHuge', 'dhHuge', 'encryptedKey', 'brotliHuge', 'pbkdf2Callbacks', 'heavy'];
  // Each kind of heavy work in a function (an instance) of its own, as an attacker would spread it.
  // Their work is queued on the host-work threads behind the other kinds': at a load of 15 on 2
  // cores a pbkdf2Async call did not end within 60 s.
  const heavy = KINDS.map((kind) => ({ name: `heavy_${kind}`, folder, entrypoint: 'heavy', extra: { timeoutMs: 180_000 } }));
  const big = Buffer.alloc(1024 * 1024, 0x61);
  upstream = createServer((req, res) => res.end(big));
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  s = await startChildServer({
    otherAccounts: 1,
    allowPrivateEgress: true,
    deploys: [...attacks.map((name) => ({ name, folder, entrypoint: name, extra: { timeoutMs: 30_000 } })), ...heavy, { name: 'hello', folder, entrypoint: 'ok', account: NEIGHBOUR }],
  });
});
t.teardown(() => {
  s.stop();
  upstream.close();
});

interface Outcome {
  ok: boolean;
  name?: string;
  code?: string;
  message?: string;
}

async function attack(name: string, body?: unknown): Promise<Outcome> {
  const res = await s.call(name, { method: 'POST', body: JSON.stringify(body ?? {}) });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`${name}: ${res.status} ${text}`);
  return JSON.parse(text) as Outcome;
}

const OVER_LIMITS: Record<string, RegExp> = {
  randomHuge: /1073741824 random bytes in one call are over islet's limit of 33554432/,
  shakeHuge: /hash output of 1000000000 bytes is over islet's limit/,
  pbkdf2LongKey: /PBKDF2 key of 1000000000 bytes is over islet's limit/,
  pbkdf2ManyIterations: /PBKDF2 with 1000000000 iterations .* over islet's limit of 4000000/,
  scryptHugeP: /scrypt with N=1024, r=8, p=1000000 mixes .* over islet's limit/,
  rsaHuge: /RSA keys of 16384 bits are over islet's limit of 4096/,
  dhHuge: /Diffie-Hellman primes of 4096 bits are over islet's limit of 1024/,
  brotliHuge: /brotli at quality 11 of 8388608 bytes is over islet's limit of 4194304 bytes/,
};

for (const [name, message] of Object.entries(OVER_LIMITS)) {
  t.test(`${name}: refused at once with a RangeError naming islet's limit`, async (t) => {
    const outcome = await attack(name);
    t.equal(outcome.ok, false, 'the work is refused');
    t.equal(outcome.name, 'RangeError');
    t.equal(outcome.code, 'ERR_OUT_OF_RANGE');
    t.match(outcome.message, message);
  });
}

/** An encrypted PKCS#8 key whose PBKDF2 iteration count is `iterations` (OpenSSL reads it from the key). */
function keyWithIterations(iterations: number): string {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const pem = privateKey.export({ type: 'pkcs8', format: 'pem', cipher: 'aes-256-cbc', passphrase: 'secret' }) as string;
  const der = Buffer.from(pem.replace(/-----[^-]+-----|\s+/g, ''), 'base64');
  const patched = encodeDer(rewriteIterations(decodeDer(der), iterations));
  return `-----BEGIN ENCRYPTED PRIVATE KEY-----\n${patched.toString('base64').replace(/.{64}/g, '$&\n')}\n-----END ENCRYPTED PRIVATE KEY-----\n`;
}

type Der = { tag: number; children: Der[] } | { tag: number; value: Buffer };

function decodeDer(bytes: Buffer): Der {
  const [node] = decodeAll(bytes);
  return node!;
}

function decodeAll(bytes: Buffer): Der[] {
  const out: Der[] = [];
  for (let i = 0; i < bytes.length; ) {
    const tag = bytes[i]!;
    let length = bytes[i + 1]!;
    let start = i + 2;
    if (length & 0x80) {
      const count = length & 0x7f;
      length = bytes.readUIntBE(start, count);
      start += count;
    }
    const value = bytes.subarray(start, start + length);
    out.push(tag & 0x20 ? { tag, children: decodeAll(value) } : { tag, value });
    i = start + length;
  }
  return out;
}

function encodeDer(node: Der): Buffer {
  const value = 'children' in node ? Buffer.concat(node.children.map(encodeDer)) : node.value;
  const length = value.length < 128 ? Buffer.from([value.length]) : Buffer.concat([Buffer.from([0x82]), Buffer.from([value.length >> 8, value.length & 0xff])]);
  return Buffer.concat([Buffer.from([node.tag]), length, value]);
}

/** EncryptedPrivateKeyInfo → algorithm → PBES2 params → PBKDF2 → its params' INTEGER (the iteration count). */
function rewriteIterations(root: Der, iterations: number): Der {
  const kdfParams = (((root as { children: Der[] }).children[0] as { children: Der[] }).children[1] as { children: Der[] }).children[0] as { children: Der[] };
  const params = kdfParams.children[1] as { children: Der[] };
  const count = Buffer.alloc(5);
  count.writeUIntBE(iterations, 1, 4);
  params.children[1] = { tag: 0x02, value: count };
  return root;
}

t.test('an encrypted private key asking for 2,000,000,000 PBKDF2 iterations is refused before OpenSSL derives anything', async (t) => {
  const outcome = await attack('encryptedKey', { pem: keyWithIterations(2_000_000_000) });
  t.equal(outcome.ok, false);
  t.equal(outcome.code, 'ERR_OUT_OF_RANGE');
  t.match(outcome.message, /encrypted with 2000000000 PBKDF2 iterations, over islet's limit of 2000000/);
});

t.test('callback key derivations over the limits fail through their callbacks', async (t) => {
  const res = await s.call('pbkdf2Callbacks', { method: 'POST', body: '{}' });
  const outcomes = (await res.json()) as Outcome[];
  t.equal(outcomes.length, 4);
  for (const o of outcomes) t.match(o, { ok: false, code: 'ERR_OUT_OF_RANGE', message: /over islet's limit/ });
});

/** The neighbour's first deploy of `name` and a read of its logs: how long each took, in ms. */
async function neighbourManages(t: Test, neighbour: { accountId: string; apiKey: string }, name: string): Promise<{ deployMs: number; logsMs: number }> {
  const headers = { 'X-Service-Api-Key': neighbour.apiKey };
  const began = performance.now();
  const form = new FormData();
  form.set('spec', JSON.stringify({ runtime: 'node8', file: 'function.js', entrypoint: 'handler', env: {} }));
  form.set('bundle', new Blob([await packFolder(functionFolder('exports.handler = () => "v2";'))]), 'bundle.tar.gz');
  const deployed = await fetch(`${s.url}/v2/accounts/${neighbour.accountId}/functions/${name}`, { method: 'PUT', headers, body: form });
  t.equal(deployed.status, 201, 'the neighbour deploys');
  await deployed.text();
  const deployMs = performance.now() - began;
  const reading = performance.now();
  const logs = await fetch(`${s.url}/v2/accounts/${neighbour.accountId}/functions/hello/logs`, { headers });
  t.equal(logs.status, 200, 'the neighbour reads its logs');
  await logs.text();
  return { deployMs, logsMs: performance.now() - reading };
}

/** The resident memory of the server's process, in MB. */
function rssMb(): number {
  const status = readFileSync(`/proc/${s.process.pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)![1]) / 1024;
}

t.test('a neighbour is served while another account runs heavy host work in a loop', async (t) => {
  const neighbour = s.others[NEIGHBOUR - 1]!;
  // Warm up both sides: the neighbour's instance, the attacker's instance and host-work threads.
  t.equal((await s.call('hello', { account: NEIGHBOUR })).status, 200);
  t.match(await attack('heavy', { kind: 'pbkdf2' }), { ok: true });
  // The baseline: what the neighbour's calls, deploy and log read take on this machine as it is now,
  // with no attack. The bounds below are generous multiples of it (and never under 10 s), so that
  // a loaded machine, slow for everyone, does not break them but a held server thread does.
  const quiet: number[] = [];
  for (let i = 0; i < 20; i++) {
    const sent = performance.now();
    const res = await s.call('hello', { account: NEIGHBOUR });
    await res.text();
    quiet.push(performance.now() - sent);
  }
  quiet.sort((a, b) => a - b);
  const quietCallMs = quiet[quiet.length >> 1]!;
  const quietManage = await neighbourManages(t, neighbour, 'quiet');

  let stop = false;
  const kinds = KINDS;
  const bigUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/`;
  const rounds: Record<string, number> = {};
  const attacker = Promise.all(
    kinds.map(async (kind) => {
      rounds[kind] = 0;
      while (!stop) {
        const res = await s.call(`heavy_${kind}`, { method: 'POST', body: JSON.stringify({ kind, url: bigUrl }) });
        await res.text();
        if (res.status === 200) rounds[kind]!++;
      }
    }),
  );

  const latencies: number[] = [];
  let failed = 0;
  let maxRss = rssMb();
  const rssBefore = maxRss;
  // At least 8 s and past the 50th call (where the neighbour deploys and reads its logs), and until
  // every kind of the attacker's work has run once (on a loaded machine its share of the host-work
  // threads may take longer to get through them).
  const started = Date.now();
  const busy = () => Date.now() - started < 8000 || latencies.length <= 50 || kinds.some((kind) => rounds[kind] === 0);
  let deployMs = 0;
  let logsMs = 0;
  while (busy() && Date.now() - started < 300_000) {
    const sent = performance.now();
    const res = await s.call('hello', { account: NEIGHBOUR });
    await res.text();
    latencies.push(performance.now() - sent);
    if (res.status !== 200) failed++;
    maxRss = Math.max(maxRss, rssMb());
    if (latencies.length === 50) ({ deployMs, logsMs } = await neighbourManages(t, neighbour, 'other'));
  }
  stop = true;
  await attacker;
  latencies.sort((a, b) => a - b);
  const slowest = latencies[latencies.length - 1]!;
  t.comment(
    `neighbour: ${latencies.length} calls, p50 ${latencies[latencies.length >> 1]!.toFixed(1)} ms, slowest ${slowest.toFixed(0)} ms; deploy ${deployMs.toFixed(0)} ms, log read ${logsMs.toFixed(0)} ms; RSS ${rssBefore.toFixed(0)} -> max ${maxRss.toFixed(0)} MB; attacker rounds ${JSON.stringify(rounds)}`,
  );
  t.comment(`baseline without the attack: call p50 ${quietCallMs.toFixed(1)} ms, deploy ${quietManage.deployMs.toFixed(0)} ms, log read ${quietManage.logsMs.toFixed(0)} ms`);
  t.equal(failed, 0, 'every neighbour call is answered');
  for (const kind of kinds) t.ok(rounds[kind]! > 0, `the attacker's ${kind} work ran`);
  // Generous bounds that load cannot break but a held server thread does (calls waited 15-55 s
  // behind such work before; on an idle machine a call's p50 is about 10 ms and a deploy 400 ms, so
  // the bounds are 10 s there). They scale with the baseline measured above: at a load of 15 on
  // 2 cores a neighbour deploy took 10.4 s beside the attack. The bench's host-work neighbour
  // scenario measures the p99 against the unloaded one.
  const callBound = Math.max(10_000, 100 * quietCallMs);
  // A deploy is CPU work of its own (a bundle, a check in an isolate): beside four busy loops and
  // other test files (load 16-20) it took 31 s against 1.5 s before the attack. Held behind the
  // attacker's work it would not finish while the attack runs, so any bound catches that.
  const manageBound = Math.max(30_000, 30 * Math.max(quietManage.deployMs, quietManage.logsMs));
  t.ok(slowest < callBound, `no neighbour call waited ${(callBound / 1000).toFixed(1)} s (slowest ${slowest.toFixed(0)} ms)`);
  t.ok(deployMs < manageBound && logsMs < manageBound, `the neighbour's deploy and log read are answered within ${(manageBound / 1000).toFixed(1)} s`);
  t.ok(maxRss < rssBefore + 600, `the server's RSS stayed within 600 MB of where it was (max ${maxRss.toFixed(0)} MB)`);
});
