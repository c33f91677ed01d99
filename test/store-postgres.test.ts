import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import t from 'tap';
import { PostgresStore } from '../engine/store/postgres/store';
import { withPostgres } from './helpers/postgres';
import { storeConformance } from './helpers/store-conformance';

// The store conformance suite against PostgreSQL (a private server for this file): one node, and
// two nodes on one database that hear each other's changes through LISTEN/NOTIFY.
withPostgres(t, (pg) => {
  const open = (url: () => string) => () => PostgresStore.open({ url: url(), cacheDir: mkdtempSync(path.join(tmpdir(), 'islet-node-')) });

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
});
