// Makes the Python memory snapshot that every Python instance boots from. Run by the Python
// runtime in a child process (so Pyodide never loads into the server itself):
//   node python/make-snapshot.mjs <output file>
// The file is written aside and renamed into place, so a reader never sees half of it.
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
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
// http.client and urllib.request (which requests and urllib3 build on) took 0.1-0.7 s to import
// at a cold start; here they cost about 1 MB of every interpreter's snapshot memory instead.
pyodide.runPython('import base64, builtins, datetime, http.client, importlib, json, logging, math, os, random, re, sys, time, traceback, types, urllib.parse, urllib.request');
// islet's Python side, loaded here once instead of at every boot (it took 200-500 ms of each): the
// runtime (runtime.py), and the sockets and standard-library parts it installs (net.py, fetch's guest
// half in Python: engine/capabilities/fetch/guest/net.py; stdlib.py).
// Nothing of a host is in them until _islet_init hands them the bridge.
const source = (file) => readFileSync(new URL(file, import.meta.url), 'utf8');
pyodide.runPython(source('./sandbox/runtime.py'));
pyodide.globals.get('_islet_boot')(source('../engine/capabilities/fetch/guest/net.py'), source('./sandbox/stdlib.py'));
const snapshot = pyodide.makeMemorySnapshot();
const tmp = `${out}.${process.pid}.tmp`;
writeFileSync(tmp, snapshot);
renameSync(tmp, out);
