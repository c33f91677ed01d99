import { readdirSync, readFileSync, statSync } from 'node:fs';
import * as path from 'node:path';
import t, { type Test } from 'tap';
import { containedPath } from '../../engine/contained-path';
import type { EngineApi } from '../../engine/api';
import type { Engine } from '../../engine/engine';
import type { Store } from '../../engine/store/store';
import { functionFolder } from '../helpers/functions';
import { startNode } from '../helpers/nodes';
import { withPostgres } from '../helpers/postgres';
import { deployUpload, rawRequest } from '../helpers/raw-http';
import { startTestServer } from '../helpers/server';

// Finding 1 of issue 22: account A's admin key named account B's function through a crafted name
// in A's own URL (`…/functions/..%2F<B>%2Ffn/versions`): the file store joined it into a path and
// answered B's versions, rewrote B's traffic, moved B's folder. Every management route, with every
// way of spelling a path in a name, on both stores: each is refused, and B is as it was.

interface TwoAccounts {
  url: string;
  engine: EngineApi;
  /** The concrete engine: its catalog and log store. */
  internals: Engine;
  store: Store;
  a: { id: string; key: string };
  b: { id: string; key: string };
  /** What a reader of B's data finds (and, on the file store, B's files on disk). */
  snapshotB(): Promise<string>;
  stop(): Promise<void>;
}

const spec = { name: 'fn', runtime: 'node8' as const, file: 'function.js', entrypoint: 'handler', env: {} };

async function populate(engine: Engine): Promise<{ a: { id: string; key: string }; b: { id: string; key: string } }> {
  const a = await engine.createAccount();
  const b = await engine.createAccount();
  await engine.store.createKey(b.accountId, { name: 'b-caller', scope: 'invoke' });
  for (const n of [1, 2]) await engine.deploy(b.accountId, spec, { dir: functionFolder(`exports.handler = () => 'b${n}';\n`) });
  await engine.invoke({ accountId: b.accountId, functionName: 'fn', apiKey: b.apiKey, method: 'GET', path: '/', rawQuery: '', headers: {}, body: Buffer.alloc(0) });
  await engine.logs.flush();
  return { a: { id: a.accountId, key: a.apiKey }, b: { id: b.accountId, key: b.apiKey } };
}

/** Every file below `dir` with its size (and traffic.json's content), or 'missing'. */
function tree(dir: string): string {
  const out: string[] = [];
  const walk = (rel: string) => {
    for (const entry of readdirSync(path.join(dir, rel), { withFileTypes: true })) {
      const child = path.join(rel, entry.name);
      if (entry.isDirectory()) walk(child);
      else out.push(`${child}:${statSync(path.join(dir, child)).size}${entry.name === 'traffic.json' ? readFileSync(path.join(dir, child), 'utf8') : ''}`);
    }
  };
  try {
    walk('');
  } catch {
    return 'missing';
  }
  return out.sort().join('\n');
}

async function storeView(store: Store, b: string): Promise<string> {
  return JSON.stringify([await store.listVersions(b, 'fn'), await store.readFunction(b, 'fn'), (await store.readAccount(b))?.keys.map((k) => [k.name, k.revokedAt])]);
}

async function fileServer(): Promise<TwoAccounts> {
  const s = await startTestServer({ limits: { pythonSpare: false } });
  const { a, b } = await populate(s.internals);
  return {
    url: s.url,
    engine: s.engine,
    internals: s.internals,
    store: s.internals.store,
    a,
    b,
    snapshotB: async () => `${await storeView(s.internals.store, b.id)}\n${tree(path.join(s.dataDir, 'functions', b.id))}\n${tree(path.join(s.dataDir, 'logs', b.id))}`,
    stop: () => s.stop(),
  };
}

async function postgresServer(url: string): Promise<TwoAccounts> {
  const node = await startNode(url);
  const { a, b } = await populate(node.internals);
  return {
    url: node.url,
    engine: node.engine,
    internals: node.internals,
    store: node.store,
    a,
    b,
    snapshotB: async () => `${await storeView(node.store, b.id)}\n${tree(path.join(node.dataDir, 'logs', b.id))}`,
    stop: () => node.stop(),
  };
}

/** Names as they are sent in the URL (raw), each one that no rule may let through. */
function crafted(b: string): string[] {
  return [
    `..%2F${b}%2Ffn`,
    `..%2f${b}%2ffn`,
    `%2e%2e%2F${b}%2Ffn`,
    `%2E%2E%2F%2E%2E%2Ffunctions%2F${b}%2Ffn`,
    `fn%2F..%2F..%2F${b}%2Ffn`,
    '%2e%2e',
    '..',
    '.',
    '%2F',
    `%2F${b}`,
    `..%5C${b}%5Cfn`,
    'fn%5C..',
    'fn%00',
    '%00',
    `fn%00%2F..%2F..%2F${b}`,
    `..%252F${b}%252Ffn`,
    '%',
    'a'.repeat(129),
    'a'.repeat(8000),
  ];
}

