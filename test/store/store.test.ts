import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import t from 'tap';
import { Catalog } from '../../engine/store/catalog';
import { chainLock, type Coordinator } from '../../engine/store/coordinator';
import { FileStore } from '../../engine/store/file/store';
import { deployVersion } from '../../engine/store/pipeline';
import type { StoreChange } from '../../engine/store/store';
import { functionFolder } from '../helpers/functions';
import { storeConformance } from '../helpers/store-conformance';

/**
 * Coordinators of several FileStores in one process, standing in for the supervisor's workers:
 * shared locks, and a publish that resolves once every other member has applied the change.
 */
function loopback(): () => Coordinator {
  const locks = new Map<string, Promise<unknown>>();
  const members: ((change: StoreChange) => Promise<void>)[][] = [];
  return () => {
    const mine: ((change: StoreChange) => Promise<void>)[] = [];
    members.push(mine);
    return {
      withLock: (name, work) => chainLock(locks, name, work),
      publish: async (change) => {
        await Promise.all(members.filter((m) => m !== mine).flatMap((m) => m.map((listener) => listener(change))));
      },
      subscribe: (listener) => void mine.push(listener),
    };
  };
}

t.test('file store, one process', async (t) => {
  storeConformance(t, { open: (options) => FileStore.open(mkdtempSync(path.join(tmpdir(), 'islet-store-')), options) });
});

t.test('file store, two processes on one data directory', async (t) => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'islet-store-'));
  const coordinator = loopback();
  storeConformance(t, {
    open: (options) => FileStore.open(dataDir, { coordinator: coordinator(), ...options }),
    second: () => FileStore.open(dataDir, { coordinator: coordinator(), clean: false }),
  });
});

t.test('catalog: changes of one record are read again one after another, so a slow old read never wins', async (t) => {
  const manifest = (version: number) =>
    ({ name: 'f', account: 'a', version, runtime: 'node8', file: 'function.js', entrypoint: 'handler', env: {}, deployedAt: '', contentHash: '', files: [], bytes: 0 }) as const;
  let current = 1;
  // The first read is slow and sees the state of when it started; later reads are quick.
  let reads = 0;
  const store = {
    description: 'fake',
    watch: () => undefined,
    load: async () => ({ accounts: [], functions: [] }),
    readAccount: async () => undefined,
    readFunction: async () => {
      const seen = current;
      const delay = reads++ === 0 ? 50 : 0;
      await new Promise((r) => setTimeout(r, delay));
      return { account: 'a', name: 'f', traffic: [{ version: seen, percent: 100 }], serving: [{ ...manifest(seen) }] };
    },
  } as unknown as ConstructorParameters<typeof Catalog>[0];
  const catalog = new Catalog(store, () => undefined);
  await catalog.open();
  const first = catalog.apply({ kind: 'function', account: 'a', name: 'f' });
  current = 2;
  const second = catalog.apply({ kind: 'function', account: 'a', name: 'f' });
  await Promise.all([first, second]);
  t.equal(catalog.serving('a', 'f')?.version, 2, 'the newest state stays');
});

t.test('file store: a data directory of an earlier islet (a `current` file) is migrated at start-up; a publish cut short is cleaned', async (t) => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'islet-store-legacy-'));
  const store0 = await FileStore.open(dataDir);
  const { accountId } = await store0.createAccount();
  const fnDir = path.join(dataDir, 'functions', accountId, 'old');
  const manifest = {
    name: 'old',
    runtime: 'node8',
    file: 'function.js',
    entrypoint: 'handler',
    env: {},
    account: accountId,
    version: 'm1abc-0123456789',
    deployedAt: '2025-01-01T00:00:00.000Z',
    contentHash: 'x'.repeat(64),
    files: ['function.js'],
    bytes: 30,
  };
  for (const [id, code] of [
    ['m0old-aaaaaaaaaa', 'exports.handler = () => 0;\n'],
    ['m1abc-0123456789', 'exports.handler = () => 1;\n'],
  ] as const) {
    mkdirSync(path.join(fnDir, 'versions', id, 'code'), { recursive: true });
    writeFileSync(path.join(fnDir, 'versions', id, 'manifest.json'), JSON.stringify({ ...manifest, version: id }));
    writeFileSync(path.join(fnDir, 'versions', id, 'code', 'function.js'), code);
  }
  writeFileSync(path.join(fnDir, 'current'), 'm1abc-0123456789\n');
  const store = await FileStore.open(dataDir);
  const record = await store.readFunction(accountId, 'old');
  t.same(record?.traffic, [{ version: 1, percent: 100 }], 'the serving version is version 1');
  t.equal(readFileSync(path.join(await store.codeDir(record!.serving[0]!), 'function.js'), 'utf8'), 'exports.handler = () => 1;\n', 'with its own code');
  t.same(
    (await store.listVersions(accountId, 'old'))?.versions.map((m) => m.version),
    [1],
  );
  t.notOk(existsSync(path.join(fnDir, 'current')), 'the old pointer is gone');
  // A publish cut short after its rename: a version numbered past the latest.
  mkdirSync(path.join(fnDir, 'versions', '2'), { recursive: true });
  await FileStore.open(dataDir);
  t.notOk(existsSync(path.join(fnDir, 'versions', '2')), 'removed at start-up');
  const next = await deployVersion(
    store,
    accountId,
    { name: 'old', runtime: 'node8', file: 'function.js', entrypoint: 'handler', env: {} },
    { dir: functionFolder('exports.handler = () => 2;\n') },
    async () => undefined,
  );
  t.equal(next.version, 2, 'numbering goes on from there');
});
