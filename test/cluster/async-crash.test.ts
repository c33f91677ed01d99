/**
 * Accepted asynchronous invocations survive a kill -9 of the whole server (the file store): 200
 * are queued, the supervisor and its workers are killed while most still wait, and once the
 * server is back every one of them has run and succeeded.
 */
import t from 'tap';
import { startSupervised } from '../helpers/supervised';
import { eventually } from '../helpers/supervised';

t.test('200 queued invocations survive a kill -9 of the server, none lost', async (t) => {
  const first = await startSupervised(['--workers', '2', '--async-concurrency', '2']);
  t.teardown(() => first.crash());
  const deployed = await first.deploy('slow', `exports.handler = async (body) => { await new Promise((r) => setTimeout(r, 100)); return { n: body.n }; };`);
  t.equal(deployed.status, 201);
  const headers = { 'X-Service-Api-Key': first.apiKey };
  const ids = new Map<string, number>();
  // Ten senders at a time, as clients would.
  let next = 0;
  await Promise.all(
    Array.from({ length: 10 }, async () => {
      while (next < 200) {
        const n = next++;
        const res = await fetch(`${first.url}/v2/async/${first.accountId}/slow`, { method: 'POST', headers, body: JSON.stringify({ n }) });
        const body = (await res.json()) as { invocationId: string };
        if (res.status !== 202) throw new Error(`invocation ${n}: ${res.status} ${JSON.stringify(body)}`);
        ids.set(body.invocationId, n);
      }
    }),
  );
  t.equal(ids.size, 200, '200 accepted');
  const list = async (s: { url: string }) =>
    ((await (await fetch(`${s.url}/v2/accounts/${first.accountId}/functions/slow/invocations?limit=1000`, { headers })).json()) as { invocations: { invocationId: string; status: string }[] })
      .invocations;
  const before = (await list(first)).filter((i) => i.status !== 'succeeded').length;
  first.crash();
  await first.exited;
  t.ok(before > 0, `${before} of them had not run yet when the server was killed`);

  const second = await startSupervised(['--workers', '2', '--async-concurrency', '2'], {}, { dataDir: first.dataDir, accountId: first.accountId, apiKey: first.apiKey });
  t.teardown(() => second.crash());
  const allDone = await eventually(async () => {
    const now = await list(second);
    return now.length === 200 && now.every((i) => i.status === 'succeeded');
  }, 180_000);
  const after = await list(second);
  t.ok(allDone, `every one succeeded after the restart (${after.filter((i) => i.status === 'succeeded').length} of ${after.length})`);
  t.same(new Set(after.map((i) => i.invocationId)), new Set(ids.keys()), 'the same 200, none lost, none added');
  let right = 0;
  for (const [id, n] of ids) {
    const record = (await (await fetch(`${second.url}/v2/accounts/${first.accountId}/invocations/${id}`, { headers })).json()) as { result?: { body: string } };
    if (record.result && JSON.parse(record.result.body).n === n) right++;
  }
  t.equal(right, 200, 'each ran with its own body');
});
