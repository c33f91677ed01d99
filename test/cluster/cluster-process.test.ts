import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import t from 'tap';
import { islet } from '../helpers/cli';
import { functionFolder } from '../helpers/functions';
import { client, startNode, type TestNode } from '../helpers/nodes';
import { withPostgres } from '../helpers/postgres';
import { startTestServer } from '../helpers/server';
import { eventually, serveArgs } from '../helpers/supervised';

// Nodes as real processes on one PostgreSQL: kill -9 during deploys, and `islet store copy`.
withPostgres(t, (pg) => {
  /** `islet serve --store` with one worker, in its own process group; resolves with its URL. */
  const serveNode = (url: string) => {
    const child = spawn(process.execPath, serveArgs(mkdtempSync(path.join(tmpdir(), 'islet-node-')), ['--workers', '1', '--store', url]), { detached: true, stdio: ['ignore', 'pipe', 'inherit'] });
    return new Promise<{ url: string; crash(): void }>((resolve, reject) => {
      let out = '';
      child.once('exit', (code) => reject(new Error(`node exited with ${code}`)));
      child.stdout!.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        const m = /listening on (http:\/\/\S+)/.exec(out);
        if (!m) return;
        child.removeAllListeners('exit');
        resolve({ url: m[1]!, crash: () => process.kill(-child.pid!, 'SIGKILL') });
      });
    });
  };

  t.test('kill -9 of a node during a deploy, again and again: the old or the new version serves on every node, nothing half-written', async (t) => {
    const observer = await startNode(pg().url);
    const created = await observer.createAccount();
    const account = client(created.accountId, created.apiKey);
    const padding = `// ${'padding '.repeat(20_000)}\n`;
    t.equal((await account.deploy(observer, 'durable', `exports.handler = () => "v0";\n${padding}`)).status, 201);
    let served = 0;
    const outcomes = { old: 0, new: 0 };
    for (let round = 1; round <= 5; round++) {
      const node = await serveNode(pg().url);
      const deploy = account.deploy(node, 'durable', `exports.handler = () => "v${round}";\n${padding}`).then(
        (r) => r.status,
        () => 0,
      );
      await new Promise((r) => setTimeout(r, 20 + Math.floor(Math.random() * 300)));
      node.crash();
      const status = await deploy;
      // A node that joins now, and the observer, both serve whatever the store says serves.
      const fresh: TestNode = await startNode(pg().url);
      const stored = (await observer.store.readFunction(created.accountId, 'durable'))!.serving[0]!.version;
      t.ok(await eventually(() => observer.engine.describe(created.accountId, 'durable')?.version === stored, 1000), `round ${round}: the observer serves the stored version`);
      const [seen, seenFresh] = [await account.answer(observer, 'durable'), await account.answer(fresh, 'durable')];
      t.equal(seenFresh, seen, `round ${round}: a fresh node answers the same (${seen})`);
      t.ok(seen === `"v${served}"` || seen === `"v${round}"`, `round ${round}: old (v${served}) or new (v${round}), got ${seen}`);
      if (status >= 200 && status < 300) t.equal(seen, `"v${round}"`, `round ${round}: an acknowledged deploy serves`);
      outcomes[seen === `"v${round}"` ? 'new' : 'old']++;
      served = Number(JSON.parse(seen).slice(1));
      await fresh.stop();
    }
    t.comment(`outcomes: ${outcomes.new} new, ${outcomes.old} old`);
    await observer.stop();
  });

  t.test('islet store copy: a data directory into PostgreSQL and back, keys, limits, versions and splits as they were', async (t) => {
    const source = await startTestServer();
    await source.deploy('one', functionFolder('exports.handler = () => "one";\n'), 'handler');
    await source.deploy('two', functionFolder('exports.handler = () => "two";\n', { 'lib/x.js': 'module.exports = 2;\n' }), 'handler');
    // `split`: versions 1 and 2 of it sharing the calls 80/20.
    const split = (n: number) => functionFolder(`exports.handler = () => "split v${n}";\n`);
    await source.engine.deploy(source.accountId, { name: 'split', runtime: 'node8', file: 'function.js', entrypoint: 'handler', env: {} }, { dir: split(1) });
    await source.engine.deploy(source.accountId, { name: 'split', runtime: 'node8', file: 'function.js', entrypoint: 'handler', env: {} }, { dir: split(2) }, { percent: 20 });
    const invoke = await source.engine.createKey(source.accountId, { name: 'caller', scope: 'invoke' });
    await source.internals.manage.setAccountLimits(source.accountId, { ratePerSec: 500 });
    const versions = ['one', 'two'].map((name) => source.engine.describe(source.accountId, name)!.version);
    await source.stop();
    const url = pg().createDatabase('copied');
    const into = await islet(['store', 'copy', '--from', source.dataDir, '--to', url]);
    t.equal(into.code, 0, into.stderr);
    t.match(into.stdout, /Copied 1 account and 3 functions \(4 versions new\)/);
    const again = await islet(['store', 'copy', '--from', source.dataDir, '--to', url]);
    t.match(again.stdout, /\(0 versions new\)/, 'a second copy copies nothing again');
    const node = await startNode(url);
    const account = client(source.accountId, source.apiKey);
    t.equal(await account.answer(node, 'one'), '"one"', 'the original key calls the copied function on a PostgreSQL node');
    t.equal(await account.answer(node, 'two'), '"two"');
    t.same(
      ['one', 'two'].map((name) => node.engine.describe(source.accountId, name)?.version),
      versions,
      'the same version numbers',
    );
    t.same(
      node.internals.catalog.function(source.accountId, 'split')?.record.traffic,
      [
        { version: 1, percent: 80 },
        { version: 2, percent: 20 },
      ],
      'the split as it was',
    );
    t.equal(await client(source.accountId, invoke.apiKey).answer(node, 'one'), '"one"', 'the invoke key calls');
    t.same((await node.store.readAccount(source.accountId))?.limits, { ratePerSec: 500 }, "the account's own limits");
    await node.stop();
    const back = mkdtempSync(path.join(tmpdir(), 'islet-back-'));
    const out = await islet(['store', 'copy', '--from', url, '--to', back]);
    t.equal(out.code, 0, out.stderr);
    const restored = await startTestServer({ dataDir: back });
    t.equal(await (await restored.call('one', { account: source.accountId, key: source.apiKey })).text(), '"one"', 'and back into a data directory');
    t.same(
      ['one', 'two'].map((name) => restored.engine.describe(source.accountId, name)?.version),
      versions,
    );
    t.same(
      (await restored.engine.versions(source.accountId, 'split')).versions.map((m) => m.version),
      [2, 1],
      'both versions of the split',
    );
    t.same(restored.internals.catalog.function(source.accountId, 'split')?.record.traffic, [
      { version: 1, percent: 80 },
      { version: 2, percent: 20 },
    ]);
    await restored.stop();
    const refused = await islet(['store', 'copy', '--from', back]);
    t.equal(refused.code, 1);
    t.match(refused.stderr, /give --from and --to/);
  });
});
