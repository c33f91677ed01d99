import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import ivm from 'isolated-vm';
import { LIBRARY_BUNDLE_GLOBAL, LIBRARY_NAMES, libraryGlobal, type LibraryName } from '../sandbox/library-names';
import { libraryFilename } from '../sandbox/protocol';

let copies: Map<LibraryName, ivm.ExternalCopy<string>> | undefined;
let sharedBytes = 0;

/**
 * One copy of each library's text for the whole process. isolated-vm hands a string of 1 KB or more
 * to an isolate as an external string over the copy's own bytes, so every isolate shares these
 * instead of holding ~330 KB of library source each (a script compiled by the host is always
 * copied). The text is evaluated in the isolate on first use; `islet:lib/<name>` names its frames.
 */
function libraryCopies(): Map<LibraryName, ivm.ExternalCopy<string>> {
  if (!copies) {
    copies = new Map();
    for (const name of LIBRARY_NAMES) {
      const bundle = readFileSync(path.join(__dirname, '..', 'sandbox', 'lib', `${name}.js`), 'utf8');
      const text = `(function () {${bundle}\nreturn ${LIBRARY_BUNDLE_GLOBAL};\n})()\n//# sourceURL=${libraryFilename(name)}`;
      copies.set(name, new ivm.ExternalCopy(text));
      // As isolated-vm stores it: one byte per character when all fit in Latin-1, else two.
      sharedBytes += /[^\x00-\xff]/.test(text) ? text.length * 2 : text.length;
    }
  }
  return copies;
}

/** Puts each library's shared text on the context's global, for the runtime to take. */
export function installLibraries(context: ivm.Context): void {
  for (const [name, copy] of libraryCopies()) context.global.setSync(libraryGlobal(name), copy.copyInto());
}

/**
 * Bytes of library text every node8 isolate reports as its own external memory although one copy
 * serves them all: sizes of warm instances leave it out.
 */
export function sharedLibraryBytes(): number {
  libraryCopies();
  return sharedBytes;
}
