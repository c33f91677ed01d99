// Makes the Python memory snapshot that every Python instance boots from. Run by the Python
// runtime in a child process (so Pyodide never loads into the server itself):
//   node python/make-snapshot.mjs <output file>
// The file is written aside and renamed into place, so a reader never sees half of it.
import { renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { loadPyodide } from 'pyodide';

const out = process.argv[2];
if (!out) {
  console.error('usage: node make-snapshot.mjs <output file>');
  process.exit(2);
}
// Pyodide finds its files from its own stack trace unless told; source-mapped stacks mislead it.
const indexURL = `${dirname(createRequire(import.meta.url).resolve('pyodide/package.json'))}/`;
const pyodide = await loadPyodide({ indexURL, _makeSnapshot: true, jsglobals: {}, env: { HOME: '/function' } });
// Modules islet's runtime and most handlers use, imported once here instead of at every boot.
pyodide.runPython(
  'import base64, builtins, datetime, importlib, json, logging, math, os, random, re, sys, time, traceback, types, urllib.parse',
);
const snapshot = pyodide.makeMemorySnapshot();
const tmp = `${out}.${process.pid}.tmp`;
writeFileSync(tmp, snapshot);
renameSync(tmp, out);
