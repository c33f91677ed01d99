import { cpSync, existsSync, mkdtempSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import t from 'tap';
import { startCountingListener, type CountingListener } from '../helpers/listener';
import { missingRequirement } from '../helpers/requirements';
import { fixture, startTestServer, type TestServer } from '../helpers/server';

// Python's way out: sockets that carry HTTP to the host's guarded egress, async handlers, and the
// standard library's host-backed parts (key derivation, time zones).
const egressFixture = fixture('egress-python');
const TIMEOUT = 1000;
/** For functions whose timeout is not under test: a loaded machine stretches Python's imports. */
const ROOMY = 60_000;
// Seventeen Python deploys and cold starts: 50-150 s in CI runs on 2 cores, over tap's default of
// 300 s for the whole file at a load of 15.
t.setTimeout(900_000);

/** The islet server of the default rules (private addresses refused but itself). */
let s: TestServer;
/** A server whose functions may reach loopback, for the local HTTP server below. */
let open: TestServer;
let listener: CountingListener;
let web: Server;
let webUrl = '';
const webHits: string[] = [];

t.before(async () => {
  s = await startTestServer();
  open = await startTestServer({ engine: { allowPrivateEgress: true } });
  listener = await startCountingListener();
  web = createServer((req, res) => {
    webHits.push(`${req.method} ${req.url}`);
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://x');
      if (url.pathname === '/huge') {
        // 20 MB in 64 KB pieces, more than the 6 MiB response limit.
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        let left = 320;
        const more = (): void => {
          while (left-- > 0) if (!res.write(Buffer.alloc(65536, 120))) return void res.once('drain', more);
          res.end();
        };
        more();
      } else if (url.pathname === '/slow') {
        // Never answers; the socket is closed when the test server stops.
      } else if (url.pathname.startsWith('/status/')) {
        res.writeHead(Number(url.pathname.slice(8)), { 'content-type': 'text/plain', 'x-why': 'asked' });
        res.end(`status ${url.pathname.slice(8)}`);
      } else {
        res.writeHead(200, { 'content-type': 'application/json', 'x-echo': 'yes' });
        res.end(JSON.stringify({ method: req.method, path: req.url, headers: req.headers, body: Buffer.concat(chunks).toString() }));
      }
    });
  });
  await new Promise<void>((resolve) => web.listen(0, '127.0.0.1', resolve));
  webUrl = `http://127.0.0.1:${(web.address() as { port: number }).port}`;
  for (const target of [s, open]) {
    for (const entry of ['urllib_call', 'http_client_calls', 'raw_socket', 'udp_socket', 'listen_socket', 'resolve']) {
      await target.deployPython(entry, egressFixture, entry, { timeoutMs: ROOMY });
    }
  }
  await open.deployPython('urllib_short', egressFixture, 'urllib_call', { timeoutMs: TIMEOUT });
  await s.deployPython('hello_py', fixture('seed-python'), 'hello');
  await s.deployPython('public_redirect_py', fixture('seed-python'), 'redirect');
  await s.deploy('hello_node', fixture('seed-node8'), 'hello');
});
t.teardown(async () => {
  listener.close();
  web.closeAllConnections();
  web.close();
  await s.stop();
  await open.stop();
});

type Attempt<T = unknown> = { ok: boolean; value?: T; error?: string };

async function run<T = unknown>(server: TestServer, name: string, body: unknown): Promise<T> {
  const res = await server.call(name, { body: JSON.stringify(body) });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`${name}: ${res.status} ${text}`);
  return JSON.parse(text) as T;
}

