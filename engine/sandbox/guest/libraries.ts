/**
 * islet's libraries, each evaluated on first use. Their text is not part of a runtime: the host
 * puts one shared copy of each on the global before the runtime runs (see
 * engine/isolate/libraries.ts), and it is taken from there at once. A library's text is a function
 * of the `require` that gives it the built-in modules it uses (set by the runtime).
 */
import { LIBRARY_NAMES, libraryGlobal, type LibraryName } from '../library-names';

type LibraryText = (require: (id: string) => unknown) => Record<string, unknown>;

const g = globalThis as unknown as Record<string, unknown>;
const sources = new Map<LibraryName, unknown>();
for (const name of LIBRARY_NAMES) {
  sources.set(name, g[libraryGlobal(name)]);
  delete g[libraryGlobal(name)];
}
const loaded = new Map<LibraryName, Record<string, unknown>>();
const loading = new Set<LibraryName>();
let libraryRequire: (id: string) => unknown = (id) => {
  throw new Error(`islet's libraries cannot require '${id}' here`);
};

/** Sets what libraries get for `require` (the runtime's built-in modules). */
export function setLibraryRequire(require: (id: string) => unknown): void {
  libraryRequire = require;
}

/** The exports of a library, evaluated on first use. */
export function library<T = Record<string, unknown>>(name: LibraryName): T {
  let lib = loaded.get(name);
  if (lib === undefined) {
    const source = sources.get(name);
    if (typeof source !== 'string') throw new Error(`islet's ${name} library is not available`);
    if (loading.has(name)) throw new Error(`islet's ${name} library needs itself while it loads`);
    // Indirect eval of the string as it is: a copy (a concatenation) would cost every isolate the
    // library's size again.
    const indirectEval = eval;
    loading.add(name);
    try {
      lib = (indirectEval(source) as LibraryText)(libraryRequire);
    } finally {
      loading.delete(name);
    }
    loaded.set(name, lib);
  }
  return lib as T;
}

/**
 * Whether a library is being evaluated now. Code in it that looks at a global the library itself
 * provides (feature detection) must find none yet, rather than start the library again.
 */
export function isLibraryLoading(name: LibraryName): boolean {
  return loading.has(name);
}
