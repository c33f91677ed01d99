/**
 * islet's libraries for code inside isolates (engine/sandbox/lib/<name>.ts, each bundled apart from
 * the runtimes by scripts/build.js) and the global each one's text is put under before a runtime
 * runs. Shared by the host (engine/isolate/libraries.ts) and the runtimes inside isolates
 * (engine/sandbox/guest/libraries.ts), which take and delete them.
 */
export const LIBRARY_NAMES = ['buffer', 'fetch', 'url'] as const;
export type LibraryName = (typeof LIBRARY_NAMES)[number];

export const libraryGlobal = (name: LibraryName): string => `__isletLib_${name}`;

/** The name each library's bundle (an IIFE) assigns its exports to (scripts/build.js). */
export const LIBRARY_BUNDLE_GLOBAL = '__isletLib';
