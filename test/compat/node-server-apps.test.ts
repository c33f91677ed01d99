import { createHash, randomBytes } from 'node:crypto';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer, type ServerResponse as NodeResponse, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import t from 'tap';
import { request as undiciRequest } from 'undici';
import { ensureCompatInstalled } from '../helpers/compat-install';
import { functionFolder } from '../helpers/functions';
import { copyPackage } from '../helpers/package-closure';
import { eventually } from '../helpers/supervised';
import { fixture, removeDir, ROOT, startTestServer, type TestServer } from '../helpers/server';

// Node HTTP server apps (issue 25, item 4): a module that calls http.createServer(handler).listen()
// while it loads, directly or through Express 4 and 5, Koa or Fastify, deploys unchanged (no
// entrypoint) and is served by that handler. The frameworks come from test/compat/node-server's
// lock file (installed once, as the compatibility suite's are), copied into each function folder.
const SUITE = path.join(ROOT, 'test', 'compat', 'node-server');
const APPS = fixture('node-server-apps');
const work = mkdtempSync(path.join(tmpdir(), 'islet-server-apps-'));

// The frameworks' npm install (2 minutes in a loaded CI run) and some twenty deploys of them: the
// whole file took 299 s there, against tap's default of 300.
t.setTimeout(900_000);

let s: TestServer;
let gate: Server;
let gateUrl = '';
/** Requests the gate holds while it is shut; open, it answers at once. */
const held: NodeResponse[] = [];
let gateOpen = false;
const openGate = () => {
  gateOpen = true;
  for (const res of held.splice(0)) res.end('go');
};
const shutGate = () => {
  gateOpen = false;
};

/** What packages ship besides their code: a deploy uploads, checks and keeps every file. */
const NOT_CODE = /^(test|tests|docs|examples|benchmarks?)$|\.(md|d\.ts|map)$/;
function prune(dir: string): void {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const at = path.join(dir, entry.name);
    if (NOT_CODE.test(entry.name)) rmSync(at, { recursive: true, force: true });
    else if (entry.isDirectory()) prune(at);
  }
}

/** A function folder: `app` as function.js, with `packages` (name in the suite, name in the folder). */
function appFolder(app: string, packages: [from: string, as: string][]): string {
  const dir = path.join(work, `${app}-${packages.map(([from]) => from.replace('/', '_')).join('-') || 'plain'}`);
  mkdirSync(dir, { recursive: true });
  copyFileSync(path.join(APPS, app), path.join(dir, 'function.js'));
  for (const [from, as] of packages) copyPackage(SUITE, from, dir, as);
  if (packages.length > 0) prune(path.join(dir, 'node_modules'));
  return dir;
}

/** Deploys as service.yml would without an entrypoint. */
async function deploy(name: string, dir: string, extra: Record<string, unknown> = {}): Promise<void> {
  await s.engine.deploy(s.accountId, { name, runtime: 'node8', file: 'function.js', env: {}, ...extra }, { dir });
}

async function logLines(name: string): Promise<{ level: string; message: string; code?: string }[]> {
  return s.engine.readLogs(s.accountId, name, {});
}

const FRAMEWORKS: [name: string, app: string, packages: [string, string][]][] = [
  ['express4', 'express.js', [['express4', 'express']]],
  ['express5', 'express.js', [['express5', 'express']]],
  [
    'koa',
    'koa.js',
    [
      ['koa', 'koa'],
      ['@koa/router', '@koa/router'],
      ['@koa/bodyparser', '@koa/bodyparser'],
    ],
  ],
  ['fastify', 'fastify.js', [['fastify', 'fastify']]],
];

t.before(async () => {
  ensureCompatInstalled(SUITE);
  gate = createServer((req, res) => (gateOpen ? res.end('go') : void held.push(res)));
  await new Promise<void>((resolve) => gate.listen(0, '127.0.0.1', resolve));
  gateUrl = `http://127.0.0.1:${(gate.address() as AddressInfo).port}/`;
  s = await startTestServer({ engine: { allowPrivateEgress: true } });
  await deploy('plain', appFolder('plain.js', []), { timeoutMs: 60_000 });
  await deploy('plain_short', appFolder('plain.js', []), { timeoutMs: 1000 });
  for (const [name, app, packages] of FRAMEWORKS) await deploy(name, appFolder(app, packages), { timeoutMs: 60_000 });
  // Short enough for a call to run to it; long enough for a deploy to load Express on a loaded machine (2 s was not).
  await deploy('express4_short', appFolder('express.js', [['express4', 'express']]), { timeoutMs: 6000 });
});

