import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import t from 'tap';
import { Catalog } from '../engine/store/catalog';
import { chainLock, type Coordinator } from '../engine/store/coordinator';
import { FileStore } from '../engine/store/file/store';
import type { StoreChange } from '../engine/store/store';
import { storeConformance } from './helpers/store-conformance';

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
  storeConformance(t, { open: () => FileStore.open(mkdtempSync(path.join(tmpdir(), 'islet-store-'))) });
});

t.test('file store, two processes on one data directory', async (t) => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'islet-store-'));
  const coordinator = loopback();
  storeConformance(t, {
    open: () => FileStore.open(dataDir, { coordinator: coordinator() }),
    second: () => FileStore.open(dataDir, { coordinator: coordinator(), clean: false }),
  });
});

t.test('catalog: changes of one record are read again one after another, so a slow old read never wins', async (t) => {
  const manifest = (version: string) => ({ name: 'f', account: 'a', version, runtime: 'node8', file: 'function.js', entrypoint: 'handler', env: {}, deployedAt: '', contentHash: '', files: [], bytes: 0 }) as const;
  let current = 'v1';
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
  current = 'v2';
  const second = catalog.apply({ kind: 'function', account: 'a', name: 'f' });
  await Promise.all([first, second]);
  t.equal(catalog.serving('a', 'f')?.version, 'v2', 'the newest state stays');
});
