import t from 'tap';
import { islet } from '../helpers/cli';
import { fixture, reopenTestServer, startTestServer, type TestServer } from '../helpers/server';

// Each account's share of the server: calls in flight and a rate (token bucket), server-wide and
// per account; over either, 429 ERR_RATE_LIMITED with Retry-After.
const probes = fixture('probes-node8');

async function withServer(limits: Parameters<typeof startTestServer>[0], run: (s: TestServer, other: { accountId: string; apiKey: string }) => Promise<void>): Promise<void> {
  const s = await startTestServer(limits);
  try {
    const other = await s.createAccount();
    for (const [account] of [[s.accountId], [other.accountId]]) {
      await s.engine.deploy(account!, { name: 'ok', runtime: 'node8', file: 'function.js', entrypoint: 'ok', env: {} }, { dir: probes });
      await s.engine.deploy(account!, { name: 'slow', runtime: 'node8', file: 'function.js', entrypoint: 'slow', env: {} }, { dir: probes });
    }
    await run(s, other);
  } finally {
    await s.stop();
  }
}

t.test('over its rate an account gets 429 ERR_RATE_LIMITED with Retry-After; another account is not affected', async (t) => {
  await withServer({ limits: { accountRatePerSec: 1, accountBurst: 5 } }, async (s, other) => {
    // Seven calls at once: the burst of 5 passes, the rest are refused (a token comes back only after a second).
    const answers = await Promise.all(Array.from({ length: 7 }, () => s.call('ok')));
    for (const res of answers) {
      if (res.status !== 429) {
        await res.text();
        continue;
      }
      t.equal(res.headers.get('retry-after'), '1', 'Retry-After: the seconds until a call is allowed again');
      t.equal(res.headers.get('x-service-version'), '1');
      t.match(await res.json(), { errorCode: 'ERR_RATE_LIMITED', message: `account ${s.accountId} is over its rate of 1 call per second`, retryAfter: 1 });
    }
    t.same(answers.map((r) => r.status).sort(), [200, 200, 200, 200, 200, 429, 429], 'a burst of 5, then refused');
    const theirs = await s.call('ok', { account: other.accountId, key: other.apiKey });
    t.equal(theirs.status, 200, 'another account has a bucket of its own');
    t.equal((await s.call('ok', { key: 'isk_wrong' })).status, 403, 'a bad key is refused before the rate, and spends nothing');
    await new Promise((r) => setTimeout(r, 1100));
    t.equal((await s.call('ok')).status, 200, 'a token came back after a second');
  });
});

t.test('a refusal is answered after a short hold, so a client sending again at once brings one call per hold; others are answered meanwhile', async (t) => {
  await withServer({ limits: { accountRatePerSec: 1, accountBurst: 1, refusalHoldMs: 300 } }, async (s, other) => {
    t.equal((await s.call('ok')).status, 200, 'the burst of 1');
    const started = performance.now();
    const refused = s.call('ok').then((res) => ({ status: res.status, ms: performance.now() - started }));
    const theirs = await s.call('ok', { account: other.accountId, key: other.apiKey });
    const theirsMs = performance.now() - started;
    t.equal(theirs.status, 200);
    const { status, ms } = await refused;
    t.equal(status, 429);
    t.ok(ms >= 290, `the refusal came after the hold (${ms.toFixed(0)} ms)`);
    t.ok(theirsMs < ms, `another account's call was answered first (${theirsMs.toFixed(0)} ms)`);
    // A client that sends again as soon as it is refused, for a second: a handful of calls, not thousands.
    let sent = 0;
    const until = performance.now() + 1000;
    while (performance.now() < until) {
      sent++;
      await (await s.call('ok')).text();
    }
    t.ok(sent <= 6, `${sent} calls in a second on one connection`);
  });
});

t.test('over its calls in flight an account gets 429; they free up as calls end', async (t) => {
  // As one of two workers: half of the account's 4.
  await withServer({ limits: { accountMaxInFlight: 4, accountShare: 0.5 } }, async (s, other) => {
    const slow = [s.call('slow', { body: '{"ms":400}' }), s.call('slow', { body: '{"ms":400}' })];
    await new Promise((r) => setTimeout(r, 100));
    const third = await s.call('ok');
    t.equal(third.status, 429);
    t.match(await third.json(), { errorCode: 'ERR_RATE_LIMITED', message: `account ${s.accountId} has 2 calls in flight, its limit` });
    t.equal(third.headers.get('retry-after'), '1');
    t.equal((await s.call('ok', { account: other.accountId, key: other.apiKey })).status, 200, 'another account still calls');
    t.same(await Promise.all(slow.map(async (p) => (await p).status)), [200, 200]);
    t.equal((await s.call('ok')).status, 200, 'the places are free again');
  });
});

t.test("an account's own limits (islet account limits, offline) apply when the server starts again", async (t) => {
  const s = await startTestServer({ limits: { accountRatePerSec: 1, accountBurst: 1 } });
  await s.deploy('ok', probes, 'ok');
  const { dataDir, accountId, apiKey } = s;
  await s.stop();
  const set = await islet(['account', 'limits', accountId, '--rate', '1000', '--burst', '1000', '--max-inflight', '50', '--data', dataDir]);
  t.equal(set.stdout, `Account ${accountId}: maxInFlight 50, ratePerSec 1000, burst 1000 (a running server applies them when it starts again)\n`, set.stderr);
  t.match((await islet(['account', 'limits', '0000000000000000', '--rate', '5', '--data', dataDir])).stderr, /no account 0000000000000000/);
  t.match((await islet(['account', 'limits', accountId, '--rate', 'fast', '--data', dataDir])).stderr, /--rate fast: expected a number of 0 or more/);
  const again = await reopenTestServer(dataDir, accountId, apiKey, { accountRatePerSec: 1, accountBurst: 1 });
  try {
    const statuses = await Promise.all(Array.from({ length: 5 }, async () => (await again.call('ok')).status));
    t.same(statuses, [200, 200, 200, 200, 200], "the account's own rate, not the server's");
    const other = await again.createAccount();
    await again.engine.deploy(other.accountId, { name: 'ok', runtime: 'node8', file: 'function.js', entrypoint: 'ok', env: {} }, { dir: probes });
    const theirs = [await again.call('ok', { account: other.accountId, key: other.apiKey }), await again.call('ok', { account: other.accountId, key: other.apiKey })];
    t.same(
      theirs.map((r) => r.status),
      [200, 429],
      "others keep the server's",
    );
    t.equal((await islet(['account', 'limits', accountId, '--reset', '--data', dataDir])).stdout, `Account ${accountId}: the server's defaults (a running server applies them when it starts again)\n`);
  } finally {
    await again.stop();
  }
});