t.teardown(async () => {
  openGate();
  gate?.close();
  await s?.stop();
  removeDir(work);
});

t.test('a plain http.createServer app: IncomingMessage and ServerResponse as Node gives them', async (t) => {
  const res = await s.call('plain', { path: '/info', query: 'a=1&b=two', headers: { 'X-Test': 'yes' } });
  t.equal(res.status, 200);
  t.equal(res.headers.get('content-type'), 'application/json');
  t.equal(res.headers.get('x-seen'), 'a, b', 'an array header goes as one value');
  t.same(await res.json(), {
    method: 'GET',
    url: '/info?a=1&b=two',
    header: 'yes',
    contentType: 'application/json',
    isMain: true,
    listenedWith: 'callback ran',
    address: { address: '127.0.0.1', family: 'IPv4', port: 3000 },
    instance: true,
  });
  const root = await s.call('plain');
  t.equal(root.status, 404, 'the function URL itself is the path /');
});

t.test('the request body is a Readable; writeHead sets status and headers', async (t) => {
  const bytes = Buffer.from([0, 1, 2, 255, 254, 10, 13]);
  const res = await s.call('plain', { method: 'POST', path: '/echo', body: bytes, headers: { 'content-type': 'application/x-test' } });
  t.equal(res.status, 201);
  t.equal(res.headers.get('content-type'), 'application/x-test');
  t.equal(res.headers.get('x-length'), String(bytes.length));
  t.same(Buffer.from(await res.arrayBuffer()), bytes);
});

t.test('writes are sent as they come: the first arrives before the second is written', async (t) => {
  shutGate();
  const res = await s.call('plain', { path: '/stream', query: `gate=${encodeURIComponent(gateUrl)}` });
  t.equal(res.status, 200);
  t.equal(res.headers.get('content-type'), 'text/event-stream');
  t.equal(res.headers.get('transfer-encoding'), 'chunked');
  const reader = res.body!.getReader();
  const first = await reader.read();
  t.equal(new TextDecoder().decode(first.value), 'data: first\n\n', 'the first write came while the second waited for the gate');
  openGate();
  let rest = '';
  for (let next = await reader.read(); !next.done; next = await reader.read()) rest += new TextDecoder().decode(next.value);
  t.equal(rest, 'data: second\n\n');
});

t.test('a response ended in the turn it started writing goes whole, with its length', async (t) => {
  const res = await s.call('plain', { path: '/whole' });
  t.equal(await res.text(), 'one, two');
  t.equal(res.headers.get('content-length'), '8');
  t.equal(res.headers.get('transfer-encoding'), null);
});

t.test("write() holds back past its high-water mark and 'drain' lets it go on: 8 MiB whole", async (t) => {
  const size = 8 * 1024 * 1024;
  const res = await s.call('plain', { path: '/bytes', query: `size=${size}` });
  const body = Buffer.from(await res.arrayBuffer());
  t.equal(body.length, size);
  t.notOk(
    body.some((b) => b !== 98),
    'every byte as written',
  );
  t.ok(await eventually(async () => (await logLines('plain')).some((e) => /^bytes: waited for drain [1-9]\d* times$/.test(e.message)), 10_000), "the app waited for 'drain'");
});

for (const [name] of FRAMEWORKS) {
  t.test(`${name}: routing, params, query, JSON bodies and streamed writes, deployed unchanged`, async (t) => {
    const user = await s.call(name, { path: '/users/42', query: 'q=hello%20world' });
    t.equal(user.status, 200);
    t.match(user.headers.get('content-type'), /^application\/json/);
    const got = (await user.json()) as Record<string, unknown>;
    t.equal(got.id, '42');
    t.equal(got.q, 'hello world');
    if (name.startsWith('express')) t.match(got.version, new RegExp(`^${name.slice(-1)}\\.`), `Express ${name.slice(-1)} runs`);

    const item = await s.call(name, { method: 'POST', path: '/items', body: JSON.stringify({ a: [1, 2], b: 'ü' }), headers: { 'content-type': 'application/json' } });
    t.equal(item.status, 201);
    t.same(await item.json(), { received: { a: [1, 2], b: 'ü' } });

    const missing = await s.call(name, { path: '/nowhere' });
    t.equal(missing.status, 404, 'an unknown route is the framework 404');

    shutGate();
    const stream = await s.call(name, { path: '/stream', query: `gate=${encodeURIComponent(gateUrl)}` });
    t.equal(stream.status, 200);
    t.match(stream.headers.get('content-type'), /^text\/plain/);
    const reader = stream.body!.getReader();
    const first = await reader.read();
    t.equal(new TextDecoder().decode(first.value), 'one\n', 'the first write came before the second was made');
    openGate();
    let rest = '';
    for (let next = await reader.read(); !next.done; next = await reader.read()) rest += new TextDecoder().decode(next.value);
    t.equal(rest, 'two\n');
  });
}

