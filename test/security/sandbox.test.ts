import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import t from 'tap';
import { functionFolder } from '../helpers/functions';
import { startCountingListener, type CountingListener } from '../helpers/listener';
import { fixture, removeDir, startTestServer, type TestServer } from '../helpers/server';

// User code cannot reach the host: its environment, files, processes, objects or listeners.
const SECRET = `host-secret-${process.pid}-${Date.now()}`;
process.env.ISLET_TEST_HOST_SECRET = SECRET;
const markerDir = mkdtempSync(path.join(tmpdir(), 'islet-marker-'));
const markerFile = path.join(markerDir, 'marker.js');
writeFileSync(markerFile, `module.exports = ${JSON.stringify(SECRET)};\n`);

let s: TestServer;
let listener: CountingListener;
let listenerPort = 0;
const probes = fixture('probes-node8');

t.before(async () => {
  s = await startTestServer();
  for (const entry of [
    'probeConstructor',
    'probeRequire',
    'probePrototype',
    'probeThenable',
    'probeToJSON',
    'probeFetch',
    'state',
    'context',
    'probeDynamicImport',
    'probeEval',
    'probeWasm',
    'probeProcess',
    'probeMoreBuiltins',
    'probeStackTrace',
    'probeSymbols',
    'probeSharedMemory',
    'probeHostSetter',
    'probeThenForge',
    'probeWasmIterator',
    'probeWasmShared',
  ]) {
    await s.deploy(entry.toLowerCase(), probes, entry, { env: { DECLARED: 'yes' } });
  }
  await s.deploy('state_other', probes, 'state', { env: { OTHER: 'only-mine' } });
  await s.deploy('public_redirect_to', probes, 'redirectTo');
  listener = await startCountingListener();
  listenerPort = listener.port;
});
t.teardown(async () => {
  listener.close();
  await s.stop();
});

async function probe(name: string, body?: unknown): Promise<{ status: number; text: string }> {
  const res = await s.call(name, body === undefined ? {} : { body: JSON.stringify(body) });
  return { status: res.status, text: await res.text() };
}

t.test('Function constructor chains reach only the sandbox, never the host process', async (t) => {
  const { status, text } = await probe('probeconstructor');
  t.equal(status, 200);
  t.notMatch(text, SECRET);
  const out = JSON.parse(text) as { processEnv: string[]; hasBinding: boolean; hasMainModule: boolean; globals: string[] };
  t.same(out.processEnv.sort(), ['DECLARED', 'SERVICE_ACCOUNT_ID'], 'process.env holds only the declared env and SERVICE_ACCOUNT_ID');
  t.equal(out.hasBinding, false, 'no process.binding');
  t.equal(out.hasMainModule, false, 'no process.mainModule');
  t.same(out.globals, [], 'no host bridge, require or module on the global object');
});

t.test('host files cannot be required or read; built-ins a sandbox cannot offer throw naming themselves when used', async (t) => {
  const { text } = await probe('proberequire', { markerFile });
  t.notMatch(text, SECRET, 'the marker file was not read');
  const out = JSON.parse(text) as Record<string, string>;
  t.match(out['../../../../../etc/passwd'], /^MODULE_NOT_FOUND/);
  t.match(out['/etc/passwd'], /^MODULE_NOT_FOUND/);
  t.match(out[markerFile], /^MODULE_NOT_FOUND/);
  t.match(out.child_process, /^ERR_METHOD_NOT_IMPLEMENTED: child_process\.execSync is not available in islet functions/);
  // Outbound sockets are offered (test/runtime/sockets.test.ts: loopback is refused by the egress rule); servers are not.
  t.match(out.net, /^ERR_METHOD_NOT_IMPLEMENTED: net\.createServer .*is not available/);
  t.match(out.worker_threads, /^ERR_METHOD_NOT_IMPLEMENTED: worker_threads\.Worker is not available/);
  t.match(out.vm, /^ERR_METHOD_NOT_IMPLEMENTED: vm\.runInNewContext is not available/);
  t.match(out.dns, /^ERR_METHOD_NOT_IMPLEMENTED: dns\.lookup is not available/);
  t.match(out['fs:/etc/passwd'], /^ENOENT: ENOENT: no such file or directory, open '\/etc\/passwd'/, 'fs sees the function folder only');
  t.match(out['node:fs:../'], /^ENOENT/, 'no way above the function folder');
  t.match(out['fs:marker'], /^ENOENT/);
  t.match(out['fs:write'], /^EROFS: EROFS: read-only file system/);
  t.equal(out['fs:own'], `ran: ${readFileSync(path.join(probes, 'function.js'), 'utf8').slice(0, 20)}`, 'the function reads its own files');
});

