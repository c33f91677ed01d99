import { existsSync, readdirSync } from 'node:fs';
import { builtinModules } from 'node:module';
import * as path from 'node:path';
import t from 'tap';
import type { Capability } from '../../engine/capabilities/capability';
import { BUILTIN_MODULES, CAPABILITIES, GLOBAL_TABLE, LIBRARIES, MODULE_TABLE } from '../../engine/capabilities/registry';
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
