/**
 * Asynchronous invocations (POST /v2/async), on each store: accepted at once with /v2/run's key
 * rules, run, retried then failed, held to the account's bound, and fair between accounts.
 */
import t from 'tap';
import { packFolder } from '../../cli/pack';
import type { Limits } from '../../engine/limits';
import { functionFolder } from '../helpers/functions';
import { startNode, type TestNode } from '../helpers/nodes';
import { postgresMissing, startPostgres, type PrivatePostgres } from '../helpers/postgres';
import { startTestServer } from '../helpers/server';
import { eventually } from '../helpers/supervised';
import type { EngineApi } from '../../engine/api';
import type { Engine } from '../../engine/engine';

interface Served {
  url: string;
  engine: EngineApi;
  /** The concrete engine: its store's queue of invocations. */
  internals: Engine;
  stop(): Promise<void>;
}

interface Account {
  id: string;
  key: string;
}

const LIMITS: Partial<Limits> = { asyncConcurrency: 4, asyncMaxQueued: 100, pythonSpare: false };

async function deploy(s: Served, a: Account, name: string, source: string, spec: Record<string, unknown> = {}): Promise<void> {
  const form = new FormData();
  form.set('spec', JSON.stringify({ runtime: 'node8', file: 'function.js', entrypoint: 'handler', env: {}, ...spec }));
  form.set('bundle', new Blob([await packFolder(functionFolder(source))]), 'bundle.tar.gz');
  const res = await fetch(`${s.url}/v2/accounts/${a.id}/functions/${name}`, { method: 'PUT', headers: { 'X-Service-Api-Key': a.key }, body: form });
  if (res.status >= 300) throw new Error(`deploy ${name}: ${res.status} ${await res.text()}`);
}

function queue(s: Served, a: Account, name: string, body = '{}', key: string | null = a.key, rest = ''): Promise<Response> {
  return fetch(`${s.url}/v2/async/${a.id}/${name}${rest}`, { method: 'POST', headers: key === null ? {} : { 'X-Service-Api-Key': key }, body });
}

async function queued(s: Served, a: Account, name: string, body = '{}'): Promise<string> {
  const res = await queue(s, a, name, body);
  const answer = (await res.json()) as { invocationId: string };
  if (res.status !== 202) throw new Error(`queue ${name}: ${res.status} ${JSON.stringify(answer)}`);
  return answer.invocationId;
}

async function record(s: Served, a: Account, id: string, key = a.key): Promise<Record<string, any>> {
  const res = await fetch(`${s.url}/v2/accounts/${a.id}/invocations/${id}`, { headers: { 'X-Service-Api-Key': key } });
  return { httpStatus: res.status, ...((await res.json()) as Record<string, unknown>) };
}

async function settled(s: Served, a: Account, id: string, ms = 60_000): Promise<Record<string, any>> {
  let last: Record<string, any> = {};
  await eventually(async () => {
    last = await record(s, a, id);
    return last.status === 'succeeded' || last.status === 'failed';
  }, ms);
  return last;
}

