/**
 * islet's libraries for functions (Buffer, fetch's Headers, URL), each evaluated on first use. Their
 * text is not part of this runtime: the host puts one shared copy of it on the global before the
 * runtime runs (see engine/isolate/libraries.ts), and it is taken from there at once.
 */
import { LIBRARY_NAMES, libraryGlobal, type LibraryName } from '../library-names';

interface Libraries extends Record<LibraryName, unknown> {
  buffer: typeof import('buffer');
  fetch: typeof import('whatwg-fetch');
  url: typeof import('whatwg-url');
}

const g = globalThis as unknown as Record<string, unknown>;
const sources = new Map<LibraryName, unknown>();
for (const name of LIBRARY_NAMES) {
  sources.set(name, g[libraryGlobal(name)]);
  delete g[libraryGlobal(name)];
}
const loaded: Partial<Libraries> = {};

export function library<K extends LibraryName>(name: K): Libraries[K] {
  let lib = loaded[name];
  if (lib === undefined) {
    const source = sources.get(name);
    if (typeof source !== 'string') throw new Error(`islet's ${name} library is not available`);
    // Indirect eval of the string as it is: a copy (a concatenation) would cost every isolate the
    // library's size again.
    const indirectEval = eval;
    lib = loaded[name] = indirectEval(source) as Libraries[K];
  }
  return lib!;
}
