import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import type { Test } from 'tap';
import { Catalog } from '../../engine/store/catalog';
import type { FunctionSpec } from '../../engine/manifest';
import type { Store, StoreChange } from '../../engine/store/store';
import { functionFolder } from './functions';

/**
 * The contract every Store keeps, run against each implementation: `open` gives a fresh, empty
 * store; `second` (when the store can be shared) opens another handle on the same state, as a
 * second process or node would.
 */
export interface StoreUnderTest {
  open(): Promise<Store>;
  second?(): Promise<Store>;
}

const spec = (name: string, extra: Partial<FunctionSpec> = {}): FunctionSpec => ({ name, runtime: 'node8', file: 'function.js', entrypoint: 'handler', env: {}, ...extra });
const pass = () => Promise.resolve();
/** Lets the echoes of earlier writes arrive (a shared store's notifications are asynchronous), then forgets them. */
const quiet = async (changes: StoreChange[]) => {
  await new Promise((r) => setTimeout(r, 100));
  changes.length = 0;
};
const heard = (changes: StoreChange[], change: StoreChange) => changes.some((c) => JSON.stringify(c) === JSON.stringify(change));

export function storeConformance(t: Test, impl: StoreUnderTest): void {
  let store: Store;
  const changes: StoreChange[] = [];
  t.before(async () => {
    store = await impl.open();
    store.watch(async (change) => {
      changes.push(change);
    });
  });
  t.teardown(() => store.close());

  t.test('accounts: created with one admin key, only its digest stored, found by a full load', async (t) => {
    const { accountId, apiKey } = await store.createAccount();
    t.match(apiKey, /^isk_[A-Za-z0-9_-]{43}$/);
    const record = await store.readAccount(accountId);
    t.equal(record?.keys.length, 1);
    t.equal(record?.keys[0]?.scope, 'admin');
    t.notOk(JSON.stringify(record).includes(apiKey), 'the key itself is not stored');
    const snapshot = await store.load();
    t.ok(snapshot.accounts.some((a) => a.id === accountId), 'the account is in a full load');
    t.equal(await store.readAccount('0000000000000000'), undefined, 'an unknown account reads as undefined');
  });

  t.test('keys: several per account, named and scoped; revocation is stored', async (t) => {
    const { accountId } = await store.createAccount();
    const invoke = await store.createKey(accountId, { name: 'caller', scope: 'invoke' });
    t.equal(invoke.key.scope, 'invoke');
    t.equal(invoke.key.name, 'caller');
    await store.revokeKey(accountId, invoke.key.id);
    const record = await store.readAccount(accountId);
    t.equal(record?.keys.length, 2);
    t.ok(record?.keys.find((k) => k.id === invoke.key.id)?.revokedAt, 'the revoked key is marked');
    await t.rejects(store.createKey('0000000000000000'), { code: 'ERR_NOT_FOUND' });
    await t.rejects(store.revokeKey(accountId, 'nokey'), { code: 'ERR_NOT_FOUND' });
  });

  t.test('deploy: a checked version serves, its files are in codeDir, a change is announced before the deploy returns', async (t) => {
    const { accountId } = await store.createAccount();
    const folder = functionFolder('exports.handler = () => 1;\n', { 'lib/util.js': 'module.exports = 2;\n' });
    await quiet(changes);
    let checked = '';
    const manifest = await store.deploy(accountId, spec('one'), { dir: folder }, async (m, codeDir) => {
      checked = readFileSync(path.join(codeDir, m.file), 'utf8');
    });
    t.equal(checked, 'exports.handler = () => 1;\n', 'the check saw the unpacked code');
    t.same(manifest.files, ['function.js', 'lib/util.js']);
    t.match(manifest.contentHash, /^[0-9a-f]{64}$/);
    t.ok(heard(changes, { kind: 'function', account: accountId, name: 'one' }), 'the change was heard before deploy resolved');
    const record = await store.readFunction(accountId, 'one');
    t.same(record?.traffic, [{ version: manifest.version, percent: 100 }]);
    t.equal(record?.serving[0]?.version, manifest.version);
    const dir = await store.codeDir(manifest);
    t.equal(readFileSync(path.join(dir, 'lib/util.js'), 'utf8'), 'module.exports = 2;\n');
  });

  t.test('deploy: a failed check or bundle changes nothing and the previous version keeps serving', async (t) => {
    const { accountId } = await store.createAccount();
    const first = await store.deploy(accountId, spec('kept'), { dir: functionFolder('exports.handler = () => "v1";\n') }, pass);
    await quiet(changes);
    await t.rejects(
      store.deploy(accountId, spec('kept'), { dir: functionFolder('exports.handler = () => "v2";\n') }, () => Promise.reject(new Error('refused by the check'))),
      /refused by the check/,
    );
    await t.rejects(store.deploy(accountId, spec('kept', { file: 'missing.js' }), { dir: functionFolder('') }, pass), { code: 'ERR_INVALID_FUNCTION' });
    await t.rejects(store.deploy(accountId, spec('kept'), { tarball: Buffer.from('not a tarball') }, pass), { code: 'ERR_BAD_REQUEST' });
    t.equal((await store.readFunction(accountId, 'kept'))?.serving[0]?.version, first.version, 'v1 still serves');
    t.same(changes, [], 'nothing was announced');
  });

  t.test('remove: the function is gone, and removing it again finds nothing', async (t) => {
    const { accountId } = await store.createAccount();
    const deployed = await store.deploy(accountId, spec('gone'), { dir: functionFolder('exports.handler = () => 0;\n') }, pass);
    await quiet(changes);
    t.equal((await store.remove(accountId, 'gone'))?.version, deployed.version);
    t.ok(heard(changes, { kind: 'function', account: accountId, name: 'gone' }), 'the removal was heard before it resolved');
    t.equal(await store.readFunction(accountId, 'gone'), undefined);
    t.notOk((await store.load()).functions.some((f) => f.account === accountId), 'not in a full load either');
    t.equal(await store.remove(accountId, 'gone'), undefined);
  });

  t.test('a catalog follows the store: deploys, redeploys, removals and revocations', async (t) => {
    const retired: string[] = [];
    const catalogStore = impl.second ? await impl.second() : store;
    const catalog = new Catalog(catalogStore, (m) => retired.push(m.version));
    await catalog.open();
    // Writes go through `store`. On the same handle each is in the catalog when the write returns;
    // through a second handle it arrives on the change feed.
    const visible = async (done: () => boolean, what: string) => {
      if (catalogStore === store) t.ok(done(), `${what}, when the write returns`);
      else await waitFor(done).then(() => t.pass(`${what}, through the change feed`));
    };
    const { accountId, apiKey } = await store.createAccount();
    await visible(() => catalog.verifyKey(accountId, apiKey) !== undefined, 'a new account key is accepted');
    const v1 = await store.deploy(accountId, spec('f'), { dir: functionFolder('exports.handler = () => 1;\n') }, pass);
    await visible(() => catalog.serving(accountId, 'f')?.version === v1.version, 'a deploy serves');
    const v2 = await store.deploy(accountId, spec('f'), { dir: functionFolder('exports.handler = () => 2;\n') }, pass);
    await visible(() => catalog.serving(accountId, 'f')?.version === v2.version, 'a redeploy serves');
    t.same(retired, [v1.version], 'the replaced version was retired');
    const extra = await store.createKey(accountId, { scope: 'invoke' });
    await visible(() => catalog.verifyKey(accountId, extra.apiKey)?.scope === 'invoke', 'a new invoke key is accepted');
    await store.revokeKey(accountId, extra.key.id);
    await visible(() => catalog.verifyKey(accountId, extra.apiKey) === undefined, 'a revoked key is refused, although it matched before');
    t.ok(catalog.verifyKey(accountId, apiKey), 'the other key still works');
    await store.remove(accountId, 'f');
    await visible(() => catalog.serving(accountId, 'f') === undefined, 'a removal is gone');
    t.same(retired, [v1.version, v2.version]);
    t.same(catalog.list(accountId), []);
    if (catalogStore !== store) await catalogStore.close();
  });
}

/** Waits until `done` holds (a change feed across handles is asynchronous); fails after 5 s. */
export async function waitFor(done: () => boolean, ms = 5000): Promise<void> {
  const until = Date.now() + ms;
  while (!done()) {
    if (Date.now() > until) throw new Error('timed out waiting for the change to arrive');
    await new Promise((r) => setTimeout(r, 5));
  }
}
