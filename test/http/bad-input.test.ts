import { connect } from 'node:net';
import t from 'tap';
import { fixture, startTestServer, type TestServer } from '../helpers/server';

// Hostile HTTP: thousands of malformed requests. Each is answered with a 4xx or its connection is
// closed; nothing gets a 5xx, nothing hangs, and the server keeps serving. Requests that never end
// (stalled senders, more headers than uWS parses) are closed by the server's idle timeout.
const TOTAL = 10_000;
const CONCURRENCY = 48;
// The requests took 35-81 s in five CI runs on 2 cores and 293 s in one at a load of 15 (tap's
// default for the whole file is 300 s).
t.setTimeout(900_000);
let s: TestServer;

t.before(async () => {
  s = await startTestServer({ limits: { requestBodyBytes: 64 * 1024, responseBodyBytes: 8 * 1024 * 1024 } });
  await s.deploy('hello', fixture('seed-node8'), 'hello');
  await s.deploy('public_big', fixture('probes-node8'), 'bigResponse');
});
t.teardown(() => s.stop());

type Case = { name: string; chunks: (string | Buffer)[]; closeAfterMs?: number; gapMs?: number };

function cases(account: string, key: string): ((i: number) => Case)[] {
  const run = `/v2/run/${account}`;
  const auth = `X-Service-Api-Key: ${key}\r\n`;
  return [
    () => ({ name: 'unknown method', chunks: [`FROB ${run}/hello HTTP/1.1\r\nHost: x\r\n\r\n`] }),
    () => ({ name: 'huge header', chunks: [`GET ${run}/hello HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(70_000)}\r\n\r\n`] }),
    () => ({ name: 'many headers', chunks: [`GET ${run}/hello HTTP/1.1\r\nHost: x\r\n${Array.from({ length: 45 }, (_, j) => `X-H${j}: v`).join('\r\n')}\r\nConnection: close\r\n\r\n`] }),
    () => ({ name: 'invalid UTF-8 in the name', chunks: [Buffer.concat([Buffer.from(`GET ${run}/hel`), Buffer.from([0xff, 0xfe, 0xc3]), Buffer.from(' HTTP/1.1\r\nHost: x\r\n\r\n')])] }),
    () => ({ name: 'percent-encoded invalid UTF-8', chunks: [`GET ${run}/%FF%FE%C3 HTTP/1.1\r\nHost: x\r\n${auth}\r\n`] }),
    () => ({ name: '.. in the name', chunks: [`GET ${run}/../../../etc/passwd HTTP/1.1\r\nHost: x\r\n${auth}\r\n`] }),
    () => ({ name: 'encoded .. in the name', chunks: [`GET ${run}/%2e%2e%2f%2e%2e%2fetc HTTP/1.1\r\nHost: x\r\n${auth}\r\n`] }),
    () => ({ name: 'oversize declared body', chunks: [`POST ${run}/hello HTTP/1.1\r\nHost: x\r\n${auth}Content-Length: 99999999\r\n\r\n{"a":`] }),
    () => ({
      name: 'oversize streamed body',
      chunks: [`POST ${run}/hello HTTP/1.1\r\nHost: x\r\n${auth}Transfer-Encoding: chunked\r\n\r\n`, ...Array.from({ length: 20 }, () => `1000\r\n${'x'.repeat(0x1000)}\r\n`)],
    }),
    () => ({ name: 'truncated body, then gone', chunks: [`POST ${run}/hello HTTP/1.1\r\nHost: x\r\n${auth}Content-Length: 100\r\n\r\n{"name":`], closeAfterMs: 20 }),
    () => ({ name: 'headers cut off, then gone', chunks: [`GET ${run}/hello HTTP/1.1\r\nHost: x\r\nX-Serv`], closeAfterMs: 10 }),
    () => ({ name: 'invalid Content-Length', chunks: [`POST ${run}/hello HTTP/1.1\r\nHost: x\r\n${auth}Content-Length: abc\r\n\r\n{}`] }),
    () => ({ name: 'negative Content-Length', chunks: [`POST ${run}/hello HTTP/1.1\r\nHost: x\r\n${auth}Content-Length: -5\r\n\r\n{}`] }),
    () => ({ name: 'bad chunked framing', chunks: [`POST ${run}/hello HTTP/1.1\r\nHost: x\r\n${auth}Transfer-Encoding: chunked\r\n\r\nZZ\r\nhello\r\n0\r\n\r\n`] }),
    () => ({ name: 'no key', chunks: [`GET ${run}/hello HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`] }),
    () => ({ name: 'bad key', chunks: [`GET ${run}/hello HTTP/1.1\r\nHost: x\r\nX-Service-Api-Key: ${'k'.repeat(5000)}\r\nConnection: close\r\n\r\n`] }),
    () => ({ name: 'huge query string', chunks: [`GET ${run}/hello?${'q=1&'.repeat(3000)} HTTP/1.1\r\nHost: x\r\n${auth}Connection: close\r\n\r\n`] }),
    () => ({ name: 'unknown account and name', chunks: [`GET /v2/run/nobody/${'n'.repeat(300)} HTTP/1.1\r\nHost: x\r\n${auth}Connection: close\r\n\r\n`] }),
    () => ({
      name: 'management route with junk',
      chunks: [`PUT /v2/accounts/${account}/functions/x HTTP/1.1\r\nHost: x\r\n${auth}Content-Type: multipart/form-data; boundary=zz\r\nContent-Length: 10\r\n\r\n0123456789`],
    }),
    () => ({ name: 'slow sender', chunks: [`GET ${run}/hello`, ' HTTP/1.1\r\n', `Host: x\r\n${auth}`, 'Connection: close\r\n\r\n'], gapMs: 30 }),
    () => ({ name: 'dropped mid-response', chunks: [`GET /v2/run/${account}/public_big HTTP/1.1\r\nHost: x\r\n\r\n`], closeAfterMs: 30 }),
  ];
}

