/**
 * islet's libraries, each evaluated on first use. Their text is not part of a runtime: the host
 * puts one shared copy of each on the global before the runtime runs (see
 * engine/isolate/libraries.ts), and it is taken from there at once. A library's text is a function
 * of the `require` that gives it the built-in modules it uses (set by the runtime).
 */
import { libraryGlobal, type LibraryName } from '../library-names';
import { indirectEval } from './intrinsics';

type LibraryText = (require: (id: string) => unknown) => Record<string, unknown>;

const g = globalThis as unknown as Record<string, unknown>;
// Kept in objects without a prototype, not Maps: a Map's methods are Map.prototype's, which user
// code may replace, and a replaced `get` could answer a text of its own, to be run with the
// libraries' `require`.
const sources = { __proto__: null } as Partial<Record<LibraryName, unknown>>;
for (const name of ISLET_LIBRARY_NAMES.split(',') as LibraryName[]) {
  sources[name] = g[libraryGlobal(name)];
  delete g[libraryGlobal(name)];
}
const loaded = { __proto__: null } as Partial<Record<LibraryName, Record<string, unknown>>>;
const loading = { __proto__: null } as Partial<Record<LibraryName, true>>;
let libraryRequire: (id: string) => unknown = (id) => {
  throw new Error(`islet's libraries cannot require '${id}' here`);
};

/** Sets what libraries get for `require` (the runtime's built-in modules). */
export function setLibraryRequire(require: (id: string) => unknown): void {
  libraryRequire = require;
}

/** The exports of a library, evaluated on first use. */
export function library<T = Record<string, unknown>>(name: LibraryName): T {
  let lib = loaded[name];
  if (lib === undefined) {
    const source = sources[name];
    if (typeof source !== 'string') throw new Error(`islet's ${name} library is not available`);
    if (loading[name]) throw new Error(`islet's ${name} library needs itself while it loads`);
    // Indirect eval of the string as it is: a copy (a concatenation) would cost every isolate the
    // library's size again. The eval taken when the runtime started: one user code put on the
    // global object would be handed the library and return what gets the libraries' `require`.
    loading[name] = true;
    try {
      lib = (indirectEval(source) as LibraryText)(libraryRequire);
    } finally {
      delete loading[name];
    }
    loaded[name] = lib;
  }
  return lib as T;
}

/**
 * Whether a library is being evaluated now. Code in it that looks at a global the library itself
 * provides (feature detection) must find none yet, rather than start the library again.
 */
export function isLibraryLoading(name: LibraryName): boolean {
  return loading[name] === true;
}
