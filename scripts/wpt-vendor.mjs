#!/usr/bin/env node
// Copies islet's subset of the web-platform-tests into test/wpt/ from a checkout of
// github.com/web-platform-tests/wpt: node scripts/wpt-vendor.mjs <wpt checkout> <its commit>.
// The subset is each `.any.js` test that runs in a worker-like global (islet's functions have no
// document) under DIRECTORIES, minus EXCLUDED, with the scripts their `// META: script=` lines
// name, testharness.js and the licence, and test/wpt/manifest.json: the commit, and each test with
// its directory and scripts in order (what test/helpers/wpt.ts runs).
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';

/** The directories whose tests count (each a row of `npm run wpt`), and the files taken from each. */
const DIRECTORIES = {
  encoding: '**',
  url: '**',
  streams: '**',
  compression: '**',
  'fetch/api/headers': '**',
  'fetch/api/response': '**',
  'dom/events': '**',
  'dom/abort': '**',
  'FileAPI/blob': '**',
  'html/webappapis/atob': '**',
  'html/webappapis/structured-clone': '**',
  WebCryptoAPI: [
    'getRandomValues.any.js',
    'randomUUID.https.any.js',
    'historical.any.js',
    'digest/digest.https.any.js',
    'sign_verify/hmac.https.any.js',
    'sign_verify/ecdsa.https.any.js',
    'sign_verify/eddsa_curve25519.https.any.js',
    'encrypt_decrypt/aes_cbc.https.any.js',
    'encrypt_decrypt/aes_ctr.https.any.js',
    'encrypt_decrypt/aes_gcm.https.any.js',
    'import_export/symmetric_importKey.https.any.js',
  ],
};
/** Data files the tests fetch (test/helpers/wpt.ts answers a fetch of a vendored file itself). */
const DATA = ['url/resources/urltestdata.json', 'url/resources/urltestdata-javascript-only.json', 'url/resources/setters_tests.json', 'fetch/data-urls/resources/base64.json'];
/** idlharness needs the WebIDL parser and a document; the rest are for ShadowRealm only. */
const EXCLUDED = /idlharness|shadowrealm/;

const [source, commit] = process.argv.slice(2);
if (!source || !commit) {
  console.error('usage: node scripts/wpt-vendor.mjs <wpt checkout> <commit>');
  process.exit(2);
}
const target = path.join(path.dirname(new URL(import.meta.url).pathname), '..', 'test', 'wpt');

function anyFiles(dir) {
  const out = [];
  for (const entry of readdirSync(path.join(source, dir), { withFileTypes: true })) {
    const rel = `${dir}/${entry.name}`;
    if (entry.isDirectory()) out.push(...anyFiles(rel));
    else if (entry.name.endsWith('.any.js')) out.push(rel);
  }
  return out;
}

/** A test's `// META: key=value` lines. */
function metaOf(text) {
  const meta = [];
  for (const line of text.split('\n')) {
    const m = /^\/\/ META: (\w+)=(.*)$/.exec(line.trim());
    if (m) meta.push([m[1], m[2].trim()]);
    else if (line.trim() !== '' && !line.startsWith('//')) break;
  }
  return meta;
}

/** Whether a test runs in a worker's global (the default set is window and dedicated worker). */
function runsInWorker(meta) {
  const globals = meta.filter(([key]) => key === 'global').map(([, value]) => value);
  if (globals.length === 0) return true;
  return globals
    .join(',')
    .split(',')
    .some((g) => /^(worker|dedicatedworker|jsshell)/.test(g.trim()));
}

const files = new Set(['resources/testharness.js', 'LICENSE.md', ...DATA]);
const tests = [];
for (const [dir, pick] of Object.entries(DIRECTORIES)) {
  const candidates = pick === '**' ? anyFiles(dir) : pick.map((f) => `${dir}/${f}`);
  for (const test of candidates.sort()) {
    if (EXCLUDED.test(test)) continue;
    const meta = metaOf(readFileSync(path.join(source, test), 'utf8'));
    if (!runsInWorker(meta)) continue;
    const scripts = meta.filter(([key]) => key === 'script').map(([, value]) => (value.startsWith('/') ? value.slice(1) : path.posix.join(path.posix.dirname(test), value)));
    if (scripts.some((s) => !existsSync(path.join(source, s)))) continue;
    for (const s of scripts) files.add(s);
    files.add(test);
    tests.push({ file: test, directory: dir, scripts });
  }
}
for (const dir of [...Object.keys(DIRECTORIES), 'resources', 'common', 'fetch']) rmSync(path.join(target, dir.split('/')[0]), { recursive: true, force: true });
let bytes = 0;
for (const file of files) {
  mkdirSync(path.dirname(path.join(target, file)), { recursive: true });
  cpSync(path.join(source, file), path.join(target, file));
  bytes += statSync(path.join(source, file)).size;
}
writeFileSync(path.join(target, 'manifest.json'), `${JSON.stringify({ commit, directories: Object.keys(DIRECTORIES), data: DATA, tests }, null, 1)}\n`);
console.log(`${tests.length} tests, ${files.size} files, ${(bytes / 2 ** 20).toFixed(2)} MB into ${target}`);
