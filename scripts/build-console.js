// Builds the web console (console/) into dist/console: one page, its script and its styles, named
// by their content so that browsers keep them until they change. The charts' library is a chunk of
// its own, loaded by the pages that draw charts. The server serves these files at /console/.
'use strict';
const { mkdirSync, readFileSync, rmSync, writeFileSync, copyFileSync } = require('node:fs');
const path = require('node:path');
const { gzipSync } = require('node:zlib');
const esbuild = require('esbuild');

async function buildConsole(root) {
  const source = path.join(root, 'console');
  const out = path.join(root, 'dist', 'console');
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  const result = await esbuild.build({
    entryPoints: { app: path.join(source, 'src', 'main.tsx') },
    outdir: out,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'browser',
    target: ['chrome109', 'firefox115', 'safari16'],
    jsx: 'automatic',
    jsxImportSource: 'preact',
    entryNames: '[name]-[hash]',
    chunkNames: '[name]-[hash]',
    minify: true,
    legalComments: 'none',
    metafile: true,
    logLevel: 'warning',
  });
  const outputs = Object.keys(result.metafile.outputs).map((file) => path.basename(file));
  const entry = outputs.find((f) => /^app-.*\.js$/.test(f));
  const css = outputs.find((f) => /^app-.*\.css$/.test(f));
  const page = readFileSync(path.join(source, 'index.html'), 'utf8').replace('{{js}}', entry).replace('{{css}}', css);
  writeFileSync(path.join(out, 'index.html'), page);
  copyFileSync(path.join(source, 'icon.svg'), path.join(out, 'icon.svg'));
  return sizes(out, ['index.html', ...outputs.filter((f) => f.endsWith('.js') || f.endsWith('.css'))]);
}

/** Each file's size and gzipped size, in bytes. */
function sizes(dir, files) {
  return files.map((file) => {
    const bytes = readFileSync(path.join(dir, file));
    return { file, bytes: bytes.length, gzipped: gzipSync(bytes, { level: 9 }).length };
  });
}

module.exports = { buildConsole };
