import { cpSync, existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';

/**
 * The folders of a package and of everything it depends on, found as Node finds them (up the
 * node_modules folders from each package), for copying one package's tree out of a shared install.
 */
export function packageClosure(root: string, name: string): string[] {
  const found = new Set<string>();
  const visit = (dir: string) => {
    if (found.has(dir)) return;
    found.add(dir);
    const pkg = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as {
      dependencies?: Record<string, string>;
      optionalDependencies?: Record<string, string>;
      peerDependencies?: Record<string, string>;
    };
    for (const dep of Object.keys({ ...pkg.dependencies, ...pkg.optionalDependencies, ...pkg.peerDependencies })) {
      const at = resolvePackage(root, dir, dep);
      if (at) visit(at);
    }
  };
  const start = resolvePackage(root, root, name);
  if (!start) throw new Error(`${name} is not installed in ${root}`);
  visit(start);
  return [...found];
}

/** The folder of package `name` as seen from `fromDir` (nested node_modules first, then up to `root`). */
function resolvePackage(root: string, fromDir: string, name: string): string | undefined {
  for (let dir = fromDir; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'node_modules', name);
    if (existsSync(path.join(candidate, 'package.json'))) return candidate;
    if (dir === root || !dir.startsWith(root)) return undefined;
  }
}

/**
 * Copies package `name` and its dependencies from the install at `root` into `target/node_modules`,
 * at the same places; `as` renames the package itself (an npm alias such as node-fetch-v2).
 */
export function copyPackage(root: string, name: string, target: string, as = name): void {
  for (const dir of packageClosure(root, name)) {
    let rel = path.relative(root, dir);
    if (rel === path.join('node_modules', name)) rel = path.join('node_modules', as);
    cpSync(dir, path.join(target, rel), { recursive: true, dereference: false, filter: (src) => !src.includes(`${path.sep}.bin`) });
  }
}
