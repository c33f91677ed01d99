import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { gzipSync } from 'node:zlib';
import type { HttpRequest, HttpResponse, TemplatedApp } from '@trufflesuite/uws-js-unofficial';
import { type Connections, writeResponse, type ResponseState } from './respond';

/** Where scripts/build.js puts the console's files (dist/console, beside dist/http). */
const CONSOLE_DIR = path.join(__dirname, '..', 'console');

/**
 * Only the console's own files run, styles and scripts alike; it talks to this server only; no page
 * may frame it, and it sends no form anywhere. Every output of a function is rendered as text.
 */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const SECURITY_HEADERS: Record<string, string> = {
  'content-security-policy': CONSOLE_CSP,
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
};

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
};

interface ConsoleFile {
  type: string;
  bytes: Buffer;
  /** The gzipped bytes, when smaller. */
  gzipped: Buffer | undefined;
  etag: string;
  cache: string;
}

/**
 * The web console at /console/: static files built by scripts/build.js, read, compressed and kept
 * in memory on the first request, so a server whose console is never opened never reads them.
 */
export function addConsoleRoutes(app: TemplatedApp, connections: Connections): void {
  let files: Map<string, ConsoleFile> | undefined;
  app.get('/console', (res) => {
    const state = connections.watch(res);
    writeResponse(res, state, 308, { location: '/console/', ...SECURITY_HEADERS }, '', false);
  });
  app.get('/console/*', (res, req) => {
    const state = connections.watch(res);
    files ??= loadFiles(CONSOLE_DIR);
    serveFile(res, req, state, files);
  });
}

function serveFile(res: HttpResponse, req: HttpRequest, state: ResponseState, files: Map<string, ConsoleFile>): void {
  const name = req.getUrl().slice('/console/'.length) || 'index.html';
  const file = files.get(name);
  if (!file) {
    const message = files.size === 0 ? 'the console is not built: run npm run build' : `no console file ${name}`;
    writeResponse(res, state, 404, { 'content-type': 'text/plain; charset=utf-8', ...SECURITY_HEADERS }, message, false);
    return;
  }
  const headers: Record<string, string> = { 'content-type': file.type, etag: file.etag, 'cache-control': file.cache, vary: 'accept-encoding', ...SECURITY_HEADERS };
  if (req.getHeader('if-none-match') === file.etag) {
    writeResponse(res, state, 304, headers, '', true);
    return;
  }
  const gzip = file.gzipped !== undefined && /\bgzip\b/.test(req.getHeader('accept-encoding'));
  if (gzip) headers['content-encoding'] = 'gzip';
  writeResponse(res, state, 200, headers, gzip ? file.gzipped! : file.bytes, false);
}

/** Reads every built file; names with a content hash (`app-3F2A….js`) are cached for good, the page itself never. */
function loadFiles(dir: string): Map<string, ConsoleFile> {
  const files = new Map<string, ConsoleFile>();
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return files;
  }
  for (const name of names) {
    const type = TYPES[path.extname(name)];
    if (!type) continue;
    const bytes = readFileSync(path.join(dir, name));
    const gzipped = gzipSync(bytes, { level: 9 });
    files.set(name, {
      type,
      bytes,
      gzipped: gzipped.length < bytes.length ? gzipped : undefined,
      etag: `"${createHash('sha256').update(bytes).digest('base64url').slice(0, 22)}"`,
      cache: /-[A-Z0-9]{8}\.(js|css)$/.test(name) ? 'public, max-age=31536000, immutable' : 'no-cache',
    });
  }
  return files;
}