t.test('urllib.request: every method, headers and a body, HTTPError for 4xx/5xx', async (t) => {
  for (const method of ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']) {
    const data = method === 'GET' || method === 'OPTIONS' ? undefined : `{"m":"${method}"}`;
    const out = await run<Attempt<{ status: number; body: string; headers: Record<string, string> }>>(open, 'urllib_call', {
      url: `${webUrl}/echo?q=1`,
      method,
      data,
      headers: { 'X-Custom': 'v1', 'Content-Type': 'application/json' },
    });
    t.equal(out.ok, true, `${method}: ${String(out.error)}`);
    const echoed = JSON.parse(out.value!.body) as { method: string; path: string; headers: Record<string, string>; body: string };
    t.equal(echoed.method, method);
    t.equal(echoed.path, '/echo?q=1');
    t.equal(echoed.headers['x-custom'], 'v1', `${method}: request headers arrive`);
    t.equal(echoed.body, data ?? '', `${method}: the body arrives`);
    t.equal(out.value!.headers['x-echo'], 'yes', `${method}: response headers come back`);
  }
  const head = await run<Attempt<{ status: number; body: string; headers: Record<string, string> }>>(open, 'urllib_call', { url: `${webUrl}/echo`, method: 'HEAD' });
  t.equal(head.value?.status, 200);
  t.equal(head.value?.body, '', 'HEAD has no body');
  for (const status of [404, 500, 503]) {
    const out = await run<Attempt<{ http_error: number; body: string; headers: Record<string, string> }>>(open, 'urllib_call', { url: `${webUrl}/status/${status}` });
    t.equal(out.value?.http_error, status, `HTTPError ${status}`);
    t.equal(out.value?.body, `status ${status}`);
    t.equal(out.value?.headers['x-why'], 'asked');
  }
});

t.test('http.client: request, getresponse, read and headers, two requests on one connection, HEAD', async (t) => {
  const port = Number(new URL(s.url).port);
  const paths = [`/v2/run/${s.accountId}/hello_py?name=abc`, `/v2/run/${s.accountId}/hello_node?name=xyz`];
  const out = await run<Attempt<{ status: number; reason: string; type: string; request_id: string; body: string; length?: string }[]>>(s, 'http_client_calls', {
    host: '127.0.0.1',
    port,
    paths,
    headers: { 'X-Service-Api-Key': s.apiKey },
  });
  t.equal(out.ok, true, String(out.error));
  const [first, second, head] = out.value!;
  t.same([first!.status, first!.reason, first!.type, first!.body], [200, 'OK', 'application/json', '"Hello cba!"']);
  t.match(first!.request_id, /^[0-9a-f]{32}$/);
  t.same([second!.status, second!.body], [200, '"Hello XYZ!"']);
  t.same([head!.status, head!.body, head!.length], [200, '', '12'], 'HEAD: the length of the body it would have had, no body');
});

t.test('the seed caller in Python: another function through the HTTP endpoint with the key header', async (t) => {
  await s.deployPython('py_caller', egressFixture, 'caller', { timeoutMs: ROOMY, env: { SELF_URL: s.url, SERVICE_API_KEY: s.apiKey } });
  const out = await run<{ status: number; body: string; request_id: string }>(s, 'py_caller', { callee: 'hello_node', name: 'ada' });
  t.same([out.status, out.body], [200, 'Hello ADA!']);
  t.match(out.request_id, /^[0-9a-f]{32}$/);
  const toPython = await run<{ body: string }>(s, 'py_caller', { callee: 'hello_py', name: 'abc' });
  t.equal(toPython.body, 'Hello cba!');
});

const DIST = '/usr/lib/python3/dist-packages';
const REQUESTS = ['requests', 'urllib3', 'idna', 'certifi', 'charset_normalizer', 'chardet', 'six.py'];
t.test("a vendored requests (Debian's python3-requests, laid out as pip --target would): GET, POST with JSON, a session, status", async (t) => {
  if (!REQUESTS.slice(0, 5).every((p) => existsSync(path.join(DIST, p)))) {
    missingRequirement(t, `Debian's python3-requests is not installed`);
    return;
  }
  const dir = mkdtempSync(path.join(tmpdir(), 'islet-requests-'));
  cpSync(path.join(egressFixture, 'function.py'), path.join(dir, 'function.py'));
  for (const p of REQUESTS) if (existsSync(path.join(DIST, p))) cpSync(path.join(DIST, p), path.join(dir, p), { recursive: true, dereference: true });
  await s.deployPython('py_requests', dir, 'requests_calls', { timeoutMs: ROOMY, env: { SERVICE_API_KEY: s.apiKey } });
  const out = await run<Record<string, unknown[]>>(s, 'py_requests', { url: `${s.url}/v2/run/${s.accountId}/hello_node` });
  t.same(out.get, [200, 'Hello GET!', 'application/json']);
  t.same(out.post, [200, 'Hello POSTED!']);
  t.same(out.session, ['Hello 0!', 'Hello 1!']);
  t.same(out.denied, [401, 'ERR_NO_KEY']);
});

