/**
 * Every capability of the sandboxes, and the tables derived from their manifests: the libraries and
 * their entry files (scripts/build.js, engine/isolate/libraries.ts), the names of Node's modules
 * (the function bundler, `module.builtinModules`), and where each module and web global comes from
 * (the node8 runtime's `require` and global object). The build hands the runtimes and libraries
 * what they need of these as constants (see `guestConstants`), so no manifest is bundled into an
 * isolate. No imports but the manifests (read by the build, the host and, as types, the guests).
 */
import { buffer } from './buffer/manifest';
import type { Capability, LibrarySpec, RuntimeName } from './capability';
import { consoleCapability } from './console/manifest';
import { crypto } from './crypto/manifest';
import { events } from './events/manifest';
import { fetch } from './fetch/manifest';
import { fs } from './fs/manifest';
import { httpServer } from './http-server/manifest';
import { invoke } from './invoke/manifest';
import { node } from './node/manifest';
import { requestBody } from './request-body/manifest';
import { sockets } from './sockets/manifest';
import { streams } from './streams/manifest';
import { subtle } from './subtle/manifest';
import { timers } from './timers/manifest';
import { tzdata } from './tzdata/manifest';
import { url } from './url/manifest';
import { wasm } from './wasm/manifest';
import { web } from './web/manifest';
import { websockets } from './websockets/manifest';
import { zlib } from './zlib/manifest';

/** The capabilities, one line each: adding a capability is adding its folder and a line here. */
export const CAPABILITIES = [
  buffer,
  url,
  events,
  streams,
  web,
  wasm,
  node,
  timers,
  consoleCapability,
  invoke,
  crypto,
  subtle,
  zlib,
  fs,
  fetch,
  sockets,
  websockets,
  httpServer,
  requestBody,
  tzdata,
] as const satisfies readonly Capability[];

type Registered = (typeof CAPABILITIES)[number];
type LibrariesOf<C> = C extends { libraries: infer L } ? keyof L & string : never;
/** The name of one of islet's libraries (see Capability.libraries). */
export type LibraryName = LibrariesOf<Registered>;

export interface Library {
  name: LibraryName;
  /** The capability it belongs to. */
  capability: string;
  /** Its entry file, relative to the repository's root. */
  entry: string;
  bundles: Readonly<Record<string, string>>;
  drop: readonly 'console'[];
}

const all: readonly Capability[] = CAPABILITIES;

/** `a/b/../c` → `a/c` (no node:path here: the guests' type check has no Node). */
function normalize(file: string): string {
  const out: string[] = [];
  for (const part of file.split('/')) {
    if (part === '..') out.pop();
    else if (part !== '.' && part !== '') out.push(part);
  }
  return out.join('/');
}

/** Every library, in the registry's order. */
export const LIBRARIES: readonly Library[] = all.flatMap((c) =>
  Object.entries(c.libraries ?? {}).map(([name, spec]) => {
    const s: LibrarySpec = typeof spec === 'string' ? { entry: spec } : spec;
    return { name: name as LibraryName, capability: c.name, entry: normalize(`engine/capabilities/${c.name}/${s.entry}`), bundles: s.bundles ?? {}, drop: s.drop ?? [] };
  }),
);

export const LIBRARY_NAMES: readonly LibraryName[] = LIBRARIES.map((l) => l.name);

/** The capabilities a runtime gets. */
export function capabilitiesOf(runtime: RuntimeName): readonly Capability[] {
  return all.filter((c) => c.runtimes.includes(runtime));
}

/**
 * The names of Node's built-in modules node8 offers (Node 20's `module.builtinModules` without the
 * internal underscore ones), sorted as Node sorts them. `require`/`import` of any of them, with or
 * without `node:`, reaches islet's module of that name, never a package of the same name: Node
 * resolves them the same way.
 */
export const BUILTIN_MODULES: ReadonlySet<string> = new Set(all.flatMap((c) => Object.keys(c.modules ?? {})).sort());

/** `<name>:<source>` lines, each after a newline (see lookUpLibrary in the node8 runtime), for the sources not the runtime's own. */
function table(entries: [string, string][]): string {
  return `\n${entries
    .filter(([, source]) => source !== 'runtime')
    .map(([name, source]) => `${name}:${source}`)
    .join('\n')}\n`;
}

/**
 * islet's own modules that are not the runtime's (`cloudflare:sockets`): the function bundler
 * leaves them to the sandbox's `require`, as it leaves Node's, and they are not Node's builtinModules.
 */
export const OWN_MODULES: ReadonlySet<string> = new Set(all.flatMap((c) => Object.keys(c.ownModules ?? {})));

/** Where each of Node's modules, and each of islet's own that a library gives, comes from (the node8 runtime's `require`). */
export const MODULE_TABLE = table(all.flatMap((c) => [...Object.entries(c.modules ?? {}), ...Object.entries(c.ownModules ?? {})]));
/** Where each web global comes from (the node8 runtime's global object). */
export const GLOBAL_TABLE = table(all.flatMap((c) => Object.entries(c.globals ?? {})));

/**
 * What the build hands the runtimes and libraries as constants (esbuild's `define`; declared in
 * engine/sandbox/guest/env.d.ts): the tables above, without bundling the manifests into isolates.
 */
export function guestConstants(): Record<string, string> {
  return {
    // Lists as text, split where used: esbuild puts an array constant in a module of its own in every bundle.
    ISLET_LIBRARY_NAMES: JSON.stringify(LIBRARY_NAMES.join(',')),
    ISLET_BUILTIN_MODULES: JSON.stringify([...BUILTIN_MODULES].join(',')),
    ISLET_MODULE_TABLE: JSON.stringify(MODULE_TABLE),
    ISLET_GLOBAL_TABLE: JSON.stringify(GLOBAL_TABLE),
  };
}
