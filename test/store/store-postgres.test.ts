import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { Client } from 'pg';
import t from 'tap';
import { MIGRATIONS } from '../../engine/store/postgres/schema';
import { PostgresStore } from '../../engine/store/postgres/store';
import { deployVersion } from '../../engine/store/pipeline';
import { packFiles } from '../../engine/store/version';
import { withPostgres } from '../helpers/postgres';
import { storeConformance } from '../helpers/store-conformance';
import { functionFolder } from '../helpers/functions';

// The store conformance suite against PostgreSQL (a private server for this file): one node, and
// two nodes on one database that hear each other's changes through LISTEN/NOTIFY.
withPostgres(t, (pg) => {
  const open = (url: () => string) => (options?: { keepVersions: number }) => PostgresStore.open({ url: url(), cacheDir: mkdtempSync(path.join(tmpdir(), 'islet-node-')), ...options });

  t.test('postgres store, one node', async (t) => {
    let url = '';
    t.before(() => void (url = pg().createDatabase('one_node')));
    storeConformance(t, { open: open(() => url) });
  });

  t.test('postgres store, two nodes on one database', async (t) => {
    let url = '';
    t.before(() => void (url = pg().createDatabase('two_nodes')));
    storeConformance(t, { open: open(() => url), second: open(() => url) });
  });

  t.test('a database of the schema before numbered versions: its versions are numbered in deploy order, the serving one still serves', async (t) => {
    const url = pg().createDatabase('before_numbers');
    const db = new Client({ connectionString: url });
    await db.connect();
    // The schema as islet left it before numbered versions (migrations 1 and 2), with a function of three versions.
    await db.query('CREATE TABLE islet_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())');
    for (const m of MIGRATIONS.filter((m) => m.version <= 2)) {
      await db.query(m.sql);
      await db.query('INSERT INTO islet_migrations (version, name) VALUES ($1, $2)', [m.version, m.name]);
    }
    await db.query("INSERT INTO islet_accounts (id, created_at) VALUES ('a0a0a0a0a0a0a0a0', now())");
    const dir = functionFolder('exports.handler = () => "old";\n');
    await db.query("INSERT INTO islet_bundles (hash, data, bytes) VALUES ('h1', $1, 1)", [await packFiles(dir, ['function.js'])]);
    const ids = ['lq0001-aaaa', 'lq0002-bbbb', 'lq0003-cccc'];
    for (const [i, id] of ids.entries()) {
      const manifest = {
        name: 'f',
        account: 'a0a0a0a0a0a0a0a0',
        runtime: 'node8',
        file: 'function.js',
        entrypoint: 'handler',
        env: {},
        version: id,
        deployedAt: '',
        contentHash: 'h1',
        files: ['function.js'],
        bytes: 1,
      };
      await db.query(
        `INSERT INTO islet_versions (account_id, function_name, version, manifest, bundle_hash, created_at) VALUES ('a0a0a0a0a0a0a0a0', 'f', $1, $2, 'h1', now() - $3 * interval '1 minute')`,
        [id, manifest, 10 - i],
      );
    }
    await db.query(`INSERT INTO islet_functions (account_id, name, traffic) VALUES ('a0a0a0a0a0a0a0a0', 'f', '[{"version": "lq0002-bbbb", "percent": 100}]')`);
    await db.end();

    const store = await open(() => url)();
    t.teardown(() => store.close());
    const record = await store.readFunction('a0a0a0a0a0a0a0a0', 'f');
    t.same(record?.traffic, [{ version: 2, percent: 100 }], 'the version that served is number 2 of 3, and still serves');
    t.equal(record?.serving[0]?.version, 2, 'its manifest says so too');
    const list = await store.listVersions('a0a0a0a0a0a0a0a0', 'f');
    t.same(
      list?.versions.map((m) => m.version),
      [3, 2, 1],
    );
    t.equal(list?.latest, 3);
    t.equal(readFileSync(path.join(await store.codeDir(record!.serving[0]!), 'function.js'), 'utf8'), 'exports.handler = () => "old";\n', 'its code is there');
    const next = await deployVersion(store, 'a0a0a0a0a0a0a0a0', record!.serving[0]!, { dir: functionFolder('exports.handler = () => "new";\n') }, () => Promise.resolve());
    t.equal(next.version, 4, 'the next deploy is number 4');
    t.same((await store.setTraffic('a0a0a0a0a0a0a0a0', 'f', [{ version: 3, percent: 100 }])).traffic, [{ version: 3, percent: 100 }], 'an older one can serve again');
  });
});