/** Requests that never complete: the server must close them itself (uWS's idle timeout, ~10 s). */
function stalledCases(account: string): Case[] {
  return [
    { name: 'binary garbage', chunks: [Buffer.from(Array.from({ length: 200 }, (_, j) => (j * 7919) % 256)), '\r\n\r\n'] },
    { name: 'a TLS hello on the plain port', chunks: [Buffer.from('\x16\x03\x01\x00\xa5\x01\x00\x00\xa1\x03\x03', 'latin1')] },
    { name: 'more headers than parsed', chunks: [`GET /v2/run/${account}/hello HTTP/1.1\r\nHost: x\r\n${Array.from({ length: 300 }, (_, j) => `X-H${j}: v`).join('\r\n')}\r\n\r\n`] },
    { name: 'slow loris', chunks: [`GET /v2/run/${account}/hello HTTP/1.1\r\nHost: x\r\nX-A: `] },
  ];
}

interface Outcome {
  name: string;
  status: number | undefined;
  errorCode: string | undefined;
  timedOut: boolean;
}

function send(port: number, c: Case): Promise<Outcome> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let data = '';
    let done = false;
    const finish = (timedOut = false) => {
      if (done) return;
      done = true;
      clearTimeout(limit);
      socket.destroy();
      const m = /^HTTP\/1\.[01] (\d{3})/.exec(data);
      resolve({ name: c.name, status: m ? Number(m[1]) : undefined, errorCode: /"errorCode":"(\w+)"/.exec(data)?.[1], timedOut });
    };
    const limit = setTimeout(() => finish(true), 16_000);
    socket.on('data', (chunk) => {
      data += chunk.toString('latin1');
      if (/^HTTP\/1\.[01] \d{3}[^]*\r\n\r\n[^]/.test(data)) finish();
    });
    socket.on('close', () => finish());
    socket.on('error', () => finish());
    socket.on('connect', async () => {
      for (const chunk of c.chunks) {
        if (socket.destroyed) return;
        socket.write(chunk);
        if (c.gapMs) await new Promise((r) => setTimeout(r, c.gapMs));
      }
      if (c.closeAfterMs !== undefined) setTimeout(() => finish(), c.closeAfterMs);
    });
  });
}

t.test(`${TOTAL} malformed or hostile requests: 4xx or a clean close, never a 5xx or a hang`, async (t) => {
  const port = Number(new URL(s.url).port);
  const makers = cases(s.accountId, s.apiKey);
  const byCase = new Map<string, Map<string, number>>();
  const bad: Outcome[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < TOTAL) {
        const i = next++;
        const outcome = await send(port, makers[i % makers.length]!(i));
        const key = outcome.timedOut ? 'timeout' : outcome.status === undefined ? 'closed' : `${outcome.status}${outcome.errorCode ? ` ${outcome.errorCode}` : ''}`;
        const counts = byCase.get(outcome.name) ?? new Map<string, number>();
        counts.set(key, (counts.get(key) ?? 0) + 1);
        byCase.set(outcome.name, counts);
        const validAnyway = ['slow sender', 'dropped mid-response', 'huge query string', 'many headers'].includes(outcome.name);
        // 48 concurrent 7 MB responses in one 128 MB instance may go over its memory limit: that is
        // the contract's answer (ERR_RESOURCE_LIMIT), not a failure.
        const memoryLimit = outcome.name === 'dropped mid-response' && outcome.status === 500 && outcome.errorCode === 'ERR_RESOURCE_LIMIT';
        const acceptable = !outcome.timedOut && (outcome.status === undefined || (outcome.status >= 400 && outcome.status < 500) || (validAnyway && outcome.status === 200) || memoryLimit);
        if (!acceptable) bad.push(outcome);
      }
    }),
  );
  for (const [name, counts] of byCase) t.comment(`${name}: ${[...counts].map(([k, v]) => `${k}×${v}`).join(', ')}`);
  t.same(bad.slice(0, 5), [], `every request answered 4xx or closed cleanly (${bad.length} not)`);
  const health = await fetch(`${s.url}/healthz`);
  t.equal(health.status, 200, 'the server is up');
  const ok = await s.call('hello', { query: 'name=after' });
  t.equal(await ok.text(), '"Hello AFTER!"', 'and still serves');
});

t.test('stalled requests are closed by the server, and do not stop it serving', async (t) => {
  const port = Number(new URL(s.url).port);
  const started = performance.now();
  const stalled = stalledCases(s.accountId).flatMap((c) => Array.from({ length: 8 }, () => send(port, c)));
  const meanwhile = await s.call('hello', { query: 'name=meanwhile' });
  t.equal(await meanwhile.text(), '"Hello MEANWHILE!"', 'other requests are served while 32 connections stall');
  const outcomes = await Promise.all(stalled);
  t.same(
    outcomes.filter((o) => o.timedOut).map((o) => o.name),
    [],
    'every stalled connection was closed by the server',
  );
  t.ok(
    outcomes.every((o) => o.status === undefined || (o.status >= 400 && o.status < 500)),
    'none got a 2xx or 5xx',
  );
  t.comment(`closed after ${((performance.now() - started) / 1000).toFixed(1)} s`);
});
