/**
 * How islet's libraries for code inside isolates are named where the host hands them over: each
 * is bundled apart from the runtimes by scripts/build.js from its entry file (declared in its
 * capability's manifest: engine/capabilities/registry.ts lists them), and its text is put under a
 * global before a runtime runs. Shared by the host (engine/isolate/libraries.ts) and the runtimes
 * inside isolates (engine/sandbox/guest/libraries.ts), which take and delete them. A library is
 * evaluated in an isolate on its first use only; its `default` export is what it provides.
 */
import type { LibraryName } from '../capabilities/registry';

export type { LibraryName };

// No regular expression here: a runtime's first one costs a fresh isolate about 250 KB (measured).
export const libraryGlobal = (name: LibraryName): string => `__isletLib_${name.split('/').join('_')}`;

/** The name each library's bundle (an IIFE) assigns its exports to (scripts/build.js). */
export const LIBRARY_BUNDLE_GLOBAL = '__isletLib';
