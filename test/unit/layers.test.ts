import { existsSync, readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import t from 'tap';

// The layers and which may depend on which (README, "How it runs"), checked on the sources'
// imports: a new import of an engine module a layer is not listed for fails here, so reaching into
// the engine's internals is a decision made in this file, not an accident.

const ROOT = path.resolve(__dirname, '..', '..', '..');

interface Rule {
  /** The engine's modules (paths under engine/, without extension) the layer may import. */
  engine: readonly string[] | 'all';
  /** The other layers it may import (the engine's modules are governed by `engine`). */
  layers: readonly string[];
}

const LAYERS = ['engine', 'http', 'cli', 'console', 'supervisor', 'python', 'sdk'] as const;

const RULES: Record<'engine' | 'python' | 'http' | 'cli' | 'console' | 'supervisor', Rule> = {
  // The engine, and the Python runtime's host half beside it, know no layer above them.
  engine: { engine: 'all', layers: [] },
  python: { engine: 'all', layers: [] },
  // http/ holds the engine by engine/api.ts (CallApi, ManagementApi and the types they name); besides
  // it, only modules that hold no engine state: errors and their answers, ids and names, the API's
  // shapes, how records are shown, body and response helpers, the figures' pure functions and the
  // server's own log (and LOG_LEVELS, from logs.ts).
  http: {
    engine: [
      'api',
      'body-stream',
      'describe',
      'error-answer',
      'errors',
      'logs',
      'manifest',
      'names',
      'request-body',
      'request-id',
      'response',
      'server-log',
      'stats/function-stats',
      'stats/history',
      'wire',
    ],
    layers: [],
  },
  // The console is built for the browser: the API's shapes and log formatting, nothing else.
  console: { engine: ['log-text', 'wire'], layers: [] },
  // The CLI talks to the management API; it shares the manifest's and jobs' vocabulary, bundles
  // functions as the server does (node8/build), reads a store for `islet store`, and starts `serve`.
  cli: {
    engine: ['jobs/background', 'jobs/cron', 'jobs/records', 'log-text', 'logs', 'manifest', 'node8/build', 'store/store', 'wire'],
    layers: ['supervisor'],
  },
  // The composition root: it picks the store and the runtimes, opens the Engine and serves it over http/.
  supervisor: {
    engine: [
      'engine',
      'errors',
      'limits',
      'logs',
      'node-flags',
      'node8/runtime',
      'server-log',
      'store/coordinator',
      'store/file/queue-broker',
      'store/file/store',
      'store/postgres/store',
      'store/store',
    ],
    layers: ['http', 'python'],
  },
};

/** The folder a layer's sources are in. */
const SOURCES: Record<keyof typeof RULES, string> = { engine: 'engine', python: 'python', http: 'http', cli: 'cli', console: 'console/src', supervisor: 'supervisor' };

function sourceFiles(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((e) => {
    const rel = `${dir}/${e.name}`;
    if (e.isDirectory()) return sourceFiles(rel);
    return /\.tsx?$/.test(e.name) && !e.name.endsWith('.d.ts') ? [rel] : [];
  });
}

/** The relative module paths a file imports (import, export … from, import(), require()), resolved to paths from the root without extension. */
function importsOf(file: string): string[] {
  const text = readFileSync(path.join(ROOT, file), 'utf8');
  const specifiers = [...text.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|\brequire\s*\(\s*|^import\s+)['"](\.{1,2}\/[^'"]*)['"]/gm)].map((m) => m[1]!);
  return specifiers.map((s) =>
    path
      .relative(ROOT, path.resolve(ROOT, path.dirname(file), s))
      .split(path.sep)
      .join('/')
      .replace(/\.(ts|tsx|js|mjs)$/, '')
      .replace(/\/index$/, ''),
  );
}

function layerOf(module: string): string | undefined {
  const first = module.split('/')[0];
  return (LAYERS as readonly string[]).includes(first!) ? first : undefined;
}

for (const [layer, rule] of Object.entries(RULES) as [keyof typeof RULES, Rule][]) {
  t.test(`${layer}/ imports only what its layer may`, async (t) => {
    const files = sourceFiles(SOURCES[layer]);
    t.ok(files.length > 0, `${SOURCES[layer]} has sources`);
    for (const file of files) {
      for (const module of importsOf(file)) {
        const target = layerOf(module);
        if (target === undefined || target === layer) continue;
        if (target === 'engine') {
          const inner = module.slice('engine/'.length);
          if (rule.engine === 'all' || rule.engine.includes(inner)) continue;
          t.fail(`${file} imports ${module}: ${layer}/ may import of the engine only ${rule.engine.join(', ')} (test/unit/layers.test.ts)`);
        } else if (!rule.layers.includes(target)) {
          t.fail(`${file} imports ${module}: ${layer}/ may not depend on ${target}/`);
        }
      }
    }
    if (rule.engine !== 'all') for (const inner of rule.engine) t.ok(existsSync(path.join(ROOT, 'engine', `${inner}.ts`)), `engine/${inner}.ts exists`);
  });
}

t.test('http/ never holds the Engine class: engine.ts, engine-parts.ts and the engine index are out of its reach', async (t) => {
  const reaches = sourceFiles('http').flatMap((file) =>
    importsOf(file)
      .filter((m) => /^engine\/(engine|engine-parts|index)$|^engine$/.test(m))
      .map((m) => `${file} → ${m}`),
  );
  t.same(reaches, []);
});

t.test('a reach into the engine is caught (the scan sees the import forms the sources use)', async (t) => {
  t.same(
    importsOf('http/live-logs.ts')
      .filter((m) => m.startsWith('engine/'))
      .sort(),
    ['engine/api', 'engine/error-answer', 'engine/errors', 'engine/request-id'],
  );
  t.ok(importsOf('supervisor/compose.ts').includes('engine/engine'), "the composition root's import of the Engine is seen");
});
