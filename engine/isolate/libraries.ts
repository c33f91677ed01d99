import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import ivm from 'isolated-vm';
import { LIBRARY_NAMES } from '../capabilities/registry';
import { LIBRARY_BUNDLE_GLOBAL, libraryGlobal, type LibraryName } from '../sandbox/library-names';
import { libraryFilename } from '../sandbox/protocol';

let copies: Map<LibraryName, { copy: ivm.ExternalCopy<string>; bytes: number }> | undefined;

/**
 * One copy of each library's text for the whole process. isolated-vm hands a string of 1 KB or more
 * to an isolate as an external string over the copy's own bytes, so every isolate shares these
 * instead of holding its own (a script compiled by the host is always copied). The text is a
 * function of the `require` that gives the library the built-in modules it uses; the runtime
 * evaluates it on first use. `islet:lib/<name>` names its frames.
 */
function libraryCopies(): Map<LibraryName, { copy: ivm.ExternalCopy<string>; bytes: number }> {
  if (!copies) {
    copies = new Map();
    for (const name of LIBRARY_NAMES) {
      const bundle = readFileSync(path.join(__dirname, '..', 'sandbox', 'lib', `${name}.js`), 'utf8');
      const text = `(function (require) {${bundle}\nreturn ${LIBRARY_BUNDLE_GLOBAL};\n})\n//# sourceURL=${libraryFilename(name)}`;
      // As isolated-vm stores it: one byte per character when all fit in Latin-1, else two.
      copies.set(name, { copy: new ivm.ExternalCopy(text), bytes: /[^\x00-\xff]/.test(text) ? text.length * 2 : text.length });
    }
  }
  return copies;
}

/** Puts the shared text of each of `names` on the context's global, for the runtime to take. */
export function installLibraries(context: ivm.Context, names: readonly LibraryName[] = LIBRARY_NAMES): void {
  const all = libraryCopies();
  for (const name of names) context.global.setSync(libraryGlobal(name), all.get(name)!.copy.copyInto());
}

/**
 * Bytes of library text an isolate reports as its own external memory although one copy serves
 * them all: sizes of warm instances leave it out.
 */
export function sharedLibraryBytes(names: readonly LibraryName[] = LIBRARY_NAMES): number {
  const all = libraryCopies();
  let bytes = 0;
  for (const name of names) bytes += all.get(name)!.bytes;
  return bytes;
}
