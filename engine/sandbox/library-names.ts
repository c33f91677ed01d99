/**
 * islet's libraries for code inside isolates, each bundled apart from the runtimes by
 * scripts/build.js from its entry file, and the global each one's text is put under before a
 * runtime runs. Shared by the host (engine/isolate/libraries.ts) and the runtimes inside isolates
 * (engine/sandbox/guest/libraries.ts), which take and delete them. A library is evaluated in an
 * isolate on its first use only; its `default` export is what it provides.
 */
export const LIBRARY_NAMES = [
  // Shared by both sandboxes: engine/sandbox/lib/<name>.ts.
  'buffer',
  'url',
  // Web platform APIs of node8 functions: engine/node8/sandbox/web/<name>.ts.
  'web/events',
  'web/streams',
  'web/fetch',
  'web/misc',
  'web/subtle',
  'web/urlpattern',
  'web/webassembly',
  // Node's built-in modules of node8 functions: engine/node8/sandbox/node/<name>.ts.
  'node/assert',
  'node/async_hooks',
  'node/crypto',
  'node/events',
  'node/fs',
  'node/http',
  'node/misc',
  'node/path',
  'node/process',
  'node/stream',
  'node/string_decoder',
  'node/unavailable',
  'node/url',
  'node/util',
  'node/zlib',
] as const;

/** The entry file a library is built from (scripts/build.js). */
export const libraryEntry = (name: LibraryName): string => (name.includes('/') ? `engine/node8/sandbox/${name}.ts` : `engine/sandbox/lib/${name}.ts`);

export type LibraryName = (typeof LIBRARY_NAMES)[number];

// No regular expression here: a runtime's first one costs a fresh isolate about 250 KB (measured).
export const libraryGlobal = (name: LibraryName): string => `__isletLib_${name.split('/').join('_')}`;

/** The name each library's bundle (an IIFE) assigns its exports to (scripts/build.js). */
export const LIBRARY_BUNDLE_GLOBAL = '__isletLib';
