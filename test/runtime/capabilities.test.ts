import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import * as path from 'node:path';
import ivm from 'isolated-vm';
import t from 'tap';
import type { Capability } from '../../engine/capabilities/capability';
import { NATIVE_CALLS, NODE8_OPS, PYTHON_OPS } from '../../engine/capabilities/ops';
import { BUILTIN_MODULES, CAPABILITIES, GLOBAL_TABLE, LIBRARIES, MODULE_TABLE } from '../../engine/capabilities/registry';
import { installNode8Bridge } from '../../engine/node8/bridge';
import { HOST_GLOBAL } from '../../engine/sandbox/protocol';
import { installPythonBridge } from '../../python/bridge';
import { fixture, ROOT, startTestServer, type TestServer } from '../helpers/server';

// The capabilities' manifests are the one place that says which modules, globals and libraries
// the sandboxes have: the build, the host and the runtimes' tables are derived from them. These
// tests check the manifests against each other and against the files, and that what node8
// functions get is exactly what the manifests declare.

const all: readonly Capability[] = CAPABILITIES;
const CAPABILITIES_DIR = path.join(ROOT, 'engine', 'capabilities');

t.test('every capability folder is in the registry, under its own name', async (t) => {
  const folders = readdirSync(CAPABILITIES_DIR, { withFileTypes: true }).filter((e) => e.isDirectory() && existsSync(path.join(CAPABILITIES_DIR, e.name, 'manifest.ts')));
  t.same(folders.map((e) => e.name).sort(), all.map((c) => c.name).sort());
});

t.test('libraries, modules and globals: each declared once, each from a library of its capability or of one it depends on', async (t) => {
  const libraryOwner = new Map<string, string>();
  for (const library of LIBRARIES) {
    t.notOk(libraryOwner.has(library.name), `library ${library.name} declared once`);
    libraryOwner.set(library.name, library.capability);
    t.ok(existsSync(path.join(ROOT, library.entry)), `${library.name}: ${library.entry} exists`);
  }
  const seen = { modules: new Set<string>(), globals: new Set<string>() };
  for (const c of all) {
    for (const dependency of c.dependsOn ?? [])
      t.ok(
        all.some((d) => d.name === dependency),
        `${c.name} depends on ${dependency}, a capability`,
      );
    for (const file of c.tests) t.ok(existsSync(path.join(ROOT, file)), `${c.name}: ${file} exists`);
    for (const kind of ['modules', 'globals'] as const) {
      for (const [name, source] of Object.entries({ ...c[kind], ...(kind === 'modules' ? c.ownModules : {}) })) {
        t.notOk(seen[kind].has(name), `${kind} ${name} declared once`);
        seen[kind].add(name);
        if (source === 'runtime') continue;
        const owner = libraryOwner.get(source.split('#')[0]!);
        t.ok(owner === c.name || (owner !== undefined && c.dependsOn?.includes(owner)), `${c.name}: ${name} comes from ${source}, a library of ${c.name} or of one it depends on (${String(owner)})`);
      }
    }
  }
});

t.test("the module names are Node 20's, derived from the manifests", async (t) => {
  t.same([...BUILTIN_MODULES], [...BUILTIN_MODULES].sort(), 'sorted');
  t.notOk(BUILTIN_MODULES.has('sdk'), "islet's own sdk module is not one of Node's");
  if (!process.versions.node.startsWith('20.')) {
    t.comment(`the host runs Node ${process.versions.node}, not 20: its module list is not node8's`);
    return;
  }
  t.same(
    [...BUILTIN_MODULES],
    builtinModules.filter((name) => !name.startsWith('_')),
    "Node 20's builtinModules without the internal ones",
  );
});

t.test('the runtime tables are the manifests, line for line', async (t) => {
  const lines = (table: string) => table.split('\n').filter(Boolean).sort();
  const expected = (kind: 'modules' | 'globals') =>
    all
      .flatMap((c) => Object.entries({ ...c[kind], ...(kind === 'modules' ? c.ownModules : {}) }))
      .filter(([, source]) => source !== 'runtime')
      .map(([name, source]) => `${name}:${source}`)
      .sort();
  t.same(lines(MODULE_TABLE), expected('modules'));
  t.same(lines(GLOBAL_TABLE), expected('globals'));
});

t.test('a node8 function gets exactly the modules and globals the manifests declare', async (t) => {
  const s: TestServer = await startTestServer();
  t.teardown(() => s.stop());
  await s.deploy('capabilities', fixture('capabilities-node8'), 'probe');
  const modules = [...BUILTIN_MODULES];
  const globals = all.flatMap((c) => [...Object.keys(c.globals ?? {}), ...(c.runtimes.includes('node8') ? (c.runtimeGlobals ?? []) : [])]);
  const out = (await s.invokeJson('capabilities', { modules, globals })) as {
    modules: Record<string, string>;
    globals: Record<string, string>;
    builtinModules: string[];
    isBuiltin: string[];
    sdk: string;
  };
  for (const name of modules) t.match(out.modules[name], /^(object|function)$/, `require('${name}') and require('node:${name}') give a module`);
  for (const name of globals) t.not(out.globals[name], 'undefined', `globalThis.${name}`);
  t.same(out.builtinModules, modules, "module.builtinModules lists exactly the manifests' modules");
  t.same(out.isBuiltin, [], 'module.isBuiltin knows each of them');
  t.equal(out.sdk, 'function', "islet's sdk module");
});

// A manifest's `ops` is what a reader (and the README) takes as the capability's surface between
// its halves. Nothing else ties it to the code, so these tests do: each capability's ops.ts declares
// exactly the ops its manifest names; what the host dispatches (the check tables the bridges run
// over, the callbacks they install) is exactly what the capabilities declare; and every operation
// the Python sandbox names is one the host dispatches for Python.

