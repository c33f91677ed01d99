import { cpSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import t from 'tap';
import { ensureCompatInstalled } from '../helpers/compat-install';
import { functionFolder } from '../helpers/functions';
import { copyPackage } from '../helpers/package-closure';
import { eventually } from '../helpers/supervised';
import { fixture, removeDir, ROOT, startTestServer, type TestServer } from '../helpers/server';

// ES modules, CommonJS and TypeScript side by side; the fetch-style handler (with Hono); errors that
// name the user's file, line and column. Functions are in test/fixtures/modules-node8.
let s: TestServer;
const folder = fixture('modules-node8');

t.before(async () => {
  s = await startTestServer();
});
t.teardown(() => s.stop());

async function deployError(file: string, entrypoint = 'handler'): Promise<Error & { code: string; details?: Record<string, unknown> }> {
  return s.deploy(`bad_${file.replace(/\W/g, '_')}`, folder, entrypoint, { file }).then(
    () => {
      throw new Error(`${file} deployed`);
    },
    (err: Error & { code: string; details?: Record<string, unknown> }) => err,
  );
}

t.test('an ES module entry imports CommonJS, ES-only packages, exports maps, the imports map, JSON and import() of either kind', async (t) => {
  await s.deploy('esm', folder, 'handler', { file: 'esm.mjs' });
  const res = await s.invoke('esm');
  t.equal(res.status, 200, String(res.body));
  t.same(JSON.parse(String(res.body)), {
    helper: 'Hello Ada',
    shout: 'HI!',
    dual: ['dual default', 'worker build'],
    esmOnly: 'esm-only package',
    sub: 'subpath export',
    config: 'from-imports-map',
    json: 42,
    meta: 'file:///esm.mjs',
    lazy: 'lazy default',
    computed: 'computed cjs',
    computedEsm: 'computed esm',
    legacy: true,
    interop: 'object',
  });
});

t.test('a CommonJS entry requires an ES module, gets its own __dirname per file, and exports a function', async (t) => {
  await s.deploy('cjs', folder, 'handler', { file: 'cjs.js' });
  const res = await s.invoke('cjs');
  t.same(JSON.parse(String(res.body)), { esm: 'esm required', esmDefault: 'esm default', dual: 'worker build', dirname: '/', nested: '/lib /lib/where.js' });
});

t.test('top-level await in the entry and in what it imports', async (t) => {
  await s.deploy('tla', folder, 'handler', { file: 'tla.mjs' });
  t.same(JSON.parse(String((await s.invoke('tla')).body)), { settled: 'after a timer', ready: 'dependency awaited' });
});

t.test('TypeScript is compiled at deploy; its errors point at the .ts line and column', async (t) => {
  await s.deploy('ts', folder, 'handler', { file: 'src/app.ts' });
  t.same(JSON.parse(String((await s.invoke('ts')).body)), { area: 9, kind: 'Square' });
  const failed = await s.invoke('ts', { query: 'fail=1' });
  t.equal(failed.status, 500);
  const body = JSON.parse(String(failed.body)) as { message: string; stack: string };
  t.equal(body.message, 'RangeError: failed on purpose in TypeScript', 'the message keeps the error name');
  t.match(body.stack, /^RangeError: failed on purpose in TypeScript\n\s+at handler \(\/src\/app\.ts:12:41\)/, 'the frame is the .ts file, line 12, column 41');
  await s.invoke('ts', { query: 'log=1' });
  // The console's error line (a failed call's own error line carries its code).
  const logged = (await s.internals.logs.read(s.accountId, 'ts')).find((e) => e.level === 'error' && !e.code);
  t.match(logged?.message, /^Error: logged from TypeScript\n\s+at handler \(\/src\/app\.ts:13:48\)/, 'a stack written to the logs points into the .ts file too');
});

t.test('a fetch-style module: Request in, Response out, with env, ctx.waitUntil, bodies and headers', async (t) => {
  await s.deploy('worker', folder, 'default', { file: 'worker.mjs', env: { GREETING: 'hi' } });
  const json = await s.call('worker', { path: '/some/path', query: 'q=1', headers: { 'x-custom': 'yes' } });
  t.equal(json.status, 200);
  t.equal(json.headers.get('content-type'), 'application/json');
  t.same(await json.json(), { path: '/some/path', query: '1', env: 'hi', header: 'yes' });
  const echo = await s.call('worker', { path: '/echo', method: 'PUT', body: 'sent text' });
  t.equal(echo.status, 201);
  t.equal(echo.headers.get('x-method'), 'PUT');
  t.equal(await echo.text(), 'sent text');
  const bytes = await s.call('worker', { path: '/bytes' });
  t.same([...new Uint8Array(await bytes.arrayBuffer())], [0, 1, 2, 255]);
  t.ok(bytes.headers.get('x-service-request-id'), 'the service headers are there as for any function');
});

t.test('a Hono app deploys unchanged as a fetch-style function (entrypoint left as the default)', async (t) => {
  // Hono from the compatibility suite's install.
  const suite = path.join(ROOT, 'test', 'compat', 'node8');
  ensureCompatInstalled(suite);
  const dir = mkdtempSync(path.join(tmpdir(), 'islet-hono-'));
  t.teardown(() => removeDir(dir));
  cpSync(path.join(ROOT, 'test', 'compat', 'node8', 'cases', 'hono.mjs'), path.join(dir, 'index.mjs'));
  copyPackage(suite, 'hono', dir);
  await s.engine.deploy(s.accountId, { name: 'hono', runtime: 'node8', file: 'index.mjs', entrypoint: 'handler', env: {} }, { dir });
  const root = await s.call('hono', { query: 'name=ada' });
  t.same(await root.json(), { hello: 'hono', query: 'ada' });
  const created = await s.call('hono', { path: '/items/7', method: 'POST', body: '{"x":1}', headers: { 'content-type': 'application/json' } });
  t.equal(created.status, 201);
  t.same(await created.json(), { id: '7', body: { x: 1 } });
  const missing = await s.call('hono', { path: '/nowhere' });
  t.equal(missing.status, 404);
  t.equal(await missing.text(), 'no such route');
});

t.test('an h3 app deploys unchanged as a fetch-style function (entrypoint left as the default)', async (t) => {
  // h3 2's app has a fetch method and a handler(event) of its own (both bound in its constructor):
  // its handler takes an H3Event, not the seed's (body, context), so it must not be called seed style.
  const suite = path.join(ROOT, 'test', 'compat', 'node8');
  ensureCompatInstalled(suite);
  const dir = mkdtempSync(path.join(tmpdir(), 'islet-h3-'));
  t.teardown(() => removeDir(dir));
  cpSync(path.join(suite, 'cases', 'h3.mjs'), path.join(dir, 'index.mjs'));
  copyPackage(suite, 'h3', dir);
  await s.engine.deploy(s.accountId, { name: 'h3', runtime: 'node8', file: 'index.mjs', entrypoint: 'handler', env: {}, timeoutMs: 5000 }, { dir });
  const root = await s.call('h3', { query: 'name=ada' });
  t.equal(root.status, 200);
  t.same(await root.json(), { hello: 'h3', query: 'ada' });
  const created = await s.call('h3', { path: '/items/7', method: 'POST', body: '{"x":1}', headers: { 'content-type': 'application/json' } });
  t.equal(created.status, 201);
  t.same(await created.json(), { id: '7', body: { x: 1 } });
  const missing = await s.call('h3', { path: '/nowhere' });
  t.equal(missing.status, 404);
  t.equal(await missing.text(), 'no such route', 'its catch-all route');
});

t.test("entry detection: a default export with a fetch method is fetch style whatever a Proxy answers; a real handler export is the seed's", async (t) => {
  // itty-router's router inherits from a Proxy that answers every name with a route-adding
  // function: `router.handler` looked like a seed handler and the call hung to ERR_TIMEOUT.
  const suite = path.join(ROOT, 'test', 'compat', 'node8');
  ensureCompatInstalled(suite);
  const dir = mkdtempSync(path.join(tmpdir(), 'islet-itty-'));
  t.teardown(() => removeDir(dir));
  cpSync(path.join(suite, 'cases', 'itty-router.mjs'), path.join(dir, 'index.mjs'));
  writeFileSync(
    path.join(dir, 'router.cjs'),
    "const { AutoRouter } = require('itty-router');\nconst router = AutoRouter();\nrouter.get('/items/:id', ({ params }) => ({ cjs: params.id }));\nmodule.exports = router;\n",
  );
  copyPackage(suite, 'itty-router', dir);
  // A schedule too: the Proxy's answer for `scheduled` is no scheduled() method either.
  await s.engine.deploy(s.accountId, { name: 'itty', runtime: 'node8', file: 'index.mjs', entrypoint: 'handler', env: {}, timeoutMs: 5000, schedules: ['* * * * * *'] }, { dir });
  await s.engine.deploy(s.accountId, { name: 'itty_cjs', runtime: 'node8', file: 'router.cjs', entrypoint: 'handler', env: {}, timeoutMs: 5000 }, { dir });
  const root = await s.call('itty', { query: 'name=ada' });
  t.equal(root.status, 200);
  t.same(await root.json(), { hello: 'itty', query: 'ada' }, 'an ES module exporting the router by default');
  t.same(await (await s.call('itty', { path: '/items/42' })).json(), { id: '42' });
  t.equal((await s.call('itty', { path: '/nowhere' })).status, 404);
  t.same(await (await s.call('itty_cjs', { path: '/items/7' })).json(), { cjs: '7' }, 'module.exports = router');
  const tickError = async () => (await s.engine.readLogs(s.accountId, 'itty', {})).find((e) => e.level === 'error');
  t.ok(await eventually(async () => (await tickError()) !== undefined, 20_000), 'a tick ran and failed');
  t.match((await tickError())?.message, /has no scheduled\(controller, env, ctx\) method/, "a tick says the router has no scheduled(): it does not wait on the Proxy's answer");

  await s.deploy('entry_proxy', folder, 'handler', { file: 'entry-proxy.js', timeoutMs: 5000 });
  const proxied = await s.call('entry_proxy', { path: '/p' });
  t.equal(proxied.status, 200);
  t.equal(await proxied.text(), 'fetch style: /p', 'a hand-written Proxy answering every name');
  await s.deploy('entry_plain', folder, 'handler', { file: 'entry-plain.mjs' });
  t.equal(await (await s.call('entry_plain')).text(), 'a plain object with fetch');
  await s.deploy('entry_both', folder, 'handler', { file: 'entry-both.js' });
  t.equal(String((await s.invoke('entry_both')).body), JSON.stringify('the seed handler'), 'an own handler export is the seed handler, beside a helper named fetch');
  const named = await deployError('entry-proxy.js', 'main');
  t.equal(named.code, 'ERR_INVALID_FUNCTION');
  t.match(
    named.message,
    /does not export a function named "main" \(found nothing: its default export has a fetch method and no "main" of its own; a module whose default export has a fetch\(request, env, ctx\) method can use entrypoint: default/,
  );
});

t.test("deploy errors name the user's file, line and column, and the package they were raised in", async (t) => {
  const deep = await deployError('deep-failure.js');
  t.equal(deep.code, 'ERR_INVALID_FUNCTION');
  t.match(deep.message, /TypeError: Cannot read properties of undefined \(reading 'missing'\) \(lib\/b\.js:1:18; raised in node_modules\/deep\/index\.js:3:27\)/);
  t.equal(deep.details?.file, 'lib/b.js', "the first frame in the user's own files");
  const syntax = await deployError('requires-broken.js');
  t.match(syntax.message, /SyntaxError: Unexpected "," \(lib\/broken\.js:3:12\)/, 'a syntax error in a required file names that file');
  t.same([syntax.details?.file, syntax.details?.line, syntax.details?.column], ['lib/broken.js', 3, 12]);
  const unresolved = await deployError('missing-import.mjs').catch((e: Error) => e);
  t.match(unresolved.message, /deployed/, 'an import() of a computed name is not resolved at deploy');
});

t.test('a native addon is refused at deploy with a sentence naming its .node file', async (t) => {
  // What argon2, bcrypt or sharp ship: machine code that Node loads with dlopen. Read as JavaScript,
  // it failed the deploy with "SyntaxError: Invalid or unexpected token".
  const elf = Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0x02, 0x01, 0x01, 0x00, 0x00, 0x00, 0x03, 0x00, 0x3e, 0x00, 0xff, 0xfe, 0x00, 0x0a]);
  const addonFolder = (loader: string, handler = "const thing = require('native-thing');\nexports.handler = () => typeof thing;") => {
    const dir = functionFolder(handler, {
      'node_modules/native-thing/package.json': '{"name": "native-thing", "version": "1.0.0", "main": "index.js"}',
      'node_modules/native-thing/index.js': loader,
    });
    mkdirSync(path.join(dir, 'node_modules', 'native-thing', 'build', 'Release'), { recursive: true });
    writeFileSync(path.join(dir, 'node_modules', 'native-thing', 'build', 'Release', 'native_thing.node'), elf);
    return dir;
  };
  const refused = async (name: string, dir: string) => {
    t.teardown(() => removeDir(dir));
    const err = await s.deploy(name, dir, 'handler').then(
      () => undefined,
      (e: Error & { code: string }) => e,
    );
    t.equal(err?.code, 'ERR_INVALID_FUNCTION', `${name}: refused`);
    t.match(
      err?.message,
      /\/node_modules\/native-thing\/build\/Release\/native_thing\.node is a native addon \(machine code built for Node\), which cannot run in islet's sandbox: use a pure JavaScript or WebAssembly build of the package instead/,
      `${name}: the sentence names the file`,
    );
    t.notMatch(err?.message, /SyntaxError/);
  };
  // node-gyp-build (argon2) computes the path at run time; bindings leaves out the extension;
  // a literal require of the file is seen at deploy.
  await refused('addon_computed', addonFolder("module.exports = require(require('path').join(__dirname, 'build', 'Release', 'native_thing.node'));"));
  await refused('addon_bindings', addonFolder("module.exports = require(__dirname + '/build/Release/native_thing');"));
  await refused('addon_literal', addonFolder("module.exports = require('./build/Release/native_thing.node');"));
  // An optional addon with a JavaScript fallback (as ws's bufferutil) runs the fallback.
  const optional = addonFolder(
    "let impl;\ntry { impl = require(require('path').join(__dirname, 'build/Release/native_thing.node')); } catch (err) { impl = { fallback: true, code: err.code }; }\nmodule.exports = impl;",
    "exports.handler = () => require('native-thing');",
  );
  t.teardown(() => removeDir(optional));
  await s.deploy('addon_optional', optional, 'handler');
  t.same(JSON.parse(String((await s.invoke('addon_optional')).body)), { fallback: true, code: 'ERR_DLOPEN_FAILED' }, 'a package that catches the refusal runs its fallback');
});

