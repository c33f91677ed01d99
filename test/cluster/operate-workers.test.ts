import t from 'tap';
import { Client } from 'undici';
import { startSupervised, type Supervised } from '../helpers/supervised';

// Versions, keys, limits and figures hold across the workers of `islet serve --workers 2`: a
// rollback and a revocation reach every worker before they answer; /metrics and stats add every
// worker's counts; each worker holds its share of an account's limits.
const TOKEN = 'workers-metrics-token';
let s: Supervised;

t.before(async () => {
  s = await startSupervised(['--workers', '2', '--metrics-token', TOKEN]);
});
t.teardown(() => s?.crash());

/** One call on a fresh connection (so calls spread over the workers): the answering worker's pid, status, body and version. */
async function fresh(name: string, key = s.apiKey): Promise<{ pid: number; status: number; body: string; version: string | undefined }> {
  const client = new Client(s.url, { pipelining: 1 });
  try {
    const health = await client.request({ method: 'GET', path: '/healthz', headers: { authorization: `Bearer ${TOKEN}` } });
    const { worker } = (await health.body.json()) as { worker: { pid: number } };
    const res = await client.request({ method: 'GET', path: `/v2/run/${s.accountId}/${name}`, headers: { 'X-Service-Api-Key': key } });
    return { pid: worker.pid, status: res.statusCode, body: await res.body.text(), version: res.headers['x-service-version'] as string | undefined };
  } finally {
    await client.close();
  }
}

async function manage(method: string, route: string, body?: unknown): Promise<Response> {
  return fetch(`${s.url}/v2/accounts/${s.accountId}${route}`, {
    method,
    headers: { 'X-Service-Api-Key': s.apiKey, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

t.test('a rollback through one worker is what every worker serves on the next call', async (t) => {
  for (const v of ['one', 'two']) t.equal((await s.deploy('app', `exports.handler = () => ${JSON.stringify(v)};\n`)).status < 300, true);
  t.equal((await manage('POST', '/functions/app/rollback', {})).status, 200);
  const pids = new Set<number>();
  for (let i = 0; i < 16; i++) {
    const r = await fresh('app');
    pids.add(r.pid);
    t.same([r.status, r.body, r.version], [200, '"one"', '1'], `call ${i} (worker ${r.pid})`);
  }
  t.equal(pids.size, 2, 'both workers answered');
  t.equal(
    (
      await manage('PUT', '/functions/app/traffic', {
        traffic: [
          { version: 1, percent: 50 },
          { version: 2, percent: 50 },
        ],
      })
    ).status,
    200,
  );
  const seen: Record<string, number> = {};
  for (let i = 0; i < 24; i++) {
    const r = await fresh('app');
    seen[r.version!] = (seen[r.version!] ?? 0) + 1;
  }
  t.ok(seen['1']! > 0 && seen['2']! > 0, `a split serves both versions across workers (${JSON.stringify(seen)})`);
});

t.test('a revoked key is refused by every worker on the next call', async (t) => {
  const created = (await (await manage('POST', '/keys', { name: 'caller' })).json()) as { apiKey: string };
  // The kernel picks a worker for each new connection: calls go on until both have answered (8
  // calls all went to one worker in a CI run beside busy loops).
  const before = new Set<number>();
  const statuses = new Set<number>();
  for (let i = 0; i < 64 && before.size < 2; i++) {
    const r = await fresh('app', created.apiKey);
    statuses.add(r.status);
    before.add(r.pid);
  }
  t.same([...statuses], [200], 'every call with the key was answered');
  t.equal(before.size, 2, 'both workers know the key (and remember it)');
  t.equal((await manage('DELETE', '/keys/caller')).status, 200);
  for (let i = 0; i < 8; i++) t.equal((await fresh('app', created.apiKey)).status, 403, `call ${i}`);
});

t.test("/metrics and stats add up every worker's calls", async (t) => {
  t.equal((await s.deploy('counted', 'exports.handler = () => 1;\n')).status, 201);
  const pids = new Set<number>();
  for (let i = 0; i < 12; i++) pids.add((await fresh('counted')).pid);
  t.equal(pids.size, 2, 'the calls went to both workers');
  const text = await (await fetch(`${s.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })).text();
  t.match(text, `islet_function_calls_total{account="${s.accountId}",function="counted",code="200"} 12\n`);
  t.match(text, `islet_function_traffic_percent{account="${s.accountId}",function="counted",version="1"} 100\n`, 'a share is not summed over workers');
  t.match(text, `islet_function_warm_instances{account="${s.accountId}",function="counted"} 2\n`, 'one warm instance in each worker');
  const stats = (await (await manage('GET', '/functions/counted/stats?window=1m')).json()) as { calls: number; warmInstances: number };
  t.equal(stats.calls, 12);
  t.equal(stats.warmInstances, 2);
});