/** An op by the way it crosses: `op` (startOp, opSync), `native` (node8's native calls), `callback` (a host callback). */
type OpKey = `${'op' | 'native' | 'callback'}:${string}`;

/** The ops a capability's ops.ts declares: the keys of its `*_OPS` and `*_CALLS` tables, and the methods of its `*Callbacks` interfaces (types only, read from the source). */
function declaredOps(name: string): Set<OpKey> {
  const out = new Set<OpKey>();
  const source = path.join(CAPABILITIES_DIR, name, 'ops.ts');
  if (!existsSync(source)) return out;
  const compiled = require(path.join(ROOT, 'dist', 'engine', 'capabilities', name, 'ops.js')) as Record<string, unknown>;
  for (const [exported, value] of Object.entries(compiled)) {
    const kind = /_OPS$/.test(exported) ? 'op' : /_CALLS$/.test(exported) ? 'native' : undefined;
    if (kind && typeof value === 'object' && value !== null) for (const op of Object.keys(value)) out.add(`${kind}:${op}`);
  }
  for (const [, body] of readFileSync(source, 'utf8').matchAll(/export interface \w+Callbacks \{([\s\S]*?)\n\}/g)) {
    for (const [, method] of body!.matchAll(/^ {2}(\w+)\(/gm)) out.add(`callback:${method}`);
  }
  return out;
}

/** The members the bridges install on the sandbox's host object (an isolate each, with no function: nothing is called). */
function installedCallbacks(): { node8: string[]; python: string[] } {
  const members = (install: (isolate: ivm.Isolate, context: ivm.Context) => void) => {
    const isolate = new ivm.Isolate({ memoryLimit: 16 });
    try {
      const context = isolate.createContextSync();
      install(isolate, context);
      return JSON.parse(context.evalSync(`JSON.stringify(Object.keys(globalThis.${HOST_GLOBAL}))`) as string) as string[];
    } finally {
      isolate.dispose();
    }
  };
  return {
    node8: members((isolate, context) => installNode8Bridge(isolate, context, { target: undefined, files: undefined })),
    python: members((isolate, context) => installPythonBridge(isolate, context, { target: undefined, files: undefined, timeoutMs: 1000 })),
  };
}

/** The host object's members that are the transport's own (HostBridge in engine/sandbox/protocol.ts), not a capability's. */
const TRANSPORT = new Set(['readModule', 'deliver', 'startOp', 'native', 'nativeOffThread', 'opSync']);

t.test("each manifest's ops are exactly the ops its ops.ts declares, each declared by one capability", async (t) => {
  const owner = new Map<OpKey, string>();
  for (const c of all) {
    const declared = declaredOps(c.name);
    const named = new Set(c.ops ?? []);
    for (const op of named)
      t.ok(
        [...declared].some((key) => key.endsWith(`:${op}`)),
        `${c.name}'s manifest names op ${op}: ${c.name}/ops.ts declares it`,
      );
    for (const key of declared) {
      const op = key.slice(key.indexOf(':') + 1);
      t.ok(named.has(op), `${c.name}/ops.ts declares ${key}: ${c.name}'s manifest names it`);
      t.notOk(owner.has(key), `${key} declared once (${c.name}${owner.has(key) ? ` and ${owner.get(key)}` : ''})`);
      owner.set(key, c.name);
    }
  }
});

t.test('what the host dispatches is exactly what the capabilities declare', async (t) => {
  const declared = new Set(all.flatMap((c) => [...declaredOps(c.name)]));
  const installed = installedCallbacks();
  const dispatched = new Set<OpKey>([
    // node8's `native` operation is the transport's: it carries a native call off the host's thread.
    ...Object.keys(NODE8_OPS)
      .filter((op) => op !== 'native')
      .map((op) => `op:${op}` as const),
    ...Object.keys(PYTHON_OPS).map((op) => `op:${op}` as const),
    ...Object.keys(NATIVE_CALLS).map((op) => `native:${op}` as const),
    ...[...installed.node8, ...installed.python].filter((name) => !TRANSPORT.has(name)).map((name) => `callback:${name}` as const),
  ]);
  for (const key of dispatched) t.ok(declared.has(key), `${key} is dispatched (host-ops.ts, ops.ts, the bridges): a capability's ops.ts declares it`);
  for (const key of declared) t.ok(dispatched.has(key), `${key} is declared: the host dispatches it`);
  t.ok(installed.python.includes('opSync') && !installed.python.includes('startOp'), "Python's bridge answers operations through opSync only");
});

t.test('every operation the Python sandbox names is one the host dispatches for Python', async (t) => {
  const sources = [
    ...readdirSync(path.join(ROOT, 'python', 'sandbox')).map((f) => path.join(ROOT, 'python', 'sandbox', f)),
    ...all.flatMap((c) => {
      const guest = path.join(CAPABILITIES_DIR, c.name, 'guest');
      return existsSync(guest) ? readdirSync(guest).map((f) => path.join(guest, f)) : [];
    }),
  ].filter((f) => /\.(py|ts)$/.test(f));
  const named = new Set<string>();
  for (const file of sources) {
    const text = readFileSync(file, 'utf8');
    for (const [, op] of text.matchAll(/\b(?:_?host_op|opSync)\(\s*['"](\w+)['"]/g)) named.add(op!);
  }
  t.ok(named.size >= 8, `found the Python sandbox's operations (${[...named].sort().join(', ')})`);
  for (const op of named) t.ok(Object.prototype.hasOwnProperty.call(PYTHON_OPS, op), `the Python sandbox names op ${op}: PYTHON_OPS has it`);
});
