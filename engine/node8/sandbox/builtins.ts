/**
 * Node's built-in modules inside node8 isolates. Each is made on first require, from the library
 * its capability's manifest names (ISLET_MODULE_TABLE, derived from the manifests by
 * engine/capabilities/registry.ts); the modules the runtime owns (timers, console, sdk) are given by
 * it. Modules a sandbox cannot offer (net, child_process, worker_threads…) load, and
 * throw an error naming the module when used, as workerd's do.
 */
import { library } from '../../sandbox/guest/libraries';
import { lookUpLibrary } from './library-table';

/**
 * `require` of built-in modules: undefined for a name that is not one (a file or package then).
 * `own` (the runtime's modules) is an object without a prototype.
 */
export function makeBuiltinRequire(own: Record<string, unknown>): (id: string) => unknown {
  const made = new Map<string, unknown>();
  return (id) => {
    const name = id.startsWith('node:') ? id.slice(5) : id;
    const given = own[name];
    if (given !== undefined) return given;
    let module = made.get(name);
    if (module === undefined) {
      const source = lookUpLibrary(ISLET_MODULE_TABLE, name);
      if (source === undefined) return undefined;
      module = library<Record<string, unknown>>(source[0])[source[1] ?? 'default'];
      made.set(name, module);
    }
    return module;
  };
}