/** [method, path after the function's name, JSON body]; the deploy's body is made per request. */
const FUNCTION_ROUTES: [string, string, unknown?][] = [
  ['GET', ''],
  ['DELETE', ''],
  ['PUT', ''],
  ['GET', '/logs'],
  ['GET', '/logs/live'],
  ['GET', '/versions'],
  ['POST', '/rollback', {}],
  ['POST', '/rollback', { to: 1 }],
  ['PUT', '/traffic', { traffic: [{ version: 1, percent: 100 }] }],
  ['POST', '/promote', {}],
  ['GET', '/stats'],
];

async function send(s: TwoAccounts, method: string, route: string, key: string, json?: unknown) {
  if (method === 'PUT' && json === undefined) {
    const upload = await deployUpload("exports.handler = () => 'from A';\n");
    return rawRequest(s.url, method, route, { 'x-service-api-key': key, 'content-type': upload.contentType }, upload.body);
  }
  const body = json === undefined ? undefined : JSON.stringify(json);
  return rawRequest(s.url, method, route, { 'x-service-api-key': key, ...(body ? { 'content-type': 'application/json' } : {}) }, body);
}

function attacks(t: Test, open: () => Promise<TwoAccounts>): void {
  let s: TwoAccounts;
  let before: string;
  t.before(async () => {
    s = await open();
    before = await s.snapshotB();
  });
  t.teardown(() => s.stop());

  t.test("every function route refuses a crafted name with A's key, and B is as it was", async (t) => {
    for (const [method, suffix, json] of FUNCTION_ROUTES) {
      for (const name of crafted(s.b.id)) {
        const res = await send(s, method, `/v2/accounts/${s.a.id}/functions/${name}${suffix}`, s.a.key, json);
        if (res.status === 400 && res.json.errorCode === 'ERR_BAD_REQUEST' && /invalid function name/.test(String(res.json.message))) continue;
        // A name that a route pattern cannot take as one segment reaches no route at all.
        if (res.status === 404 && res.json.errorCode === 'ERR_NOT_FOUND' && /no route/.test(String(res.json.message))) continue;
        t.fail(`${method} …/functions/${name.slice(0, 60)}${suffix}: ${res.status} ${res.body.slice(0, 300)}`);
      }
      t.equal(await s.snapshotB(), before, `after ${method} …${suffix}: B's versions, traffic, keys, files and logs are untouched`);
    }
    t.same(s.engine.list(s.a.id), [], "A's list shows no function of B's");
    t.equal(s.internals.catalog.list(s.a.id).length, 0, "no record of B's got into A's part of the catalog");
  });

  t.test('a refusal names the rule, and echoes at most 140 characters of the name', async (t) => {
    const res = await send(s, 'GET', `/v2/accounts/${s.a.id}/functions/..%2F${s.b.id}%2Ffn/versions`, s.a.key);
    t.equal(res.status, 400);
    t.equal(res.json.message, `invalid function name "../${s.b.id}/fn": use 1-128 characters of A-Z a-z 0-9 _ -, starting with a letter or digit`);
    const long = await send(s, 'GET', `/v2/accounts/${s.a.id}/functions/${'a'.repeat(8000)}`, s.a.key);
    t.ok(long.body.length < 400, `the answer to an 8,000-character name is short (${long.body.length} bytes)`);
  });

  t.test("B's function's own name, in A's URL, is A's function: not found, and B is as it was", async (t) => {
    for (const [method, suffix, json] of FUNCTION_ROUTES) {
      if (method === 'PUT' && suffix === '') continue;
      const res = await send(s, method, `/v2/accounts/${s.a.id}/functions/fn${suffix}`, s.a.key, json);
      t.equal(res.status, 404, `${method} fn${suffix}: ${res.body.slice(0, 200)}`);
    }
    t.equal(await s.snapshotB(), before);
  });

  t.test("A's key on B's account is refused (403), whatever the route", async (t) => {
    for (const [method, suffix, json] of FUNCTION_ROUTES) {
      const res = await send(s, method, `/v2/accounts/${s.b.id}/functions/fn${suffix}`, s.a.key, json);
      t.equal(res.status, 403, `${method} fn${suffix}`);
      t.equal(res.json.errorCode, 'ERR_BAD_KEY');
    }
    t.equal(await s.snapshotB(), before);
  });

  t.test('a crafted account id is refused on every route, keys routes included', async (t) => {
    const routes: [string, string, unknown?][] = [
      ['GET', '/functions'],
      ['GET', '/functions/fn'],
      ['GET', '/functions/fn/versions'],
      ['POST', '/functions/fn/rollback', {}],
      ['GET', '/keys'],
      ['POST', '/keys', { name: 'x', scope: 'admin' }],
      ['DELETE', '/keys/x'],
    ];
    for (const account of [`${s.a.id}%2F..%2F${s.b.id}`, `..%2F${s.b.id}`, '%2e%2e', `${s.b.id}%00`, s.b.id.toUpperCase(), 'a'.repeat(200)]) {
      for (const [method, suffix, json] of routes) {
        const res = await send(s, method, `/v2/accounts/${account}${suffix}`, s.a.key, json);
        if (res.status === 400 && /invalid account id/.test(String(res.json.message))) continue;
        if (res.status === 404 && /no route/.test(String(res.json.message))) continue;
        t.fail(`${method} /v2/accounts/${account.slice(0, 40)}${suffix}: ${res.status} ${res.body.slice(0, 200)}`);
      }
    }
    t.equal(await s.snapshotB(), before);
  });

  t.test("the key routes refuse crafted key names, and B's keys stay as they were", async (t) => {
    const bKeyName = 'b-caller';
    for (const name of [...crafted(s.b.id), `..%2F${s.b.id}%2F${bKeyName}`]) {
      const res = await send(s, 'DELETE', `/v2/accounts/${s.a.id}/keys/${name}`, s.a.key);
      if (res.status === 400 && /invalid key name/.test(String(res.json.message))) continue;
      if (res.status === 404 && /no route/.test(String(res.json.message))) continue;
      t.fail(`DELETE keys/${name.slice(0, 60)}: ${res.status} ${res.body.slice(0, 200)}`);
    }
    const other = await send(s, 'DELETE', `/v2/accounts/${s.a.id}/keys/${bKeyName}`, s.a.key);
    t.equal(other.status, 404, "the name of B's key is no key of A's");
    t.equal(await s.snapshotB(), before);
  });

  t.test('calls (/v2/run and sdk.invoke) with crafted names reach nothing of B', async (t) => {
    for (const name of crafted(s.b.id)) {
      const res = await rawRequest(s.url, 'GET', `/v2/run/${s.a.id}/${name}`, { 'x-service-api-key': s.a.key });
      t.not(res.status, 200, `/v2/run/<A>/${name.slice(0, 60)}: ${res.status}`);
    }
    const viaAccount = await rawRequest(s.url, 'GET', `/v2/run/${s.a.id}%2F..%2F${s.b.id}/fn`, { 'x-service-api-key': s.a.key });
    t.equal(viaAccount.status, 403, "a crafted account id is not A and A's key is no key of it");
    for (const [accountId, functionName] of [
      [s.a.id, `../${s.b.id}/fn`],
      [`${s.a.id}/../${s.b.id}`, 'fn'],
      [s.a.id, `..\\${s.b.id}\\fn`],
    ] as const) {
      const res = await s.engine.invoke({ accountId, functionName, apiKey: s.a.key, method: 'POST', path: '/', rawQuery: '', headers: {}, body: Buffer.alloc(0) });
      t.not(res.status, 200, `invoke(${accountId}, ${functionName}): ${res.status}`);
    }
  });

  t.test('the store itself refuses names that would leave the account (the second wall)', async (t) => {
    const escape = `../${s.b.id}/fn`;
    const refusedOrEmpty = async (what: string, work: () => Promise<unknown>) => {
      const outcome = await work().then(
        (value) => ({ value }),
        (err: { code?: string }) => ({ error: err.code }),
      );
      t.ok('error' in outcome ? outcome.error === 'ERR_BAD_REQUEST' || outcome.error === 'ERR_NO_SUCH_FUNCTION' : outcome.value === undefined, `${what}: ${JSON.stringify(outcome).slice(0, 200)}`);
    };
    await refusedOrEmpty('listVersions', () => s.store.listVersions(s.a.id, escape));
    await refusedOrEmpty('readFunction', () => s.store.readFunction(s.a.id, escape));
    await refusedOrEmpty('setTraffic', () => s.store.setTraffic(s.a.id, escape, [{ version: 1, percent: 100 }]));
    await refusedOrEmpty('remove', () => s.store.remove(s.a.id, escape));
    await refusedOrEmpty('remove (account)', () => s.store.remove(`${s.a.id}/..`, `${s.b.id}`));
    await refusedOrEmpty('logs', () => s.internals.logs.read(`${s.a.id}/../${s.b.id}`, 'fn').then((lines) => (lines.length ? lines : undefined)));
    t.equal(await s.snapshotB(), before);
  });
}

t.test('containedPath: single names below the base, nothing else', async (t) => {
  t.equal(containedPath('/data/functions', 'a0a0a0a0a0a0a0a0', 'fn'), '/data/functions/a0a0a0a0a0a0a0a0/fn');
  t.equal(containedPath('/data/functions', 'a', '..fn'), '/data/functions/a/..fn', 'a name that starts with two dots is still a name');
  for (const names of [['..'], ['.'], [''], ['a/b'], ['a', '../b'], ['a\\..\\b'], ['a\0'], ['a', '..']]) {
    t.throws(() => containedPath('/data/functions', ...names), { code: 'ERR_BAD_REQUEST' }, JSON.stringify(names));
  }
  try {
    containedPath('/data/functions', 'a', '..');
  } catch (err) {
    t.notMatch((err as Error).message, '/data', 'the refusal names no host path');
  }
});

t.test('file store', async (t) => attacks(t, fileServer));

t.test('postgres store', async (t) => {
  withPostgres(t, (pg) => attacks(t, () => postgresServer(pg().createDatabase('names'))));
});
