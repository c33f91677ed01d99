import { apply, indirectEval } from '../../sandbox/guest/intrinsics';
import type { HostBridge } from '../../sandbox/protocol';
import { NATIVE_ADDON_CODE, nativeAddonMessage } from '../native-addon';
import { joinWithinRoot } from '../paths';

/**
 * CommonJS over the function's own files at run time, resolved as Node resolves them (without the
 * host file system). The bundle built at deploy holds every module it could see; this serves what
 * it could not: requires of computed names, Node's built-in modules, and `module.createRequire`.
 * Its state is in private fields: an instance is made after user code has run, and an assignment
 * to a property (`this.x = …`) would go through any setter user code put on Object.prototype.
 */

type Wrapper = (exports: unknown, require: (id: string) => unknown, module: Module, filename: string, dirname: string) => void;

interface Module {
  id: string;
  filename: string;
  exports: unknown;
  loaded: boolean;
  children: Module[];
  paths: string[];
  require: (id: string) => unknown;
}

export class ModuleSystem {
  readonly #cache = new Map<string, Module>();
  /** Sources read from the host so far (null: no such file). The host reads only the function's own files. */
  readonly #sources = new Map<string, string | null>();
  readonly #readModule: HostBridge['readModule'];
  readonly #builtin: (id: string) => unknown;

  constructor(readModule: HostBridge['readModule'], builtin: (id: string) => unknown) {
    this.#readModule = readModule;
    this.#builtin = builtin;
  }

  /** A `require` resolving from `dir` (a path from the function's root, like `/lib`). */
  requireFrom(dir: string): (id: string) => unknown {
    return this.makeRequire(undefined, trimSlashes(dir));
  }

  private makeRequire(module: Module | undefined, dir: string): (id: string) => unknown {
    const require = (id: unknown): unknown => {
      if (typeof id !== 'string' || id === '') throw new TypeError('The "id" argument must be a non-empty string');
      if (!id.startsWith('.') && !id.startsWith('/')) {
        const builtin = this.#builtin(id);
        if (builtin !== undefined) return builtin;
        if (id.startsWith('node:')) throw notFound(`No such built-in module: ${id}`, 'ERR_UNKNOWN_BUILTIN_MODULE');
      }
      const resolved = this.resolve(id, dir);
      if (resolved === undefined) throw notFound(`Cannot find module '${id}' from '/${dir}'`, 'MODULE_NOT_FOUND');
      return this.load(resolved, module);
    };
    const resolve = (id: string) => {
      if (this.#builtin(id) !== undefined) return id;
      const resolved = this.resolve(String(id), dir);
      if (resolved === undefined) throw notFound(`Cannot find module '${id}' from '/${dir}'`, 'MODULE_NOT_FOUND');
      return `/${resolved}`;
    };
    return Object.assign(require, { resolve, cache: {} }) as unknown as (id: string) => unknown;
  }

  private load(path: string, parent: Module | undefined): unknown {
    const cached = this.#cache.get(path);
    if (cached) return cached.exports;
    if (path.endsWith('.node')) throw Object.assign(new Error(nativeAddonMessage(`/${path}`)), { code: NATIVE_ADDON_CODE });
    const dir = path.includes('/') ? path.slice(0, path.lastIndexOf('/')) : '';
    const module: Module = { id: `/${path}`, filename: `/${path}`, exports: {}, loaded: false, children: [], paths: [], require: undefined as never };
    module.require = this.makeRequire(module, dir);
    this.#cache.set(path, module);
    parent?.children.push(module);
    try {
      if (path.endsWith('.json')) {
        module.exports = JSON.parse(this.source(path));
      } else {
        const wrapper = this.compile(path);
        apply(wrapper, module.exports, [module.exports, module.require, module, `/${path}`, `/${dir}`]);
      }
    } catch (err) {
      this.#cache.delete(path);
      throw err;
    }
    module.loaded = true;
    return module.exports;
  }

  private exists(path: string): boolean {
    let text = this.#sources.get(path);
    if (text === undefined) {
      const read = this.#readModule(path);
      text = typeof read === 'string' ? read : null;
      this.#sources.set(path, text);
    }
    return text !== null;
  }

  private source(path: string): string {
    if (!this.exists(path)) throw new Error(`Cannot read module '/${path}'`);
    return this.#sources.get(path)!;
  }

  private compile(path: string): Wrapper {
    const text = this.source(path);
    const code = text.startsWith('#!') ? `//${text.slice(2)}` : text;
    // Indirect eval keeps the wrapper out of any local scope; sourceURL names the file in stack traces.
    return indirectEval(`(function (exports, require, module, __filename, __dirname) {${code}\n})\n//# sourceURL=/${path}`) as Wrapper;
  }

  private resolve(id: string, fromDir: string): string | undefined {
    if (id.startsWith('./') || id.startsWith('../') || id === '.' || id === '..' || id.startsWith('/')) {
      const target = joinWithinRoot(id.startsWith('/') ? '' : fromDir, id);
      return target === undefined ? undefined : (this.asFile(target) ?? this.asDirectory(target));
    }
    // Bare specifier: walk up the node_modules folders.
    let dir: string | undefined = fromDir;
    for (;;) {
      if (!dir?.endsWith('node_modules') && dir !== undefined) {
        const base = dir === '' ? `node_modules/${id}` : `${dir}/node_modules/${id}`;
        const target = joinWithinRoot('', base);
        const found = target === undefined ? undefined : (this.asFile(target) ?? this.asDirectory(target));
        if (found) return found;
      }
      if (dir === '' || dir === undefined) return undefined;
      dir = dir.includes('/') ? dir.slice(0, dir.lastIndexOf('/')) : '';
    }
  }

  private asFile(p: string): string | undefined {
    // `.node` as Node tries it, last: `require('./build/Release/addon')` then says it is a native addon.
    for (const candidate of [p, `${p}.js`, `${p}.json`, `${p}.cjs`, `${p}.node`]) if (candidate !== '' && this.exists(candidate)) return candidate;
    return undefined;
  }

  private asDirectory(p: string): string | undefined {
    const pkg = p === '' ? 'package.json' : `${p}/package.json`;
    if (this.exists(pkg)) {
      let main: unknown;
      try {
        main = (JSON.parse(this.source(pkg)) as { main?: unknown }).main;
      } catch {
        main = undefined;
      }
      if (typeof main === 'string' && main !== '') {
        const target = joinWithinRoot(p, main.startsWith('.') || main.startsWith('/') ? main : `./${main}`);
        const found = target === undefined ? undefined : (this.asFile(target) ?? this.asIndex(target));
        if (found) return found;
      }
    }
    return this.asIndex(p);
  }

  private asIndex(p: string): string | undefined {
    const prefix = p === '' ? '' : `${p}/`;
    for (const candidate of [`${prefix}index.js`, `${prefix}index.json`, `${prefix}index.cjs`]) if (this.exists(candidate)) return candidate;
    return undefined;
  }
}

function notFound(message: string, code: string): Error {
  return Object.assign(new Error(message), { code });
}

/** `/a/b/` → `a/b`, without a regular expression (a runtime's first one costs an isolate about 250 KB). */
function trimSlashes(dir: string): string {
  let start = 0;
  let end = dir.length;
  while (start < end && dir[start] === '/') start++;
  while (end > start && dir[end - 1] === '/') end--;
  return dir.slice(start, end);
}
