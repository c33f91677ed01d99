import t from 'tap';
import { functionFolder } from '../helpers/functions';
import { eventually } from '../helpers/supervised';
import { startTestServer, type TestServer } from '../helpers/server';

// A promise rejected with no handler (a floating promise) is logged, as Node (warn) and Workers
// do, and fails no call: isolated-vm throws it in place of the entry's answer, so the host asks
// the sandbox for the answers of that entry again.
let s: TestServer;

t.before(async () => {
  s = await startTestServer();
  await s.deploy(
    'floating_seed',
    functionFolder(`exports.handler = (body, context) => {
    Promise.reject(new Error('floating in ' + context.request.query.n));
    return new context.HTTPResponse({ body: 'answered ' + context.request.query.n });
  };`),
    'handler',
  );
  await s.deploy(
    'floating_fetch',
    functionFolder(`export default { async fetch(request) {
    const n = new URL(request.url).searchParams.get('n');
    Promise.reject(new Error('floating in ' + n));
    await new Promise((resolve) => setTimeout(resolve, 5));
    Promise.reject('a string, late, in ' + n);
    return new Response('answered ' + n);
  } };`),
    'default',
  );
});
t.teardown(() => s?.stop());

async function logLines(name: string): Promise<{ level: string; message: string; requestId: string }[]> {
  return s.engine.readLogs(s.accountId, name, {});
}

for (const name of ['floating_seed', 'floating_fetch']) {
  t.test(`${name}: a floating rejection is logged and the call is answered, alone or in a batch`, async (t) => {
    const one = await s.call(name, { query: 'n=1' });
    t.equal(one.status, 200);
    t.equal(await one.text(), 'answered 1');
    // Calls that arrive in the same turn go into the isolate in one entry.
    const many = await Promise.all([2, 3, 4, 5].map((n) => s.invoke(name, { query: `n=${n}` })));
    t.same(
      many.map((r) => [r.status, String(r.body)]),
      [2, 3, 4, 5].map((n) => [200, `answered ${n}`]),
      'every call of the batch is answered',
    );
    t.ok(
      await eventually(async () => (await logLines(name)).some((e) => e.level === 'error' && e.message.startsWith('Uncaught (in promise) Error: floating in 1')), 10_000),
      'logged as uncaught, with its error',
    );
    if (name === 'floating_fetch')
      t.ok(await eventually(async () => (await logLines(name)).some((e) => e.message === 'Uncaught (in promise) a string, late, in 1'), 10_000), 'a rejection after an await (another entry) too');
  });
}
