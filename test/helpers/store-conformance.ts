import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import type { Test } from 'tap';
import { Catalog } from '../../engine/store/catalog';
import type { FunctionSpec } from '../../engine/manifest';
import { deployVersion } from '../../engine/store/pipeline';
import type { Store, StoreChange } from '../../engine/store/store';
import { functionFolder } from './functions';

/**
 * The contract every Store keeps, run against each implementation: `open` gives a fresh, empty
 * store (keeping the newest `keepVersions` versions and the serving ones, 3 here); `second` (when the
 * store can be shared) opens another handle on the same state, as a second process or node would.
 */
export interface StoreUnderTest {
  open(options: { keepVersions: number }): Promise<Store>;
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
    store = await impl.open({ keepVersions: 3 });
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
    t.ok(
      snapshot.accounts.some((a) => a.id === accountId),
      'the account is in a full load',
    );
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
    const manifest = await deployVersion(store, accountId, spec('one'), { dir: folder }, async (m, codeDir) => {
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
    const first = await deployVersion(store, accountId, spec('kept'), { dir: functionFolder('exports.handler = () => "v1";\n') }, pass);
    await quiet(changes);
    await t.rejects(
      deployVersion(store, accountId, spec('kept'), { dir: functionFolder('exports.handler = () => "v2";\n') }, () => Promise.reject(new Error('refused by the check'))),
      /refused by the check/,
    );
    await t.rejects(deployVersion(store, accountId, spec('kept', { file: 'missing.js' }), { dir: functionFolder('') }, pass), { code: 'ERR_INVALID_FUNCTION' });
    await t.rejects(deployVersion(store, accountId, spec('kept'), { tarball: Buffer.from('not a tarball') }, pass), { code: 'ERR_BAD_REQUEST' });
    t.equal((await store.readFunction(accountId, 'kept'))?.serving[0]?.version, first.version, 'v1 still serves');
    t.same(changes, [], 'nothing was announced');
  });

  t.test('remove: the function is gone, and removing it again finds nothing', async (t) => {
    const { accountId } = await store.createAccount();
    const deployed = await deployVersion(store, accountId, spec('gone'), { dir: functionFolder('exports.handler = () => 0;\n') }, pass);
    await quiet(changes);
    t.equal((await store.remove(accountId, 'gone'))?.version, deployed.version);
    t.ok(heard(changes, { kind: 'function', account: accountId, name: 'gone' }), 'the removal was heard before it resolved');
    t.equal(await store.readFunction(accountId, 'gone'), undefined);
    t.notOk(
      (await store.load()).functions.some((f) => f.account === accountId),
      'not in a full load either',
    );
    t.equal(await store.remove(accountId, 'gone'), undefined);
  });

  t.test('versions: numbered per function, listed newest first with their notes, a new one serves', async (t) => {
    const { accountId } = await store.createAccount();
    const made = [];
    for (let i = 1; i <= 3; i++) made.push(await deployVersion(store, accountId, spec('v'), { dir: functionFolder(`exports.handler = () => ${i};\n`) }, pass, { message: `release ${i}` }));
    t.same(
      made.map((m) => m.version),
      [1, 2, 3],
    );
    const other = await deployVersion(store, accountId, spec('w'), { dir: functionFolder('exports.handler = () => 0;\n') }, pass);
    t.equal(other.version, 1, 'each function counts its own');
    const list = await store.listVersions(accountId, 'v');
    t.same(
      list?.versions.map((m) => [m.version, m.message]),
      [
        [3, 'release 3'],
        [2, 'release 2'],
        [1, 'release 1'],
      ],
    );
    t.same(list?.traffic, [{ version: 3, percent: 100 }]);
    t.equal(list?.latest, 3);
    t.equal(await store.listVersions(accountId, 'nothing'), undefined);
    t.equal(readFileSync(path.join(await store.codeDir(made[0]!), 'function.js'), 'utf8'), 'exports.handler = () => 1;\n', 'an older version keeps its own code');
  });

