/**
 * The web platform globals of node8 functions (the WinterTC Minimum Common API) and Node's
 * `Buffer`. Each is taken from islet's libraries on first use, so a cold start pays only for what
 * the function touches.
 *
 * They are found through one object put between the global object and its prototype: a name the
 * global object does not have is looked up there, and on first use it is made an own property of
 * the global object, so later reads are ordinary global reads. One object for all of them, not an
 * accessor each: fifty accessors cost every isolate about 60 KB (measured), a thousand warm
 * functions 60 MB. Assigning one replaces it, as in a browser or Node.
 */
import { isLibraryLoading, library } from '../../sandbox/guest/libraries';
import { atob, btoa } from '../../sandbox/guest/text';
import { lookUpLibrary } from './library-table';

/** `<global>:<library>[#<export>]` lines (the export is the global's own name when left out), from the capabilities' manifests. */
const FROM_LIBRARIES = ISLET_GLOBAL_TABLE;

function define(name: string, value: unknown): void {
  Object.defineProperty(globalThis, name, { value, writable: true, configurable: true, enumerable: false });
}

/** The runtime's own globals (timers, console, process…) and atob/btoa. */
export function installGlobals(own: Record<string, unknown>): void {
  for (const [name, value] of Object.entries({ ...own, atob, btoa })) define(name, value);
}

/**
 * Makes the library globals reachable. Done when the isolate becomes a function, before its code
 * runs: isolated-vm refuses to read properties of a global object with a proxy among its
 * prototypes, which the host does while it sets a blank isolate up.
 */
export function installLazyGlobals(): void {
  const prototype = Object.getPrototypeOf(globalThis) as object;
  // The handler has no prototype: a trap it lacks is looked up on it at every global access, and
  // Object.prototype (user code's to change) must not answer one.
  const handler = {
    __proto__: null,
    has(target: object, name: string | symbol) {
      return (typeof name === 'string' && lookUpLibrary(FROM_LIBRARIES, name) !== undefined) || Reflect.has(target, name);
    },
    get(target: object, name: string | symbol, receiver: unknown) {
      const source = typeof name === 'string' ? lookUpLibrary(FROM_LIBRARIES, name) : undefined;
      // Code in a library that looks at a global the library itself provides finds none yet.
      if (!source || isLibraryLoading(source[0])) return Reflect.get(target, name, receiver);
      const value = library<Record<string, unknown>>(source[0])[source[1] ?? (name as string)];
      define(name as string, value);
      return value;
    },
    set(target: object, name: string | symbol, value: unknown, receiver: unknown) {
      if (receiver === globalThis && typeof name === 'string' && lookUpLibrary(FROM_LIBRARIES, name)) {
        define(name, value);
        return true;
      }
      return Reflect.set(target, name, value, receiver);
    },
  } as ProxyHandler<object>;
  Object.setPrototypeOf(globalThis, new Proxy(prototype, handler));
}
