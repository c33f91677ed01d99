#!/usr/bin/env node
// Builds islet: compiles the TypeScript host code into dist/, bundles with esbuild the code
// that runs inside isolates (the two runtimes, one script each, and islet's libraries), and the web console.
'use strict';
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const esbuild = require('esbuild');
const { buildConsole } = require('./build-console');

const root = path.resolve(__dirname, '..');
const bin = (name) => path.join(root, 'node_modules', '.bin', name);

function run(cmd, args) {
  try {
    execFileSync(cmd, args, { cwd: root, stdio: 'inherit' });
  } catch {
    console.error(`build failed: ${path.basename(cmd)} ${args.join(' ')}`);
    process.exit(1);
  }
}

// Each step says what it builds as it starts (npm install runs this as its prepare step, and a
// silent minute on a loaded machine looked like a hang), and the whole build its time at the end.
const started = Date.now();
const step = (what) => console.log(`islet build: ${what}`);

step('compiling the TypeScript (the server, the CLI, the tests)');
run(bin('tsc'), ['-p', 'tsconfig.json']);
removeStaleTests();
step('type-checking the code that runs inside isolates, and the console');
run(bin('tsc'), ['-p', 'engine/sandbox/tsconfig.json']);
run(bin('tsc'), ['-p', 'python/sandbox/tsconfig.json']);
run(bin('tsc'), ['-p', 'console/tsconfig.json']);

const { LIBRARY_BUNDLE_GLOBAL } = require(path.join(root, 'dist', 'engine', 'sandbox', 'library-names.js'));
// The libraries, Node's module names and the tables of the runtimes: derived from the capabilities' manifests.
const { LIBRARIES, BUILTIN_MODULES, guestConstants } = require(path.join(root, 'dist', 'engine', 'capabilities', 'registry.js'));

// Minified because every isolate keeps its own copy of a script's source when the host compiles it
// (the runtimes), and a library's compiled code is per isolate too: each kilobyte of a runtime is a
// megabyte across 1,000 warm functions. Names are kept (class and function names are visible to
// user code); islet's frames never show in user stacks.
const common = {
  bundle: true,
  format: 'iife',
  target: 'es2022',
  legalComments: 'none',
  minify: true,
  keepNames: true,
  logLevel: 'warning',
  define: guestConstants(),
};