  t.test('traffic: a deploy with a percent splits with the version serving most; setTraffic switches at once', async (t) => {
    const { accountId } = await store.createAccount();
    for (let i = 1; i <= 2; i++) await deployVersion(store, accountId, spec('s'), { dir: functionFolder(`exports.handler = () => ${i};\n`) }, pass);
    await deployVersion(store, accountId, spec('s'), { dir: functionFolder('exports.handler = () => 3;\n') }, pass, { percent: 10 });
    t.same((await store.readFunction(accountId, 's'))?.traffic, [
      { version: 2, percent: 90 },
      { version: 3, percent: 10 },
    ]);
    t.same(
      (await store.readFunction(accountId, 's'))?.serving.map((m) => m.version),
      [2, 3],
      'the manifests of both serving versions',
    );
    await deployVersion(store, accountId, spec('s'), { dir: functionFolder('exports.handler = () => 4;\n') }, pass, { percent: 0 });
    t.same(
      (await store.readFunction(accountId, 's'))?.traffic,
      [
        { version: 2, percent: 90 },
        { version: 3, percent: 10 },
      ],
      'a 0% deploy stores a version and serves it nothing',
    );
    await quiet(changes);
    const back = await store.setTraffic(accountId, 's', [{ version: 2, percent: 100 }]);
    t.same(back.traffic, [{ version: 2, percent: 100 }]);
    t.ok(heard(changes, { kind: 'function', account: accountId, name: 's' }), 'announced before it returns');
    const split = await store.setTraffic(accountId, 's', [
      { version: 4, percent: 25.5 },
      { version: 2, percent: 74.5 },
    ]);
    t.same(
      split.traffic,
      [
        { version: 2, percent: 74.5 },
        { version: 4, percent: 25.5 },
      ],
      'sorted by version',
    );
    await t.rejects(
      store.setTraffic(accountId, 's', [
        { version: 2, percent: 60 },
        { version: 3, percent: 30 },
      ]),
      { code: 'ERR_BAD_REQUEST', message: /add up to 90/ },
    );
    await t.rejects(store.setTraffic(accountId, 's', [{ version: 2, percent: 101 }]), { code: 'ERR_BAD_REQUEST', message: /from 0 to 100/ });
    await t.rejects(
      store.setTraffic(
        accountId,
        's',
        [2, 3, 4].map((version) => ({ version, percent: 100 / 3 })),
      ),
      { code: 'ERR_BAD_REQUEST', message: /two versions at most/ },
    );
    await t.rejects(store.setTraffic(accountId, 's', [{ version: 9, percent: 100 }]), { code: 'ERR_NOT_FOUND', message: /no version 9 \(the latest is 4\)/ });
    await t.rejects(store.setTraffic(accountId, 'nothing', [{ version: 1, percent: 100 }]), { code: 'ERR_NO_SUCH_FUNCTION' });
    t.same(
      (await store.readFunction(accountId, 's'))?.traffic,
      [
        { version: 2, percent: 74.5 },
        { version: 4, percent: 25.5 },
      ],
      'refused changes changed nothing',
    );
  });

  t.test('pruning: the newest versions (3 here) and every serving one are kept', async (t) => {
    const { accountId } = await store.createAccount();
    await deployVersion(store, accountId, spec('p'), { dir: functionFolder('exports.handler = () => 1;\n') }, pass);
    for (let i = 2; i <= 6; i++) await deployVersion(store, accountId, spec('p'), { dir: functionFolder(`exports.handler = () => ${i};\n`) }, pass, { percent: 0 });
    t.same(
      (await store.listVersions(accountId, 'p'))?.versions.map((m) => m.version),
      [6, 5, 4, 1],
      'version 1 still serves, so it stays',
    );
    await deployVersion(store, accountId, spec('p'), { dir: functionFolder('exports.handler = () => 7;\n') }, pass);
    t.same(
      (await store.listVersions(accountId, 'p'))?.versions.map((m) => m.version),
      [7, 6, 5],
      'once it stops serving it goes too',
    );
    await t.rejects(store.setTraffic(accountId, 'p', [{ version: 2, percent: 100 }]), { code: 'ERR_NOT_FOUND', message: /version 2 of p was pruned \(kept: 5, 6, 7\)/ });
  });