t.test("require.resolve in a package's file names the file beside it, which require then loads", async (t) => {
  // jsdom 29 require.resolves './xhr-sync-worker.js' as it loads: the bundle's require resolved it
  // from the entry's folder, and the deploy failed with "Cannot find module './xhr-sync-worker.js' from '/'".
  const dir = functionFolder("const reader = require('sibling-reader');\nexports.handler = () => ({ ...reader, own: require.resolve('./lib/own.js') });", {
    'lib/own.js': '',
    'node_modules/sibling-reader/package.json': '{"name": "sibling-reader", "version": "1.0.0", "main": "lib/index.js"}',
    'node_modules/sibling-reader/lib/index.js': "const worker = require.resolve('./worker.js');\nmodule.exports = { worker, loaded: require(worker).name };",
    'node_modules/sibling-reader/lib/worker.js': "exports.name = 'the worker';",
  });
  t.teardown(() => removeDir(dir));
  await s.deploy('resolve_beside', dir, 'handler');
  t.same(JSON.parse(String((await s.invoke('resolve_beside')).body)), { worker: '/node_modules/sibling-reader/lib/worker.js', loaded: 'the worker', own: '/lib/own.js' });
});

t.test("a computed import() of a file that is not there answers Node's error", async (t) => {
  await s.deploy('missing_import', folder, 'handler', { file: 'missing-import.mjs' });
  const res = await s.invoke('missing_import', { body: JSON.stringify({ name: 'nope' }) });
  t.equal(String(res.body), JSON.stringify("MODULE_NOT_FOUND: Cannot find module './lib/nope.mjs'"));
});

t.test('a call-time error message keeps the error name, as a deploy-time one does', async (t) => {
  await s.deploy('call_error', folder, 'handler', { file: 'call-error.js' });
  const body = JSON.parse(String((await s.invoke('call_error')).body)) as { message: string; stack: string };
  t.match(body.message, /^SyntaxError: (Unexpected token|Expected property name)/);
  t.match(body.stack, /at exports\.handler \(\/call-error\.js:1:30\)/);
});