function conformance(kind: string, open: () => Promise<{ served: Served; accounts: [Account, Account] }>): void {
  t.test(kind, async (t) => {
    const { served: s, accounts } = await open();
    const [a, b] = accounts;
    t.teardown(() => s.stop());
    await deploy(
      s,
      a,
      'echo',
      `exports.handler = async (body, ctx) => ({ body, method: ctx.request.method, path: ctx.request.path, query: ctx.request.query, header: ctx.request.headers['x-note'] || null, key: ctx.request.headers['x-service-api-key'] || null });`,
    );
    await deploy(s, a, 'boom', `let n = 0; exports.handler = () => { n++; throw new Error('boom ' + n); };`, { retries: 2 });
    await deploy(s, a, 'five', `exports.handler = (body, ctx) => new ctx.HTTPResponse({ statusCode: 503, body: 'not now' });`, { retries: 1 });
    // 150 ms a run, two at a time for one account: a backlog of 100 lasts about 7 s, long enough to see B pass it.
    await deploy(s, a, 'slow', `exports.handler = async () => { await new Promise((r) => setTimeout(r, 150)); return 'done'; };`);
    await deploy(s, b, 'other', `exports.handler = () => 'b ran';`);

    await t.test('accepted at once, run, its result kept', async (t) => {
      const res = await fetch(`${s.url}/v2/async/${a.id}/echo/items/7?x=1`, { method: 'PUT', headers: { 'X-Service-Api-Key': a.key, 'x-note': 'kept' }, body: '{"n":42}' });
      t.equal(res.status, 202);
      t.match(res.headers.get('x-service-request-id'), /^[0-9a-f]{32}$/);
      const { invocationId } = (await res.json()) as { invocationId: string };
      t.match(invocationId, /^[0-9a-f]{32}$/);
      const done = await settled(s, a, invocationId);
      t.equal(done.status, 'succeeded');
      t.equal(done.attempts, 1);
      t.equal(done.function, 'echo');
      t.equal(done.result.status, 200);
      t.same(JSON.parse(done.result.body), { body: { n: 42 }, method: 'PUT', path: '/items/7', query: { x: '1' }, header: 'kept', key: null }, "the call as it came, without the caller's key");
      const logs = (await (await fetch(`${s.url}/v2/accounts/${a.id}/functions/echo/logs`, { headers: { 'X-Service-Api-Key': a.key } })).json()) as {
        entries: { requestId: string; message: string }[];
      };
      t.ok(
        logs.entries.some((e) => e.requestId === done.requestId && /^ASYNC PUT 200 /.test(e.message)),
        "the run is in the function's logs like a call",
      );
      const list = (await (await fetch(`${s.url}/v2/accounts/${a.id}/functions/echo/invocations`, { headers: { 'X-Service-Api-Key': a.key } })).json()) as { invocations: { invocationId: string }[] };
      t.equal(list.invocations[0]?.invocationId, invocationId, 'listed, newest first');
    });

    await t.test('a streamed answer is kept whole', async (t) => {
      await deploy(
        s,
        a,
        'streamer',
        `exports.handler = (body, ctx) => new ctx.HTTPResponse({ statusCode: 201, body: (async function* () { for (let i = 0; i < 3; i++) yield 'line ' + i + '\\n'; })() });`,
      );
      const done = await settled(s, a, await queued(s, a, 'streamer'));
      t.equal(done.status, 'succeeded');
      t.equal(done.result.status, 201);
      t.equal(done.result.body, 'line 0\nline 1\nline 2\n');
    });

    await t.test("refused at once as /v2/run would; the record is the admin's", async (t) => {
      t.equal((await queue(s, a, 'echo', '{}', null)).status, 401, 'no key');
      t.equal((await queue(s, a, 'echo', '{}', b.key)).status, 403, "another account's key");
      const missing = await queue(s, a, 'nope');
      t.equal(missing.status, 404);
      t.equal(((await missing.json()) as { errorCode: string }).errorCode, 'ERR_NO_SUCH_FUNCTION');
      t.equal((await queue(s, a, 'bad%2Fname')).status, 400, 'a name that is not a name');
      const invokeKey = (
        (await (await fetch(`${s.url}/v2/accounts/${a.id}/keys`, { method: 'POST', headers: { 'X-Service-Api-Key': a.key }, body: '{"scope":"invoke"}' })).json()) as { apiKey: string }
      ).apiKey;
      const id = (await (await queue(s, a, 'echo', '{}', invokeKey)).json()) as { invocationId: string };
      t.ok(id.invocationId, 'an invoke key may queue');
      const forbidden = await record(s, a, id.invocationId, invokeKey);
      t.equal(forbidden.httpStatus, 403);
      t.equal(forbidden.errorCode, 'ERR_FORBIDDEN', 'but not read the record');
      t.equal((await record(s, b, id.invocationId)).httpStatus, 404, "another account's id is no record of this one");
    });

    await t.test('a run that throws is tried again, then fails', async (t) => {
      const id = await queued(s, a, 'boom');
      const done = await settled(s, a, id);
      t.equal(done.status, 'failed');
      t.equal(done.attempts, 3, 'the first run and two retries');
      t.equal(done.error.errorCode, 'ERR_FUNCTION_FAILED');
      t.match(done.error.message, /boom/);
      const five = await settled(s, a, await queued(s, a, 'five'));
      t.equal(five.status, 'failed', 'a 5xx answer is a failure too');
      t.equal(five.attempts, 2);
      t.equal(five.result.status, 503);
      t.equal(five.result.body, 'not now');
    });

    await t.test("the account's bound", async (t) => {
      const bound = LIMITS.asyncMaxQueued!;
      const ids = await Promise.all(Array.from({ length: bound }, () => queue(s, a, 'slow')));
      const accepted = ids.filter((r) => r.status === 202).length;
      const others = await Promise.all(
        ids
          .filter((r) => r.status !== 202)
          .slice(0, 3)
          .map(async (r) => `${r.status} ${await r.text()}`),
      );
      t.equal(accepted, bound, `up to the bound${others.length ? ` (refused: ${others.join('; ')})` : ''}`);
      // Runs end while the backlog fills (150 ms each, four at a time; a loaded machine takes
      // seconds to queue a hundred): the next ones are accepted while there is room again, then refused.
      let over = await queue(s, a, 'slow');
      let roomAgain = 0;
      while (over.status === 202 && ++roomAgain < bound) over = await queue(s, a, 'slow');
      t.equal(over.status, 403, `refused once the backlog is full (${roomAgain} more accepted as runs ended)`);
      const body = (await over.json()) as { errorCode: string; limit: string };
      t.equal(body.errorCode, 'ERR_QUOTA_EXCEEDED');
      t.equal(body.limit, 'queuedInvocations');

      // Fairness: with A's backlog of `bound` slow runs waiting, B's invocation and B's calls do not wait for it.
      const pendingOfA = () => s.internals.store.jobs.pending(a.id);
      const bId = await queued(s, b, 'other');
      const bDone = await settled(s, b, bId);
      t.equal(bDone.status, 'succeeded');
      const left = await pendingOfA();
      t.ok(left > bound / 4, `B's invocation ran while A still had ${left} of its ${bound} waiting or running`);
      const call = await fetch(`${s.url}/v2/run/${b.id}/other`, { headers: { 'X-Service-Api-Key': b.key } });
      t.equal(call.status, 200);
      t.ok((await pendingOfA()) > 0, "and B's calls are answered meanwhile");
      t.ok(await eventually(async () => (await pendingOfA()) === 0, 120_000), "A's backlog drains");
    });
  });
}

conformance('file store', async () => {
  const served = await startTestServer({ limits: LIMITS });
  const other = await served.createAccount();
  return {
    served: { url: served.url, engine: served.engine, internals: served.internals, stop: () => served.stop() },
    accounts: [
      { id: served.accountId, key: served.apiKey },
      { id: other.accountId, key: other.apiKey },
    ],
  };
});

const missing = postgresMissing();
if (missing) t.comment(`PostgreSQL: skip (${missing})`);
else {
  let pg: PrivatePostgres | undefined;
  let node: TestNode | undefined;
  t.teardown(() => pg?.destroy());
  conformance('PostgreSQL store', async () => {
    pg = await startPostgres();
    node = await startNode(pg.url, LIMITS);
    const first = await node.createAccount();
    const second = await node.createAccount();
    const n = node;
    return {
      served: { url: n.url, engine: n.engine, internals: n.internals, stop: () => n.stop() },
      accounts: [
        { id: first.accountId, key: first.apiKey },
        { id: second.accountId, key: second.apiKey },
      ],
    };
  });
}
