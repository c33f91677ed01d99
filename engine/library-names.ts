/**
 * islet's libraries for node8 functions (bundled apart from the runtime, see scripts/build.js) and
 * the global each one's text is put under before the runtime runs. Shared by the host
 * (engine/isolate/libraries.ts) and the runtime inside isolates, which takes and deletes them.
 */
export const LIBRARY_NAMES = ['buffer', 'fetch', 'url'] as const;
export type LibraryName = (typeof LIBRARY_NAMES)[number];

export const libraryGlobal = (name: LibraryName): string => `__isletLib_${name}`;

/** The name each library's bundle (an IIFE) assigns its exports to (scripts/build.js). */
export const LIBRARY_BUNDLE_GLOBAL = '__isletLib';