for (const name of ['express4', 'express5']) {
  t.test(`${name}: req.pipe(res) streams a 10 MB upload back as it comes, past the 6 MiB of a body read whole`, async (t) => {
    const bytes = randomBytes(10 * 1024 * 1024);
    const res = await undiciRequest(`${s.url}/v2/run/${s.accountId}/${name}/pipe`, {
      method: 'POST',
      body: bytes,
      headers: { 'X-Service-Api-Key': s.apiKey, 'Content-Type': 'application/octet-stream' },
    });
    t.equal(res.statusCode, 200);
    const hash = createHash('sha256');
    let size = 0;
    for await (const chunk of res.body) {
      hash.update(chunk as Buffer);
      size += (chunk as Buffer).length;
    }
    t.equal(size, bytes.length, 'every byte came back');
    t.equal(hash.digest('hex'), createHash('sha256').update(bytes).digest('hex'), 'in order');
  });
}

t.test('an Express route that throws answers the framework 500; the instance goes on', async (t) => {
  const res = await s.call('express5', { path: '/throws' });
  t.equal(res.status, 500);
  const rejected = await s.call('express5', { path: '/async-throws' });
  t.equal(rejected.status, 500, "Express 5 answers an async route's rejection with its 500");
  t.equal((await s.call('express5', { path: '/users/1' })).status, 200);
});

t.test('an Express 4 async route that rejects: logged as Node logs it, its call runs to its timeout, nothing else fails', async (t) => {
  // Express 4 drops the promise a route returns: in Node the rejection is unhandled (logged with
  // --unhandled-rejections=warn) and the request waits until something ends it.
  const [rejected, beside] = await Promise.all([s.call('express4_short', { path: '/async-throws' }), s.call('express4_short', { path: '/users/7' })]);
  t.equal(rejected.status, 504);
  t.equal(((await rejected.json()) as { errorCode: string }).errorCode, 'ERR_TIMEOUT', 'the call ends at its timeout');
  t.equal(beside.status, 200, 'a call that came at the same time is answered');
  const logged = await eventually(
    async () => (await logLines('express4_short')).some((e) => e.level === 'error' && e.message.startsWith('Uncaught (in promise) Error: the async route broke') && e.message.includes('function.js:')),
    10_000,
  );
  t.ok(logged, "the rejection is in the function's logs with the user's stack");
  t.equal((await s.call('express4_short', { path: '/users/8' })).status, 200, 'the instance serves on');
});

t.test("a client that goes away mid-stream closes the app's req and res", async (t) => {
  const res = await undiciRequest(`${s.url}/v2/run/${s.accountId}/plain/never-ends`, { headers: { 'X-Service-Api-Key': s.apiKey } });
  for await (const chunk of res.body) {
    t.equal(String(chunk), 'one chunk, then nothing');
    break;
  }
  t.ok(await eventually(async () => (await logLines('plain')).some((e) => e.message === 'never-ends: req closed, aborted=true, res.destroyed=true'), 10_000), "the app's 'close' listener ran");
});

t.test('an async handler that throws answers ERR_FUNCTION_FAILED naming the error', async (t) => {
  const res = await s.call('plain', { path: '/throws' });
  const body = (await res.json()) as { errorCode: string; message: string };
  t.equal(body.errorCode, 'ERR_FUNCTION_FAILED');
  t.match(body.message, /TypeError: the handler broke/);
});

// Escape and abuse probes.

t.test('a module that listens twice does not deploy: one function, one server', async (t) => {
  const twice = functionFolder(`
    const http = require('http');
    http.createServer((req, res) => res.end('first')).listen(3000);
    http.createServer((req, res) => res.end('second')).listen(3001);
  `);
  await t.rejects(deploy('twice', twice), { message: /a second server\.listen\(\): a function is served by one HTTP server, and one already listens/ });
});

