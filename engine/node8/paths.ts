/**
 * Paths inside a function's files, shared by the sandbox's module loader and the host's fs: POSIX
 * paths relative to the function's root, which no path may climb above.
 */

/** Joins `rel` onto the folder `base` ('' is the root) and normalises; undefined when it climbs above the root. */
export function joinWithinRoot(base: string, rel: string): string | undefined {
  const parts = base === '' ? [] : base.split('/');
  for (const part of rel.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') {
      if (parts.length === 0) return undefined;
      parts.pop();
    } else parts.push(part);
  }
  return parts.join('/');
}
