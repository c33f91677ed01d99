/**
 * What a capability's manifest declares. A capability is one folder under engine/capabilities (as
 * in Deno's `ext/` or workerd's `src/node/`): what the sandboxes offer of one area (crypto, zlib,
 * fetch…) with its guest half (islet's libraries, evaluated in an isolate on first use), its host
 * half, the typed operations between them (`ops.ts`), its limits and a pointer to its tests. The
 * registry (registry.ts) lists every capability; the tables the build, the host and the runtimes
 * use (Node's module names, the web globals, the libraries and their entry files) are derived from
 * the manifests there, never written twice. No imports: read by the build, the host and (as types)
 * the code inside isolates.
 */

/** The runtimes whose sandboxes may get a capability. */
export type RuntimeName = 'node8' | 'python';

/**
 * Where a Node module or a web global comes from: `<library>` or `<library>#<export>`. A module
 * without an export is the library's default export; a global without one is the library's export
 * of the global's own name. `runtime` is the runtime script's own (the runtime gives it).
 */
export type Source = string;

/** How one of a capability's libraries is built (scripts/build.js). */
export interface LibrarySpec {
  /** Its entry file, relative to the capability's folder. */
  entry: string;
  /** Node's modules the library bundles from these packages instead of taking them from the runtime's `require`. */
  bundles?: Readonly<Record<string, string>>;
  /** What esbuild drops from it (`console`: a package's warnings Node would not print). */
  drop?: readonly 'console'[];
}

export interface Capability {
  /** The folder's name. */
  readonly name: string;
  /** What the capability is, in a line. */
  readonly summary: string;
  /** The runtimes that get it. */
  readonly runtimes: readonly RuntimeName[];
  /**
   * islet's libraries it builds, by name (the name is the file under dist/engine/sandbox/lib/ and
   * the `islet:lib/<name>` of its stack frames): the entry file, relative to the folder.
   */
  readonly libraries?: Readonly<Record<string, string | LibrarySpec>>;
  /** Node's built-in modules it provides to node8 functions (their `require`, `import` and `builtinModules`). */
  readonly modules?: Readonly<Record<string, Source>>;
  /** Modules of islet's own it provides (not Node's: `sdk`). */
  readonly ownModules?: Readonly<Record<string, Source>>;
  /** Web platform globals of node8 functions it provides, each made on first use. */
  readonly globals?: Readonly<Record<string, Source>>;
  /** Globals the runtimes install themselves at start (timers, console), listed for the reader and the tests. */
  readonly runtimeGlobals?: readonly string[];
  /** The host operations between its halves (declared with their types in its ops.ts). */
  readonly ops?: readonly string[];
  /** The capabilities whose libraries or operations it uses. */
  readonly dependsOn?: readonly string[];
  /** Its probes and tests (files under test/). */
  readonly tests: readonly string[];
}
