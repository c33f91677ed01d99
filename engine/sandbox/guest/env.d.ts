// What code inside isolates finds on its global object (set up by the runtimes: see
// engine/node8/sandbox/globals.ts and python/sandbox/index.ts).
declare function setTimeout(fn: (...args: unknown[]) => void, ms?: number, ...args: unknown[]): unknown;
declare function clearTimeout(handle: unknown): void;
declare function setImmediate(fn: (...args: unknown[]) => void, ...args: unknown[]): unknown;
declare function queueMicrotask(fn: () => void): void;
declare class TextEncoder {
  readonly encoding: string;
  encode(input?: string): Uint8Array;
}
declare class TextDecoder {
  constructor(label?: string, options?: { fatal?: boolean; ignoreBOM?: boolean });
  readonly encoding: string;
  readonly fatal: boolean;
  readonly ignoreBOM: boolean;
  decode(input?: ArrayBuffer | ArrayBufferView, options?: { stream?: boolean }): string;
}
declare class URL {
  constructor(input: string, base?: string);
  href: string;
  protocol: string;
  hostname: string;
  port: string;
  pathname: string;
  search: string;
  username: string;
  password: string;
}
type BufferSource = ArrayBuffer | ArrayBufferView;
// Tables derived from the capabilities' manifests, which the build puts in as constants (see
// guestConstants in engine/capabilities/registry.ts).
/** Every library's name, joined by commas. */
declare const ISLET_LIBRARY_NAMES: string;
/** The names of Node's modules node8 offers, sorted, joined by commas. */
declare const ISLET_BUILTIN_MODULES: string;
/** `<module>:<library>[#<export>]` lines, each after a newline: where each of Node's modules comes from. */
declare const ISLET_MODULE_TABLE: string;
/** `<global>:<library>[#<export>]` lines, each after a newline: where each web global comes from. */
declare const ISLET_GLOBAL_TABLE: string;
declare class FinalizationRegistry<T> {
  constructor(cleanup: (held: T) => void);
  register(target: object, held: T): void;
}
interface String {
  toWellFormed?(): string;
}
interface SymbolConstructor {
  readonly dispose?: unique symbol;
}