async function main() {
  step('bundling the runtimes and libraries that run inside isolates');
  // The runtimes that run inside isolates.
  for (const [entry, outfile] of [
    ['engine/node8/sandbox/index.ts', 'dist/engine/node8/sandbox.js'],
    ['python/sandbox/index.ts', 'dist/python/sandbox.js'],
  ]) {
    await esbuild.build({
      ...common,
      entryPoints: [path.join(root, entry)],
      outfile: path.join(root, outfile),
      platform: 'neutral',
      mainFields: ['main'],
      loader: { '.py': 'text' },
      plugins: [exodusBytesPlugin()],
    });
  }
  await Promise.all(
    LIBRARIES.map((library) =>
      esbuild.build({
        ...common,
        entryPoints: [path.join(root, library.entry)],
        outfile: path.join(root, 'dist', 'engine', 'sandbox', 'lib', `${library.name}.js`),
        globalName: LIBRARY_BUNDLE_GLOBAL,
        platform: 'browser',
        plugins: [libraryPlugin(library), exodusBytesPlugin()],
        ...(library.drop.length > 0 ? { drop: library.drop } : {}),
      }),
    ),
  );
  step('bundling the web console');
  const consoleFiles = await buildConsole(root);
  if (process.env.ISLET_BUILD_SIZES) for (const f of consoleFiles) console.log(`console ${f.file}: ${f.bytes} bytes, ${f.gzipped} gzipped`);
  makePythonSnapshot();
  console.log(`islet build: done in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

/**
 * Compiled test files whose source is gone (a test moved or removed): tsc leaves them in dist/,
 * and `npm test` runs every compiled test file it finds under dist/test.
 */
function removeStaleTests() {
  const dist = path.join(root, 'dist', 'test');
  if (!fs.existsSync(dist)) return;
  for (const file of fs.readdirSync(dist, { recursive: true })) {
    const match = /^(.*\.test)\.js$/.exec(file);
    if (!match || fs.existsSync(path.join(root, 'test', `${match[1]}.ts`))) continue;
    for (const suffix of ['.js', '.js.map', '.d.ts']) fs.rmSync(path.join(dist, `${match[1]}${suffix}`), { force: true });
  }
}

/**
 * Python's memory snapshot, which every Python interpreter boots from, made here once (for this
 * Pyodide and islet's Python) instead of by each server at its first Python deploy, which took
 * 13 s of a new user's first deploy. A failure here is not the build's: a server makes it then.
 */
function makePythonSnapshot() {
  const { PREBUILT_SNAPSHOT_DIR, SNAPSHOT_MAKER, snapshotName } = require(path.join(root, 'dist', 'python', 'snapshot-name.js'));
  const file = path.join(PREBUILT_SNAPSHOT_DIR, snapshotName());
  if (fs.existsSync(file)) return;
  step("making Python's memory snapshot, once (about 5 s of CPU)");
  fs.mkdirSync(PREBUILT_SNAPSHOT_DIR, { recursive: true });
  try {
    execFileSync(process.execPath, [SNAPSHOT_MAKER, file], { cwd: root, stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, NODE_OPTIONS: '' } });
  } catch (err) {
    console.log(
      `islet build: could not make Python's snapshot (a server makes it at its first Python deploy): ${
        String(err.stderr || err.message)
          .trim()
          .split('\n')[0]
      }`,
    );
  }
}

/**
 * A library's imports of Node's built-in modules are left to the runtime's `require` (each
 * built-in is a library of its own, evaluated once), so no library carries another's copy:
 * - `node:x` and `x` become the built-in; so does `x/` (the spelling packages use for the npm
 *   polyfill of a built-in) inside the libraries of Node's modules, except in the one that provides
 *   `x`, where `x/` is the package;
 * - packages that only stand in for a platform global (abort-controller) use islet's global;
 * - unenv's "not implemented" helpers are islet's own (engine/capabilities/node/guest/not-implemented.ts).
 */
function libraryPlugin(library) {
  const own = library.name.startsWith('node/') ? library.name.slice(5) : undefined;
  // Built-ins a library provides itself besides its own (its manifest's `bundles`): its modules
  // import them from their sources, not from the runtime (which would load the same library again
  // while it loads).
  const bundled = library.bundles;
  return {
    name: 'islet-library',
    setup(build) {
      build.onResolve({ filter: /^[a-z_]+(\/[a-z_]+)?\/?$|^node:/ }, async (args) => {
        const id = args.path.startsWith('node:') ? args.path.slice(5) : args.path;
        const bare = id.replace(/\/$/, '');
        if (!BUILTIN_MODULES.has(bare)) return undefined;
        if (bundled[bare]) return build.resolve(bundled[bare], { kind: args.kind, resolveDir: args.resolveDir });
        // `x/` names the npm package: a library of Node's modules takes the built-in instead
        // (except its own package); other libraries bundle the package.
        if (id.endsWith('/') && (own === undefined || bare === own)) return undefined;
        return { path: bare, external: true };
      });
      build.onResolve({ filter: /^abort-controller$/ }, () => ({ path: path.join(root, 'engine', 'capabilities', 'node', 'guest', 'abort-controller.ts') }));
      build.onResolve({ filter: /_internal\/utils\.mjs$/ }, (args) =>
        /unenv/.test(args.resolveDir) ? { path: path.join(root, 'engine', 'capabilities', 'node', 'guest', 'not-implemented.ts') } : undefined,
      );
    },
  };
}

// Its real path: node_modules may be a link, and esbuild resolves links.
const EXODUS_BYTES = require('node:fs').realpathSync(path.join(root, 'node_modules', '@exodus', 'bytes'));

/**
 * @exodus/bytes (the encodings of TextDecoder and the UTF-8 codec) always in its pure JavaScript
 * form: its platform file would take an isolate's TextEncoder/TextDecoder (islet's, made from this
 * very package) or its Buffer (the npm package, not Node's) as native, so islet's own file
 * (engine/sandbox/guest/bytes-platform.ts) answers that there is none. Its modules that read
 * `globalThis.Buffer` find none either: reading it would load the buffer library. Its files are
 * taken by their paths, its internal ones (`@exodus/bytes/fallback/…`, not in the package's
 * exports) included.
 */
function exodusBytesPlugin() {
  const inPackage = (dir) => dir.startsWith(EXODUS_BYTES + path.sep) || dir === EXODUS_BYTES;
  return {
    name: 'exodus-bytes',
    setup(build) {
      // Its files as they are: the package's `browser` field (libraries are built for the browser
      // platform) would swap in its native-only versions.
      build.onResolve({ filter: /^(\.\.?\/|@exodus\/bytes\/)/ }, (args) => {
        const fromPackage = args.path.startsWith('@exodus/bytes/');
        if (!fromPackage && !inPackage(args.resolveDir)) return undefined;
        const file = fromPackage ? path.join(EXODUS_BYTES, args.path.slice('@exodus/bytes/'.length)) : path.resolve(args.resolveDir, args.path);
        const name = path.relative(EXODUS_BYTES, file).split(path.sep).join('/');
        if (/^fallback\/platform(\.native)?\.js$/.test(name)) return { path: path.join(root, 'engine', 'sandbox', 'guest', 'bytes-platform.ts') };
        if (name === 'fallback/utf8.auto.js') return { path: path.join(EXODUS_BYTES, 'fallback', 'utf8.js') };
        return { path: file };
      });
      build.onLoad({ filter: /\.js$/ }, async (args) => {
        if (!inPackage(path.dirname(args.path))) return undefined;
        const text = await require('node:fs/promises').readFile(args.path, 'utf8');
        const contents = text.replace(/\bglobalThis\.Buffer\b/g, 'undefined').replace(/const \{ Buffer, ([^}]*)\} = globalThis/g, 'const Buffer = undefined; const { $1} = globalThis');
        return { contents, loader: 'js', resolveDir: path.dirname(args.path) };
      });
    },
  };
}

main().catch(() => {
  console.error('build failed: esbuild');
  process.exit(1);
});