  t.test('keys: names are unique among keys in use; the last admin key cannot be revoked; uses are recorded quietly', async (t) => {
    const { accountId } = await store.createAccount();
    const first = (await store.readAccount(accountId))!.keys[0]!;
    t.equal(first.name, 'default');
    const ci = await store.createKey(accountId, { name: 'ci', scope: 'invoke' });
    await t.rejects(store.createKey(accountId, { name: 'ci' }), { code: 'ERR_CONFLICT', message: /already has a key named ci/ });
    await t.rejects(store.createKey(accountId, { name: 'bad name!' }), { code: 'ERR_BAD_REQUEST', message: /invalid key name/ });
    await t.rejects(store.createKey(accountId, { scope: 'root' as never }), { code: 'ERR_BAD_REQUEST', message: /invalid key scope/ });
    await store.revokeKey(accountId, ci.key.id);
    t.equal((await store.createKey(accountId, { name: 'ci', scope: 'invoke' })).key.name, 'ci', 'a revoked key frees its name');
    await t.rejects(store.revokeKey(accountId, first.id), { code: 'ERR_CONFLICT', message: /default is the last admin key/ });
    t.notOk((await store.readAccount(accountId))!.keys.find((k) => k.id === first.id)?.revokedAt, 'it was not revoked');
    const admin2 = await store.createKey(accountId, { name: 'ops', scope: 'admin' });
    t.equal((await store.revokeKey(accountId, first.id)).name, 'default', 'with another admin key, it can go');
    await quiet(changes);
    await store.touchKeys(accountId, { [admin2.key.id]: '2030-01-01T00:00:00.000Z' });
    await store.touchKeys(accountId, { [admin2.key.id]: '2029-01-01T00:00:00.000Z' });
    t.equal((await store.readAccount(accountId))!.keys.find((k) => k.id === admin2.key.id)?.lastUsedAt, '2030-01-01T00:00:00.000Z', 'the later use is kept');
    await new Promise((r) => setTimeout(r, 100));
    t.same(changes, [], 'recording uses announces nothing');
    await store.setAccountLimits(accountId, { ratePerSec: 50, maxInFlight: 10 });
    t.same((await store.readAccount(accountId))?.limits, { ratePerSec: 50, maxInFlight: 10 });
    t.ok(heard(changes, { kind: 'account', accountId }), 'limits are announced before the write returns');
  });

  t.test('a catalog follows the store: deploys, redeploys, removals and revocations', async (t) => {
    const retired: number[] = [];
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
    const v1 = await deployVersion(store, accountId, spec('f'), { dir: functionFolder('exports.handler = () => 1;\n') }, pass);
    await visible(() => catalog.serving(accountId, 'f')?.version === v1.version, 'a deploy serves');
    const v2 = await deployVersion(store, accountId, spec('f'), { dir: functionFolder('exports.handler = () => 2;\n') }, pass);
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

    // Splits: a call's version is drawn per call, or fixed by a sticky key; versions that stop serving retire.
    retired.length = 0;
    const s1 = await deployVersion(store, accountId, spec('g'), { dir: functionFolder('exports.handler = () => 1;\n') }, pass);
    await visible(() => catalog.serving(accountId, 'g')?.version === 1, 'a first version serves');
    const held = catalog.serving(accountId, 'g');
    await deployVersion(store, accountId, spec('g'), { dir: functionFolder('exports.handler = () => 2;\n') }, pass, { percent: 30 });
    await visible(() => catalog.function(accountId, 'g')?.second?.version === 2, 'a split serves both versions');
    t.equal(catalog.function(accountId, 'g')?.first, held, 'the version that keeps 70% keeps its manifest object (and its warm instance)');
    const entry = catalog.function(accountId, 'g')!;
    const drawn = Array.from({ length: 2000 }, () => catalog.pick(entry, undefined).version);
    const share = drawn.filter((v) => v === 2).length / drawn.length;
    t.ok(share > 0.25 && share < 0.35, `about 30% of calls draw version 2 (${share})`);
    const sticky = Array.from({ length: 20 }, () => catalog.pick(entry, 'user-42').version);
    t.equal(new Set(sticky).size, 1, 'a sticky key always gets the same version');
    t.same(retired, [], 'nothing retired by a split');
    await store.setTraffic(accountId, 'g', [{ version: s1.version, percent: 100 }]);
    await visible(() => catalog.function(accountId, 'g')?.second === undefined, 'a rollback serves one version again');
    t.same(retired, [2], 'the version that stopped serving retired');
    t.ok(catalog.isServing(catalog.serving(accountId, 'g')!));
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