t.test('__proto__ and constructor keys in returned JSON do not pollute host prototypes', async (t) => {
  const { status, text } = await probe('probeprototype');
  t.equal(status, 200);
  t.match(text, /"ok":1/);
  t.equal(({} as Record<string, unknown>).pollutedByFunction, undefined, 'Object.prototype untouched');
  t.equal((Object.prototype as unknown as Record<string, unknown>).pollutedByFunction, undefined);
  const parsed = JSON.parse(text) as Record<string, unknown>;
  t.equal(({} as Record<string, unknown>).pollutedByFunction, undefined, 'still untouched after the host parses the body');
  t.ok(Object.prototype.hasOwnProperty.call(parsed, '__proto__'), 'the key stays data');
});

t.test('thenables and toJSON/getters run inside the isolate, not on the host', async (t) => {
  const thenable = await probe('probethenable');
  t.equal(thenable.status, 200);
  t.equal(thenable.text, 'resolved inside the isolate');
  const toJSON = await probe('probetojson');
  t.equal(toJSON.status, 200);
  t.equal(toJSON.text, '{"replaced":true}');
});

t.test('fetch to link-local, private and loopback addresses is refused', async (t) => {
  for (const url of [
    'http://169.254.169.254/latest/meta-data/',
    `http://127.0.0.1:${listenerPort}/`,
    `http://localhost:${listenerPort}/`,
    `http://[::1]:${listenerPort}/`,
    'http://10.0.0.1/',
    'http://192.168.1.1/',
    'http://0.0.0.0/',
  ]) {
    const { status, text } = await probe('probefetch', { url });
    t.equal(status, 200, url);
    t.match(text, /^"blocked: .*not allowed/, `${url}: ${text}`);
  }
  t.equal(listener.connections, 0, 'the host listener was never reached');
});

t.test('fetch: numeric and mapped forms of loopback, CGNAT and private ranges are refused', async (t) => {
  for (const url of [
    `http://127.1:${listenerPort}/`,
    `http://0x7f000001:${listenerPort}/`,
    `http://2130706433:${listenerPort}/`,
    `http://[::ffff:127.0.0.1]:${listenerPort}/`,
    'http://100.64.0.1/',
    'http://172.16.0.1/',
    'http://[fd00::1]/',
    'http://[fe80::1]/',
  ]) {
    const { text } = await probe('probefetch', { url });
    t.match(text, /^"blocked: /, `${url}: ${text}`);
  }
  t.equal(listener.connections, 0, 'the host listener was never reached');
});

t.test('fetch: a redirect to a private address is refused, even from the service itself', async (t) => {
  const self = `${s.url}/v2/run/${s.accountId}/public_redirect_to?to=${encodeURIComponent(`http://127.0.0.1:${listenerPort}/`)}`;
  const { text } = await probe('probefetch', { url: self });
  t.match(text, /^"blocked: /, text);
  t.equal(listener.connections, 0, 'the host listener was never reached');
});

t.test('dynamic import(), eval and new Function reach nothing outside the isolate', async (t) => {
  t.match((await probe('probedynamicimport')).text, /^"blocked: child_process\.execSync is not available/);
  const out = JSON.parse((await probe('probeeval')).text) as { indirect: string; fn: string };
  t.equal(out.indirect, 'undefined/undefined/undefined', 'no require, host bridge or runtime entry points on the global object');
  t.equal(out.fn, 'undefined/undefined/undefined/undefined', 'no module, exports, process.binding or process.dlopen');
});

t.test("WebAssembly memory is held to the function's memory limit (128 MB)", async (t) => {
  const out = JSON.parse((await probe('probewasm')).text) as Record<string, string>;
  t.equal(out['grow within the limit'], 'ran: 1', "a module's memory without a maximum grows");
  t.match(out['grow past the limit'], /^RangeError: /, 'but not past the limit');
  t.match(out['module starting over the limit'], /^CompileError: .*256 MB, over the function's memory limit of 128 MB/);
  t.match(out['shared memory'], /^CompileError: .*shared memories are not available/);
  t.match(out['memory over the limit'], /^RangeError: .*over the function's memory limit of 128 MB/);
  t.match(
    out['memories together over the limit'],
    /^RangeError: WebAssembly memories would use 131.3125 MB, over the function's memory limit of 128 MB/,
    'every memory alive counts by what it uses (101 pages, and 2000 more asked)',
  );
  t.equal(out.constructors, 'ran: true', 'prototypes lead back to the guarded constructors');
  t.match(out['memory through a prototype'], /^RangeError: /, 'and those are guarded too');
});

// (module (memory (export "mem") 32 65536)
//   (func (export "grow") (param i32) (result i32) local.get 0 memory.grow)
//   (func (export "size") (result i32) memory.size))
const GROWING_WASM = [
  0,
  0x61,
  0x73,
  0x6d,
  1,
  0,
  0,
  0,
  ...[1, 0x0a, 2, 0x60, 1, 0x7f, 1, 0x7f, 0x60, 0, 1, 0x7f], // types: (i32) -> i32, () -> i32
  ...[3, 3, 2, 0, 1], // two functions
  ...[5, 6, 1, 1, 0x20, 0x80, 0x80, 0x04], // a memory of 32 pages (2 MiB), maximum 65536 pages (4 GiB)
  ...[7, 0x15, 3, 4, 0x67, 0x72, 0x6f, 0x77, 0, 0, 4, 0x73, 0x69, 0x7a, 0x65, 0, 1, 3, 0x6d, 0x65, 0x6d, 2, 0], // exports grow, size, mem
  ...[0x0a, 0x0d, 2, 6, 0, 0x20, 0, 0x40, 0, 0x0b, 4, 0, 0x3f, 0, 0x0b], // bodies
];

t.test('WebAssembly memory is charged by what it uses, not by its declared maximum', async (t) => {
  const dir = functionFolder(`const bytes = new Uint8Array(${JSON.stringify(GROWING_WASM)});
const kept = [];
const attempt = (fn) => { try { return fn(); } catch (e) { return e.name + ': ' + e.message; } };
exports.handler = async (body) => {
  const module = new WebAssembly.Module(bytes);
  if (body.step === 'declared') {
    // hash-wasm's argon2id: modules declaring a maximum of 4 GiB, using a few MB each.
    const a = new WebAssembly.Instance(module).exports;
    const { instance } = await WebAssembly.instantiate(bytes);
    const b = instance.exports;
    return { sizes: [a.size(), b.size()], imports: WebAssembly.Module.imports(module).length, pastTheLimit: a.grow(3000), within: a.grow(1000), grown: a.mem.buffer.byteLength, fromJs: attempt(() => a.mem.grow(1100)), after: a.size() };
  }
  if (body.step === 'together') {
    const a = new WebAssembly.Instance(module).exports;
    const b = new WebAssembly.Instance(module).exports;
    kept.push(a, b);
    return [a.grow(1500), b.grow(900)];
  }
  if (body.step === 'three') {
    // Made in one job, so none of them can be collected before its end: the first gets the limit,
    // each next one half of what the ones before leave of twice the limit.
    const made = [new WebAssembly.Instance(module).exports, new WebAssembly.Instance(module).exports, new WebAssembly.Instance(module).exports];
    return { grown: made.map((e) => e.grow(300)), past: made.map((e) => e.grow(3000)) };
  }
  if (body.step === 'per-call') return new WebAssembly.Instance(module).exports.grow(1000);
  if (body.step === 'shared') {
    // A SharedArrayBuffer's way in: charged by its size like any memory.
    const memory = new WebAssembly.Memory({ shared: true, initial: 1500, maximum: 2000 });
    return { buffer: memory.buffer.constructor.name, next: attempt(() => new WebAssembly.Memory({ initial: 600 })), noMaximum: attempt(() => new WebAssembly.Memory({ shared: true, initial: 1 })) };
  }
  return kept.length;
};
`);
  t.teardown(() => removeDir(dir));
  await s.deploy('wasm_by_use', dir, 'handler');
  const declared = await probe('wasm_by_use', { step: 'declared' });
  t.equal(declared.status, 200, declared.text);
  t.same(
    JSON.parse(declared.text),
    {
      sizes: [32, 32],
      imports: 0,
      pastTheLimit: -1,
      within: 32,
      grown: 1032 * 65536,
      fromJs: "RangeError: WebAssembly.Memory.grow(): WebAssembly memories would use 135.25 MB, over the function's memory limit of 128 MB",
      after: 1032,
    },
    "two instances of 2 MiB each under 128 MB; memory.grow in wasm past the limit answers -1, from JavaScript a RangeError; the module's own memory is not among its imports",
  );
  // Three memories in one call, as hash-wasm's argon2Verify after argon2id makes: each grows to 21 MB.
  const three = await probe('wasm_by_use', { step: 'three' });
  t.equal(three.status, 200, three.text);
  t.same(JSON.parse(three.text), { grown: [32, 32, 32], past: [-1, -1, -1] }, 'three memories of a 4 GiB declared maximum each grow to 21 MB in one call; none past the limit');
  // Two memories grown by wasm code to 96 and 58 MB: over the limit together, found when the call ends.
  const together = await probe('wasm_by_use', { step: 'together' });
  t.equal(together.status, 500);
  t.match(JSON.parse(together.text), { errorCode: 'ERR_RESOURCE_LIMIT', message: /WebAssembly memories use 154 MB together, over its memory limit of 128 MB: the instance was discarded/ });
  t.equal((await probe('wasm_by_use', { step: 'count' })).text, '0', 'the next call runs on a new instance');
  const shared = await probe('wasm_by_use', { step: 'shared' });
  t.same(
    JSON.parse(shared.text),
    {
      buffer: 'SharedArrayBuffer',
      next: "RangeError: WebAssembly memories would use 131.25 MB, over the function's memory limit of 128 MB",
      noMaximum: 'TypeError: WebAssembly.Memory(): If shared is true, maximum property should be defined.',
    },
    'a shared memory of 94 MB counts by its size: 38 MB more are refused',
  );
  // Memories that are garbage do not count: a module instantiated and grown to 64 MB on each call.
  const statuses = new Set<number>();
  for (let i = 0; i < 8; i++) statuses.add((await probe('wasm_by_use', { step: 'per-call' })).status);
  t.same([...statuses], [200], 'eight calls of 64 MB each, none refused');
});

t.test("the abort event's isTrusted leaves the function's Object.defineProperty as it was, and a frozen Object still aborts", async (t) => {
  const dir = functionFolder(`exports.handler = async (body) => {
  const mine = function defineProperty(o, k, d) { return Reflect.defineProperty(o, k, d) ? o : o; };
  if (body.step === 'replaced') Object.defineProperty = mine;
  if (body.step === 'frozen') Object.freeze(Object);
  const controller = new AbortController();
  let trusted;
  controller.signal.addEventListener('abort', (event) => { trusted = event.isTrusted; });
  controller.abort();
  return { trusted, aborted: controller.signal.aborted, same: body.step === 'replaced' ? Object.defineProperty === mine : Object.defineProperty.name };
};
`);
  t.teardown(() => removeDir(dir));
  await s.deploy('trusted_abort', dir, 'handler');
  t.same(JSON.parse((await probe('trusted_abort', { step: 'replaced' })).text), { trusted: true, aborted: true, same: true }, "the function's own defineProperty is back after the event is made");
  t.same(JSON.parse((await probe('trusted_abort', { step: 'frozen' })).text), { trusted: false, aborted: true, same: 'defineProperty' }, 'with Object frozen the abort still fires, untrusted');
});

t.test("process has no binding or dlopen; kill and exit throw; pid and execPath are not the host's", async (t) => {
  const out = JSON.parse((await probe('probeprocess')).text) as Record<string, string>;
  for (const name of ['binding', '_linkedBinding', 'dlopen', 'mainModule']) t.equal(out[name], 'undefined', name);
  t.not(out.pid, String(process.pid), 'pid is not the host process');
  t.not(out.execPath, process.execPath, 'execPath is not the host binary');
  t.equal(out.cwd, 'function:/', 'cwd is the function root');
  t.match(out.kill, /error: process.kill\(\) is not available/);
  t.match(out.exit, /error: process.exit\(\) is not available/);
});

t.test('module, inspector, v8, http and os give nothing of the host', async (t) => {
  const out = JSON.parse((await probe('probemorebuiltins')).text) as Record<string, string>;
  t.match(out.module, /^MODULE_NOT_FOUND/, 'createRequire stays in the function folder');
  t.match(out.inspector, /^ERR_METHOD_NOT_IMPLEMENTED: inspector\.open/);
  t.match(out.v8, /^ERR_METHOD_NOT_IMPLEMENTED: v8\.getHeapSnapshot/);
  t.match(out.http, /^ERR_SERVER_LISTEN_AFTER_LOAD: server\.listen\(\) was called after the function loaded/, 'a server made during a call serves nothing');
  t.equal(out.os, 'ran: islet islet /', 'os answers fixed values');
  t.equal(out['process.env'], 'ran: DECLARED,SERVICE_ACCOUNT_ID');
});

t.test('Error.prepareStackTrace sees only the function and runtime frames, no host ones', async (t) => {
  const frames = JSON.parse((await probe('probestacktrace')).text) as string[];
  t.ok(frames.length > 0);
  for (const frame of frames) t.notMatch(frame, /\/dist\/|node:|node_modules|isolated-vm/, frame);
});

t.test('symbols, getters and shared memory on returned values stay inside the isolate', async (t) => {
  const symbols = await probe('probesymbols');
  t.equal(symbols.status, 200);
  t.equal(symbols.text, '{}', 'serialised inside the isolate: non-enumerable getters and symbols are not run on the host');
  const shared = await probe('probesharedmemory');
  t.equal(shared.status, 200);
  t.equal(shared.text, '\x07\x07\x07\x07', 'a SharedArrayBuffer view is copied out as plain bytes, not shared');
});

// Prototype probes: user code replaces built-ins or puts accessors on Object.prototype before
// anything else runs, as test/security/sandbox-prototype-probe.test.ts does for every name at once.
t.test("a setter on Object.prototype is never handed the host's callbacks when the module system is made", async (t) => {
  const out = JSON.parse((await probe('probehostsetter')).text) as { received: string[]; reference: string; works: string };
  t.equal(out.works, 'function islet', 'computed require and createRequire work');
  t.same(
    out.received.filter((r) => /ModuleSystem|startOp|nativeOffThread|deliver/.test(r)),
    [],
    `nothing of the host among ${out.received.length} values set`,
  );
  t.equal(out.reference, 'not reached');
});

t.test("a replaced Promise.prototype.then cannot answer a call in the runtime's place", async (t) => {
  const res = await probe('probethenforge');
  t.equal(res.status, 200);
  t.equal(res.text, '"genuine"', "the handler's own answer");
});

t.test("WebAssembly's guard hands neither its native constructors nor a descriptor to user code", async (t) => {
  const iterator = JSON.parse((await probe('probewasmiterator')).text) as { namespace: string; raw: string[]; memory: string };
  t.equal(iterator.namespace, 'object');
  t.same(iterator.raw, [], 'no unguarded constructor went through a replaced array iterator');
  t.equal(iterator.memory, 'none');
  const shared = JSON.parse((await probe('probewasmshared')).text) as { memory: string };
  t.equal(shared.memory, 'not shared', 'Object.prototype.shared does not reach the descriptor the guard gives V8');
});

t.test('module state survives between calls of one function and never leaks to another', async (t) => {
  const first = JSON.parse((await probe('state')).text) as { calls: number; shared: string; env: Record<string, string> };
  const second = JSON.parse((await probe('state')).text) as { calls: number; shared: string };
  t.equal(second.calls, first.calls + 1, 'warm instance keeps module state');
  const other = JSON.parse((await probe('state_other')).text) as { calls: number; env: Record<string, string> };
  t.equal(other.calls, 1, 'another function has its own module state');
  t.same(Object.keys(other.env).sort(), ['OTHER', 'SERVICE_ACCOUNT_ID']);
  t.equal(first.env.OTHER, undefined, "one function does not see another's env");
});

t.test('the host process itself is untouched', async (t) => {
  t.equal(process.env.ISLET_TEST_HOST_SECRET, SECRET);
  t.equal(readFileSync(markerFile, 'utf8'), `module.exports = ${JSON.stringify(SECRET)};\n`);
});
