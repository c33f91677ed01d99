import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';

// Apart from runtime.ts (which loads isolated-vm) so the build can name the snapshot it makes.

const PYODIDE_DIR = path.dirname(require.resolve('pyodide/package.json'));
export const SNAPSHOT_MAKER = path.resolve(__dirname, '..', '..', 'python', 'make-snapshot.mjs');
/** islet's Python side, which the snapshot holds (see make-snapshot.mjs). */
const SNAPSHOT_PYTHON = ['python/sandbox/runtime.py', 'engine/capabilities/fetch/guest/net.py', 'python/sandbox/stdlib.py'].map((file) => path.resolve(__dirname, '..', '..', file));

/**
 * Where the build (`npm install`'s prepare step) puts the snapshot it makes ahead, so that no
 * server makes it at its first Python deploy: that took 13 s of a new user's first deploy.
 */
export const PREBUILT_SNAPSHOT_DIR = path.join(__dirname, 'snapshots');

/** The snapshot's file name for this Pyodide version and snapshot recipe (the maker and the Python it loads). */
export function snapshotName(): string {
  const version = (JSON.parse(readFileSync(path.join(PYODIDE_DIR, 'package.json'), 'utf8')) as { version: string }).version;
  const recipe = createHash('sha256');
  for (const file of [SNAPSHOT_MAKER, ...SNAPSHOT_PYTHON]) recipe.update(readFileSync(file));
  return `python-${version}-${recipe.digest('hex').slice(0, 12)}.snapshot`;
}
