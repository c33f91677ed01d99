#!/usr/bin/env node
// Builds islet: compiles the TypeScript host code into dist/ and bundles the code that
// runs inside every node8 isolate (engine/node8/sandbox) into one script with esbuild.
'use strict';
const { execFileSync } = require('node:child_process');
const path = require('node:path');

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

run(bin('tsc'), ['-p', 'tsconfig.json']);
run(bin('tsc'), ['-p', 'engine/sandbox/tsconfig.json']);
run(bin('tsc'), ['-p', 'python/sandbox/tsconfig.json']);
// The runtimes that run inside isolates: one script each, with their libraries. Minified because
// every isolate keeps its own copy of the script's source (V8 compiles functions lazily from it):
// each kilobyte here is a megabyte of memory across 1,000 warm functions. Names are kept (class
// and function names are visible to user code); runtime frames never show in user stacks.
// islet's libraries for functions, evaluated in an isolate on first use (engine/isolate/libraries.ts).
const { LIBRARY_NAMES, LIBRARY_BUNDLE_GLOBAL } = require(path.join(root, 'dist', 'engine', 'sandbox', 'library-names.js'));
for (const [entry, outfile, globalName] of [
  ['engine/node8/sandbox/index.ts', 'dist/engine/node8/sandbox.js'],
  ...LIBRARY_NAMES.map((name) => [`engine/sandbox/lib/${name}.ts`, `dist/engine/sandbox/lib/${name}.js`, LIBRARY_BUNDLE_GLOBAL]),
  ['python/sandbox/index.ts', 'dist/python/sandbox.js'],
]) {
  require('esbuild').buildSync({
    entryPoints: [path.join(root, entry)],
    outfile: path.join(root, outfile),
    globalName,
    bundle: true,
    format: 'iife',
    platform: 'neutral',
    mainFields: ['main'],
    target: 'es2022',
    loader: { '.py': 'text' },
    legalComments: 'none',
    minify: true,
    keepNames: true,
    logLevel: 'warning',
  });
}
