import t, { type Test } from 'tap';
import { withPostgres } from '../helpers/postgres';
import { client, startNode, type TestNode } from '../helpers/nodes';
import { eventually } from '../helpers/supervised';

// Several islet nodes on one PostgreSQL store (a private server for this file): propagation,
// a node that starts empty, logs across nodes, and the store going away and coming back.
withPostgres(t, (pg) => {
  const nodes: TestNode[] = [];
  let account: ReturnType<typeof client>;
  let accountId = '';

  t.before(async () => {
    for (let i = 0; i < 3; i++) nodes.push(await startNode(pg().url));
    const created = await nodes[0]!.createAccount();
    accountId = created.accountId;
    account = client(created.accountId, created.apiKey);
  });
  t.teardown(async () => {
    for (const node of nodes) await node.stop().catch(() => undefined);
  });

  /** How long until every node in `on` answers `expected` (ms); fails the test past 1 s. */
  const propagation = async (t: Test, name: string, expected: string, on: TestNode[]) => {
    const started = Date.now();
    const ok = await eventually(async () => (await Promise.all(on.map((n) => account.answer(n, name)))).every((a) => a === expected), 1000);
    t.ok(ok, `${name} answers ${expected} on ${on.length} nodes within 1 s (${Date.now() - started} ms)`);
  };

  t.test('a deploy on A is served by B and C', async (t) => {
    const [a, b, c] = nodes as [TestNode, TestNode, TestNode];
    t.equal((await account.deploy(a, 'greet', 'exports.handler = () => "v1";\n')).status, 201);
    t.equal(await account.answer(a, 'greet'), '"v1"', 'at once on the node that took the deploy');
    await propagation(t, 'greet', '"v1"', [b, c]);
    t.equal((await account.deploy(b, 'greet', 'exports.handler = () => "v2";\n')).status, 200, 'a redeploy through B');
    await propagation(t, 'greet', '"v2"', [a, b, c]);
  });

  t.test('a remove on B is gone on A and C', async (t) => {
    const [a, b, c] = nodes as [TestNode, TestNode, TestNode];
    await account.deploy(a, 'temporary', 'exports.handler = () => "here";\n');
    await propagation(t, 'temporary', '"here"', [b]);
    t.equal((await account.remove(b, 'temporary')).status, 200);
    await propagation(t, 'temporary', '404', [a, b, c]);
  });

  t.test('a rollback, a split and a key revoked on one node hold on the others within 1 s', async (t) => {
    const [a, b, c] = nodes as [TestNode, TestNode, TestNode];
    const admin = (node: TestNode, method: string, route: string, body?: unknown) =>
      fetch(`${node.url}/v2/accounts/${accountId}${route}`, {
        method,
        headers: { 'X-Service-Api-Key': account.apiKey, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    await account.deploy(a, 'released', 'exports.handler = () => "one";\n');
    await account.deploy(a, 'released', 'exports.handler = () => "two";\n');
    await propagation(t, 'released', '"two"', [a, b, c]);
    const rolled = await admin(b, 'POST', '/functions/released/rollback', {});
    t.equal(rolled.status, 200, 'a rollback through B');
    await propagation(t, 'released', '"one"', [a, b, c]);
    t.equal((await account.call(c, 'released')).headers.get('x-service-version'), '1', 'C names the version it ran');

    t.equal(
      (
        await admin(c, 'PUT', '/functions/released/traffic', {
          traffic: [
            { version: 1, percent: 50 },
            { version: 2, percent: 50 },
          ],
        })
      ).status,
      200,
      'a split through C',
    );
    const split = await eventually(async () => {
      const seen = new Set(await Promise.all(Array.from({ length: 40 }, () => account.answer(a, 'released'))));
      return seen.has('"one"') && seen.has('"two"');
    }, 1000);
    t.ok(split, 'A serves both versions within 1 s');
    const versions = (await (await admin(a, 'GET', '/functions/released/versions')).json()) as { versions: { version: number; percent: number }[] };
    t.same(
      versions.versions.map((v) => [v.version, v.percent]),
      [
        [2, 50],
        [1, 50],
      ],
      'and lists the split',
    );

    const made = (await (await admin(a, 'POST', '/keys', { name: 'cluster-invoke', scope: 'invoke' })).json()) as { apiKey: string };
    const withKey = (node: TestNode) => fetch(`${node.url}/v2/run/${accountId}/released`, { headers: { 'X-Service-Api-Key': made.apiKey } }).then((r) => r.status);
    t.ok(await eventually(async () => (await Promise.all(nodes.map(withKey))).every((s) => s === 200), 1000), 'a new invoke key calls on every node');
    t.equal((await admin(b, 'DELETE', '/keys/cluster-invoke')).status, 200, 'revoked through B');
    const started = Date.now();
    const refused = await eventually(async () => (await Promise.all(nodes.map(withKey))).every((s) => s === 403), 1000);
    t.ok(refused, `the revoked key is refused on every node within 1 s (${Date.now() - started} ms), although it matched a moment before`);
  });

  t.test('a node that starts empty serves every function, fetching each version once however many calls arrive', async (t) => {
    const fresh = await startNode(pg().url);
    nodes.push(fresh);
    const answers = await Promise.all(Array.from({ length: 10 }, () => account.answer(fresh, 'greet')));
    t.same([...new Set(answers)], ['"v2"']);
    t.equal((fresh.store as unknown as { fetches: number }).fetches, 1, 'one fetch of the bundle for ten first calls');
  });

  t.test('logs through any node show the lines of every node, tagged with the node', async (t) => {
    const [a, b, c] = nodes as [TestNode, TestNode, TestNode];
    await account.deploy(a, 'chatty', 'exports.handler = () => { console.log("hello from a call"); return 1; };\n');
    await propagation(t, 'chatty', '1', [a, b]);
    const entries = await account.logs(c, 'chatty');
    const tags = new Set(entries.filter((e) => e.message === 'hello from a call').map((e) => e.node));
    t.ok(tags.size >= 2, `lines from ${tags.size} nodes: ${[...tags].join(', ')}`);
    t.ok(
      entries.every((e) => typeof e.node === 'string'),
      'every line says its node',
    );
  });

  t.test('live logs through one node carry, once each, the lines of calls another node answered', async (t) => {
    const [a, b] = nodes as [TestNode, TestNode];
    await account.deploy(a, 'live', "exports.handler = (body, context) => { console.log('live line ' + context.request.query.n); return 1; };\n");
    await propagation(t, 'live', '1', [a, b]);
    const abort = new AbortController();
    const stream = await fetch(`${a.url}/v2/accounts/${accountId}/functions/live/logs/live?backlog=0`, { headers: { 'X-Service-Api-Key': account.apiKey }, signal: abort.signal });
    t.equal(stream.status, 200);
    const reader = stream.body!.pipeThrough(new TextDecoderStream()).getReader();
    t.equal((await fetch(`${b.url}/v2/run/${accountId}/live?n=7`, { headers: { 'X-Service-Api-Key': account.apiKey } })).status, 200, 'a call answered by B');
    let text = '';
    // Read until the line has come, then on past two more reads of the other nodes (2 s apart) for a repeat.
    let until = Date.now() + 10_000;
    const timer = setInterval(() => Date.now() > until && abort.abort(), 100);
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        text += value;
        if (text.includes('live line 7') && until > Date.now() + 4_500) until = Date.now() + 4_500;
      }
    } catch {
      // aborted when the time was up
    } finally {
      clearInterval(timer);
    }
    const lines = text.split('\n').filter((l) => l.startsWith('data: ') && l.includes('live line 7'));
    t.equal(lines.length, 1, 'the line arrives on the stream through A, once');
    t.match(JSON.parse(lines[0]?.slice(6) ?? '{}'), { message: 'live line 7', node: /^node-/ }, 'tagged with the node that wrote it');
  });

  t.test('PostgreSQL stopped: calls keep answering, writes fail at once with 503 naming the store; restarted: writes work again', async (t) => {
    const [a, b] = nodes as [TestNode, TestNode];
    pg().stop();
    t.ok(
      await eventually(
        async () => ((await (await fetch(`${a.url}/healthz`, { headers: { 'X-Service-Api-Key': account.apiKey } })).json()) as { store: { state: string } }).store.state === 'unavailable',
        3000,
      ),
      '/healthz shows the store unavailable',
    );
    t.equal(await account.answer(a, 'greet'), '"v2"', 'calls still answer on A');
    t.equal(await account.answer(b, 'greet'), '"v2"', 'and on B');
    const started = Date.now();
    const refused = await account.deploy(a, 'greet', 'exports.handler = () => "v3";\n');
    const body = (await refused.json()) as { errorCode: string; message: string };
    t.equal(refused.status, 503);
    t.equal(body.errorCode, 'ERR_STORE_UNAVAILABLE');
    t.match(body.message, /PostgreSQL at 127\.0\.0\.1:\d+\/islet/, 'names the store');
    // Refused without waiting for the store to come back (it stays down until pg().start() below).
    t.ok(Date.now() - started < 15_000, `refused while the store is down (${Date.now() - started} ms)`);
    t.equal((await account.remove(b, 'greet')).status, 503, 'a remove too');
    pg().start();
    t.ok(await eventually(async () => (await account.deploy(a, 'greet', 'exports.handler = () => "v3";\n')).status === 200, 15_000), 'a deploy works again, without restarting the node');
    await propagation(t, 'greet', '"v3"', [a, b]);
  });

  t.test('two deploys of one function from two nodes at once: both complete, the last to commit serves everywhere', async (t) => {
    const [a, b, c] = nodes as [TestNode, TestNode, TestNode];
    for (let round = 0; round < 4; round++) {
      const [ra, rb] = await Promise.all([account.deploy(a, 'contested', `exports.handler = () => "a${round}";\n`), account.deploy(b, 'contested', `exports.handler = () => "b${round}";\n`)]);
      t.ok(ra.status < 300 && rb.status < 300, `round ${round}: both deploys completed (${ra.status}, ${rb.status})`);
      const stored = (await c.store.readFunction(accountId, 'contested'))!.serving[0]!.version;
      const agreed = await eventually(() => nodes.every((n) => n.engine.describe(accountId, 'contested')?.version === stored), 1000);
      t.ok(agreed, `round ${round}: every node serves the version the store says serves`);
      const answers = new Set(await Promise.all([a, b, c].map((n) => account.answer(n, 'contested'))));
      t.equal(answers.size, 1, `round ${round}: one answer everywhere (${[...answers].join(', ')})`);
      t.ok([`"a${round}"`, `"b${round}"`].includes([...answers][0]!), 'and it is one of the two');
    }
  });
});
