import type { LibraryName } from '../../sandbox/library-names';

/**
 * Looks `name` up in a table of `<name>:<library>[#<export>]` lines: the library and the export
 * (undefined when the line gives none). A table is one string, not an object: an object of fifty
 * keys would be made in every isolate, and most functions look up a few names or none.
 */
export function lookUpLibrary(table: string, name: string): [library: LibraryName, exported: string | undefined] | undefined {
  const at = table.indexOf(`\n${name}:`);
  if (at === -1) return undefined;
  const start = at + name.length + 2;
  const line = table.slice(start, table.indexOf('\n', start));
  const hash = line.indexOf('#');
  return hash === -1 ? [line as LibraryName, undefined] : [line.slice(0, hash) as LibraryName, line.slice(hash + 1)];
}
