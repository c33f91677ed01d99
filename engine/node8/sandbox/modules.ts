import type { HostBridge } from '../../sandbox/protocol';

/** CommonJS over the function's own files, resolved as Node resolves them (without the host file system). */

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

const NODE_BUILTINS = new Set([
  'assert', 'async_hooks', 'buffer', 'child_process', 'cluster', 'console', 'constants', 'crypto', 'dgram',
  'diagnostics_channel', 'dns', 'domain', 'events', 'fs', 'fs/promises', 'http', 'http2', 'https', 'inspector',
  'module', 'net', 'os', 'path', 'perf_hooks', 'process', 'punycode', 'querystring', 'readline', 'repl',
  'stream', 'string_decoder', 'sys', 'timers', 'tls', 'trace_events', 'tty', 'url', 'util', 'v8', 'vm', 'wasi',
  'worker_threads', 'zlib',
]);

export class ModuleSystem {
  private readonly files: Set<string>;
  private readonly cache = new Map<string, Module>();
  private readonly compiled = new Map<string, Wrapper>();

  constructor(
    files: string[],
    private readonly host: Pick<HostBridge, 'readModule'>,
    private readonly builtins: Record<string, () => unknown>,
  ) {
    this.files = new Set(files);
  }

  /** Registers a wrapper the host compiled (with V8's code cache) for `path`. */
  provideCompiled(path: string, wrapper: Wrapper): void {
    this.compiled.set(path, wrapper);
  }

  requireMain(path: string): unknown {
    return this.load(path, undefined);
  }

  private makeRequire(module: Module | undefined, dir: string): (id: string) => unknown {
    const require = (id: unknown): unknown => {
      if (typeof id !== 'string' || id === '') throw new TypeError('The "id" argument must be a non-empty string');
      const name = id.startsWith('node:') ? id.slice(5) : id;
      const builtin = this.builtins[name];
      if (builtin && !id.startsWith('.') && !id.startsWith('/')) return builtin();
      if (!id.startsWith('.') && !id.startsWith('/') && (NODE_BUILTINS.has(name) || id.startsWith('node:'))) {
        const err = new Error(
          `Cannot require '${id}': this Node.js built-in module is not available in islet functions (available: ${Object.keys(this.builtins).sort().join(', ')})`,
        );
        (err as Error & { code: string }).code = 'ERR_UNAVAILABLE_BUILTIN';
        throw err;
      }
      const resolved = this.resolve(id, dir);
      if (resolved === undefined) {
        const err = new Error(`Cannot find module '${id}' from '/${dir}'`);
        (err as Error & { code: string }).code = 'MODULE_NOT_FOUND';
        throw err;
      }
      return this.load(resolved, module);
    };
    return require as (id: string) => unknown;
  }

  private load(path: string, parent: Module | undefined): unknown {
    const cached = this.cache.get(path);
    if (cached) return cached.exports;
    const dir = path.includes('/') ? path.slice(0, path.lastIndexOf('/')) : '';
    const module: Module = { id: `/${path}`, filename: `/${path}`, exports: {}, loaded: false, children: [], paths: [], require: undefined as never };
    module.require = this.makeRequire(module, dir);
    this.cache.set(path, module);
    parent?.children.push(module);
    try {
      if (path.endsWith('.json')) {
        module.exports = JSON.parse(this.source(path));
      } else {
        const wrapper = this.compiled.get(path) ?? this.compile(path);
        wrapper.call(module.exports, module.exports, module.require, module, `/${path}`, `/${dir}`);
      }
    } catch (err) {
      this.cache.delete(path);
      throw err;
    }
    module.loaded = true;
    return module.exports;
  }

  private source(path: string): string {
    const text = this.host.readModule(path);
    if (typeof text !== 'string') throw new Error(`Cannot read module '/${path}'`);
    return text;
  }

  private compile(path: string): Wrapper {
    const code = this.source(path).replace(/^#!.*/, '');
    // Indirect eval keeps the wrapper out of any local scope; sourceURL names the file in stack traces.
    const indirectEval = eval;
    return indirectEval(`(function (exports, require, module, __filename, __dirname) {${code}\n})\n//# sourceURL=/${path}`) as Wrapper;
  }

  private resolve(id: string, fromDir: string): string | undefined {
    if (id.startsWith('./') || id.startsWith('../') || id === '.' || id === '..' || id.startsWith('/')) {
      const target = joinPath(id.startsWith('/') ? '' : fromDir, id);
      return target === undefined ? undefined : this.asFile(target) ?? this.asDirectory(target);
    }
    // Bare specifier: walk up the node_modules folders.
    let dir: string | undefined = fromDir;
    for (;;) {
      if (!dir?.endsWith('node_modules') && dir !== undefined) {
        const base = dir === '' ? `node_modules/${id}` : `${dir}/node_modules/${id}`;
        const target = joinPath('', base);
        const found = target === undefined ? undefined : this.asFile(target) ?? this.asDirectory(target);
        if (found) return found;
      }
      if (dir === '' || dir === undefined) return undefined;
      dir = dir.includes('/') ? dir.slice(0, dir.lastIndexOf('/')) : '';
    }
  }

  private asFile(p: string): string | undefined {
    for (const candidate of [p, `${p}.js`, `${p}.json`, `${p}.cjs`]) if (this.files.has(candidate)) return candidate;
    return undefined;
  }

  private asDirectory(p: string): string | undefined {
    const pkg = p === '' ? 'package.json' : `${p}/package.json`;
    if (this.files.has(pkg)) {
      let main: unknown;
      try {
        main = (JSON.parse(this.source(pkg)) as { main?: unknown }).main;
      } catch {
        main = undefined;
      }
      if (typeof main === 'string' && main !== '') {
        const target = joinPath(p, main.startsWith('.') || main.startsWith('/') ? main : `./${main}`);
        const found = target === undefined ? undefined : this.asFile(target) ?? this.asIndex(target);
        if (found) return found;
      }
    }
    return this.asIndex(p);
  }

  private asIndex(p: string): string | undefined {
    const prefix = p === '' ? '' : `${p}/`;
    for (const candidate of [`${prefix}index.js`, `${prefix}index.json`, `${prefix}index.cjs`]) if (this.files.has(candidate)) return candidate;
    return undefined;
  }
}

/** Joins and normalises POSIX paths relative to the function root; undefined when it climbs above it. */
function joinPath(base: string, rel: string): string | undefined {
  const parts = base === '' ? [] : base.split('/');
  for (const part of rel.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') {
      if (parts.length === 0) return undefined;
      parts.pop();
    } else parts.push(part);
  }
  return parts.join('/');
}
