import { buildFunction } from '../engine/node8/build';

/** What a node8 deploy leaves out of the upload, and how to tell. */
export interface NodeModulesFilter {
  /** Whether a file or folder (relative POSIX path) of the function folder is uploaded. */
  keep(rel: string, isDir: boolean): boolean;
}

/** `require(x)` of a name only known when it runs (esbuild leaves it as it is, or as `__require(x)`). */
const COMPUTED_REQUIRE = /\b(?:__)?require\(\s*[^\s"'`)]/;

/**
 * The packages of node_modules a node8 function uses: those the bundle esbuild makes of it holds a
 * file of, or whose file a `require.resolve` names, each kept whole (a package may read its own
 * files at run time through `__dirname` and node8's read-only fs). Every other package, and files
 * directly under node_modules (npm's `.package-lock.json`), is left out: a 48 MB node_modules the
 * code never imports was stored with every version. The server builds the same bundle at deploy,
 * so what it does not find here it would not find there either.
 *
 * Undefined (upload everything) when the build fails (the server then says why, as it always did)
 * or when the code requires a name computed at run time, which only a run could tell.
 */
export async function nodeModulesFilter(dir: string, entry: string): Promise<NodeModulesFilter | undefined> {
  let build;
  try {
    build = await buildFunction(dir, entry);
  } catch {
    return undefined;
  }
  if (COMPUTED_REQUIRE.test(build.source)) return undefined;
  const used = new Set<string>();
  for (const input of build.inputs) {
    const root = packageRoot(input);
    if (root) used.add(root);
  }
  return {
    keep: (rel, isDir) => {
      if (!/(^|\/)node_modules\//.test(rel)) return true;
      // A folder on the way to a package kept, or in one.
      if (isDir) return [...used].some((root) => root === rel || root.startsWith(`${rel}/`) || rel.startsWith(`${root}/`));
      const root = packageRoot(rel);
      return root !== undefined && used.has(root);
    },
  };
}

/**
 * The folder of the innermost package a path of node_modules is in (`node_modules/a`,
 * `node_modules/@s/b`, `node_modules/a/node_modules/c`); undefined outside node_modules or for a
 * file right under it.
 */
export function packageRoot(rel: string): string | undefined {
  const parts = rel.split('/');
  const at = parts.lastIndexOf('node_modules');
  if (at < 0) return undefined;
  const scoped = parts[at + 1]?.startsWith('@');
  const length = at + (scoped ? 3 : 2);
  // The package's folder, and at least one more part: a file in it.
  if (parts.length <= length) return undefined;
  return parts.slice(0, length).join('/');
}