t.test('escape: private, loopback, link-local and mapped addresses are refused, by IP or by a name resolving to them', async (t) => {
  const port = listener.port;
  for (const url of [
    `http://127.0.0.1:${port}/`,
    `http://localhost:${port}/`,
    `http://[::1]:${port}/`,
    `http://127.1:${port}/`,
    `http://0x7f000001:${port}/`,
    `http://[::ffff:127.0.0.1]:${port}/`,
    'http://169.254.169.254/latest/meta-data/',
    'http://10.0.0.1/',
    'http://192.168.1.1/',
    'http://172.16.0.1/',
    'http://100.64.0.1/',
    'http://0.0.0.0/',
    'http://[fd00::1]/',
    'http://[fe80::1]/',
    `https://localhost:${port}/`,
  ]) {
    const out = await run<Attempt>(s, 'urllib_call', { url });
    t.equal(out.ok, false, url);
    t.match(out.error, /^URLError: .*not allowed from functions: private, loopback and link-local addresses are blocked/, `${url}: ${out.error}`);
  }
  t.equal(listener.connections, 0, 'the host listener was never reached');
});

t.test('escape: a redirect to a private address is checked again and refused, even from the service itself', async (t) => {
  const redirect = `${s.url}/v2/run/${s.accountId}/public_redirect_py?target=${encodeURIComponent(`http://127.0.0.1:${listener.port}/`)}`;
  const out = await run<Attempt>(s, 'urllib_call', { url: redirect });
  t.match(out.error, /^URLError: .*127\.0\.0\.1.*not allowed/, String(out.error));
  t.equal(listener.connections, 0, 'the host listener was never reached');
});

t.test('escape: raw sockets, datagrams, listening and DNS lookups fail saying outbound connections go through HTTP only', async (t) => {
  const raw = await run<Attempt>(s, 'raw_socket', { port: listener.port });
  t.match(raw.error, /^PermissionError: .*outbound connections from islet functions go through HTTP only/);
  const udp = await run<Attempt>(s, 'udp_socket', { port: listener.port });
  t.match(udp.error, /go through HTTP only .*datagrams/);
  const listen = await run<Attempt>(s, 'listen_socket', {});
  t.match(listen.error, /cannot listen for or accept connections/);
  const names = await run<{ gethostbyname: Attempt; getaddrinfo: Attempt }>(s, 'resolve', { name: 'localhost' });
  t.match(names.gethostbyname.error, /^gaierror: .*cannot resolve 'localhost'.*HTTP only/, 'no made-up address');
  t.same(names.getaddrinfo.value, ['localhost', 80], 'getaddrinfo hands the name on unresolved: the host resolves it under the egress rules');
  t.equal(listener.connections, 0, 'the host listener was never reached');
});

t.test('escape: a huge response is cut at the response limit; the server stays up', async (t) => {
  const out = await run<Attempt>(open, 'urllib_call', { url: `${webUrl}/huge` });
  t.equal(out.ok, false);
  t.match(out.error, /response body larger than 6291456 bytes/);
  t.equal(await (await s.call('hello_node', { query: 'name=up' })).text(), '"Hello UP!"');
});

t.test('escape: a response slower than the socket timeout is a TimeoutError; slower than the handler, ERR_TIMEOUT and a fresh instance', async (t) => {
  const timed = await run<Attempt>(open, 'urllib_call', { url: `${webUrl}/slow`, timeout: 0.3 });
  t.match(timed.error, /^URLError: <urlopen error timed out>|^TimeoutError: timed out/, String(timed.error));
  const warm = await run<Attempt<{ status: number }>>(open, 'urllib_short', { url: `${webUrl}/echo` });
  t.equal(warm.value?.status, 200, 'warm (the timeout starts with the handler, not the cold start)');
  const started = performance.now();
  const res = await open.call('urllib_short', { body: JSON.stringify({ url: `${webUrl}/slow` }) });
  const elapsed = performance.now() - started;
  t.equal(res.status, 504);
  t.equal(((await res.json()) as { errorCode: string }).errorCode, 'ERR_TIMEOUT');
  // The upstream never answers: any answer is the timeout's (the bound only keeps a hang from passing).
  t.ok(elapsed < 60_000, `answered in ${elapsed.toFixed(0)} ms`);
  const after = await run<Attempt<{ status: number }>>(open, 'urllib_short', { url: `${webUrl}/echo` });
  t.equal(after.value?.status, 200, 'the next call runs in a fresh instance');
  t.equal(await (await s.call('hello_node', { query: 'name=up' })).text(), '"Hello UP!"');
});