t.test('a server that listens during a call gets no calls: listen() throws and the first handler still serves', async (t) => {
  const res = await s.call('plain', { path: '/listen-again' });
  t.equal(res.status, 409);
  t.match(await res.text(), /^server\.listen\(\) was called after the function loaded/);
  const info = await s.call('plain', { path: '/info' });
  t.equal(((await info.json()) as { url: string }).url, '/info', 'the function is still served by its own server');
});

t.test('after server.close() the function answers no more calls through it, and says why', async (t) => {
  const closing = functionFolder(`
    const server = require('http').createServer((req, res) => {
      if (req.url === '/close') server.close();
      res.end('served');
    });
    server.listen(3000);
  `);
  await deploy('closing', closing);
  t.equal(await (await s.call('closing', { path: '/close' })).text(), 'served');
  const after = (await (await s.call('closing', { path: '/again' })).json()) as { errorCode: string; message: string };
  t.equal(after.errorCode, 'ERR_FUNCTION_FAILED');
  t.match(after.message, /the function's HTTP server was closed \(server\.close\(\) was called\)/);
});

t.test("another account's server app never gets this account's calls, whatever it listens to", async (t) => {
  const other = await s.createAccount();
  const greedy = functionFolder(`
    const http = require('http');
    http.createServer((req, res) => res.end('account B: ' + req.url)).listen(3000);
  `);
  await s.engine.deploy(other.accountId, { name: 'plain', runtime: 'node8', file: 'function.js', env: {} }, { dir: greedy });
  const mine = await s.call('plain', { path: '/info' });
  t.equal(((await mine.json()) as { url: string }).url, '/info', "this account's function answers with its own handler");
  const theirs = await s.call('plain', { path: '/info', account: other.accountId, key: other.apiKey });
  t.equal(await theirs.text(), 'account B: /info', "the other account's function with the same name answers with its own");
  const crossed = await s.call('plain', { path: '/info', account: other.accountId });
  t.not(crossed.status, 200, "this account's key does not reach the other account's server");
});

t.test('a handler that never ends its response is stopped at the timeout; the function serves on', async (t) => {
  const silent = await s.call('plain_short', { path: '/never' });
  t.equal(((await silent.json()) as { errorCode: string }).errorCode, 'ERR_TIMEOUT', 'no write, no end: ERR_TIMEOUT');
  const open = await s.call('plain_short', { path: '/never-ends' });
  t.equal(open.status, 200);
  const reader = open.body!.getReader();
  t.equal(new TextDecoder().decode((await reader.read()).value), 'one chunk, then nothing');
  await t.rejects(reader.read(), 'a write and no end: the body is cut at the timeout');
  t.ok(await eventually(async () => (await logLines('plain_short')).some((e) => e.level === 'error' && e.code === 'ERR_TIMEOUT'), 10_000), 'the log says it timed out');
  const after = await s.call('plain_short', { path: '/whole' });
  t.equal(await after.text(), 'one, two', 'the next call is served');
});

t.test('headers set after end throw, as in Node; a write after end fails', async (t) => {
  const res = await s.call('plain', { path: '/late' });
  t.equal(await res.text(), 'answered');
  t.equal(res.headers.get('x-late'), null);
  t.equal(res.status, 200);
  const expected =
    'late: setHeader: ERR_HTTP_HEADERS_SENT: Cannot set headers after they are sent to the client | writeHead: ERR_HTTP_HEADERS_SENT: Cannot write headers after they are sent to the client | removeHeader: ERR_HTTP_HEADERS_SENT: Cannot remove headers after they are sent to the client | write: ERR_STREAM_WRITE_AFTER_END';
  t.ok(await eventually(async () => (await logLines('plain')).some((e) => e.message === expected), 10_000), expected);
});

t.test('a module with no handler whose server never listens does not deploy, and says why', async (t) => {
  const idle = functionFolder(`require('http').createServer((req, res) => res.end('never served'));`);
  await t.rejects(deploy('idle', idle), {
    message: /function\.js made an HTTP server that did not listen within 5 s of loading \(call listen\(\) while the module loads\), and it does not export a function named "handler"/,
  });
  const nothing = functionFolder(`const x = 1;`);
  await t.rejects(deploy('nothing', nothing), { message: /a Node server app calls http\.createServer\(handler\)\.listen\(\) while it loads/ });
});
