import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import * as esbuild from 'esbuild';
import { ServiceError } from '../errors';
import { BUILTIN_MODULES, OWN_MODULES } from '../capabilities/registry';
import { NATIVE_ADDON_CODE, nativeAddonMessage } from './native-addon';

/**
 * A node8 function as one script: its entry file and everything it imports or requires (its own
 * files, packages, ES modules, CommonJS and TypeScript alike) bundled by esbuild at deploy, the way
 * wrangler builds a Worker. The result is a function expression the sandbox calls with
 * `(__isletExports, require, __isletRequireFrom)`; it hands the entry module's namespace to
 * `__isletExports`. Node built-ins and requires that cannot be resolved at build time are left to
 * the sandbox's `require` at run time, as Node would resolve them (and fail) only when they run.
 */
export interface FunctionBuild {
  /** The script's source. */
  source: string;
  /** esbuild's source map of the bundle (JSON), for positions in the user's own files. */
  map: string;
  /** Where islet's per-file declarations were put, by file: columns to take off that line. */
  shifts: Record<string, { line: number; column: number; length: number }>;
  /** True when some module awaits at its top level: the script is an async function. */
  async: boolean;
  /**
   * The function's files the bundle was made of, and those a `require.resolve` names (relative
   * POSIX paths): what `islet deploy` must upload of node_modules (see needed-files.ts).
   */
  inputs: string[];
}

/** Lines before the bundle's first line in `source` (the wrapper's head). */
export const WRAPPER_LINES = 1;

/** Largest bundle islet runs (every warm instance holds a copy of its source). */
const MAX_BUNDLE_BYTES = 32 * 1024 * 1024;

/** Changing how functions are built changes this, so cached builds of older recipes are not reused. */
export const BUILD_RECIPE = `esbuild-${esbuild.version}-r3`;

const ENTRY_NAMESPACE = 'islet-entry';
const RUNTIME_NAMESPACE = 'islet-runtime';
const SOURCE_FILE = /\.(?:[cm]?[jt]s|[jt]sx)$/;

/** Exports conditions, in the order a package's `exports` map is matched against (its own order wins). */
export const CONDITIONS = ['workerd', 'worker', 'node'];

/**
 * Bundles the function whose entry file is `entry` (relative to `codeDir`). A file that does not
 * parse or an import that does not resolve is an ERR_INVALID_FUNCTION naming the file, line and
 * column in the user's own source.
 */
export async function buildFunction(codeDir: string, entry: string): Promise<FunctionBuild> {
  const shifts: FunctionBuild['shifts'] = {};
  const resolvedAtRunTime = new Set<string>();
  const attempt = (format: 'cjs' | 'esm') =>
    esbuild.build({
      entryPoints: [`${ENTRY_NAMESPACE}:${format}:${entry}`],
      bundle: true,
      write: false,
      format,
      platform: 'neutral',
      target: 'node20',
      // As Node: `main` (and `exports`); `module` only for packages that have nothing else.
      mainFields: ['main', 'module'],
      conditions: CONDITIONS,
      sourcemap: 'external',
      sourcesContent: false,
      legalComments: 'none',
      absWorkingDir: codeDir,
      outdir: codeDir,
      logLevel: 'silent',
      // import() of a computed name goes through the sandbox's require at run time.
      supported: { 'dynamic-import': false },
      define: { 'import.meta': '__isletMeta' },
      metafile: true,
      plugins: [isletPlugin(codeDir, path.resolve(codeDir, entry), shifts, resolvedAtRunTime)],
    });
  let result: esbuild.BuildResult & { outputFiles: esbuild.OutputFile[] };
  let async = false;
  try {
    result = await attempt('cjs');
  } catch (err) {
    // Top-level await needs the ES module output format, which then runs as an async function.
    if (!isFailure(err) || !err.errors.some((e) => /top-level await/i.test(e.text))) throw buildError(err, shifts);
    async = true;
    try {
      result = await attempt('esm');
    } catch (again) {
      throw buildError(again, shifts);
    }
  }
  const js = result.outputFiles.find((f) => f.path.endsWith('.js'))!;
  const map = result.outputFiles.find((f) => f.path.endsWith('.js.map'))!;
  if (js.contents.byteLength > MAX_BUNDLE_BYTES) {
    throw new ServiceError('ERR_INVALID_FUNCTION', `${entry}: the bundled code is ${js.contents.byteLength} bytes, over the limit of ${MAX_BUNDLE_BYTES} bytes`, { key: 'file', file: entry });
  }
  const source = `(${async ? 'async ' : ''}function (__isletExports, require, __isletRequireFrom) {\n${nodeErrors(js.text)}\n})`;
  const inputs = new Set<string>(resolvedAtRunTime);
  for (const input of Object.keys(result.metafile?.inputs ?? {})) {
    const rel = path
      .relative(codeDir, path.resolve(codeDir, input.replace(/^[\w-]+:/, '')))
      .split(path.sep)
      .join('/');
    if (!rel.startsWith('../')) inputs.add(rel);
  }
  return { source, map: map.text, shifts, async, inputs: [...inputs].sort() };
}

/**
 * An import() of a computed name is bundled with every file its pattern matches; one that matches
 * none fails as Node fails it (esbuild's helper says "Module not found in bundle").
 */
function nodeErrors(code: string): string {
  return code.replace('throw new Error("Module not found in bundle: " + path);', 'throw Object.assign(new Error("Cannot find module \'" + path + "\'"), { code: "MODULE_NOT_FOUND" });');
}

function functionPath(codeDir: string, file: string): string {
  return `/${path.relative(codeDir, file).split(path.sep).join('/')}`;
}

/**
 * - the entry: a module that imports the user's entry file and hands its namespace over;
 * - Node built-ins (with or without `node:`), `sdk` and `cloudflare:sockets`: the sandbox's own modules, required at run time;
 * - a `require()` that does not resolve now: left to run time, where it fails as in Node, when it runs;
 * - a `require.resolve()` that does: the file's path from the function's root, which the sandbox's require finds;
 * - native addons (`.node`): a module that throws a clear error when required (./native-addon.ts);
 * - each source file that uses `__dirname`, `__filename` or `import.meta` gets its own values of them;
 * - the entry file, if it reads `require.main`, finds its own module there, as in Node (an app
 *   that listens only `if (require.main === module)`).
 */
function isletPlugin(codeDir: string, entryFile: string, shifts: FunctionBuild['shifts'], resolvedAtRunTime: Set<string>): esbuild.Plugin {
  return {
    name: 'islet',
    setup(build) {
      build.onResolve({ filter: new RegExp(`^${ENTRY_NAMESPACE}:`) }, (args) => ({ path: args.path.slice(ENTRY_NAMESPACE.length + 1), namespace: ENTRY_NAMESPACE }));
      // A CommonJS bundle takes the entry with require(): its exports as they are, with no
      // namespace object copied from them (an ES module's comes marked __esModule). The ES module
      // output (top-level await) imports its namespace.
      build.onLoad({ filter: /.*/, namespace: ENTRY_NAMESPACE }, (args) => {
        const [format, ...rest] = args.path.split(':');
        const spec = JSON.stringify(`./${rest.join(':')}`);
        const contents = format === 'cjs' ? `__isletExports(require(${spec}), false);\n` : `import * as ns from ${spec};\n__isletExports(ns, true);\n`;
        return { contents, resolveDir: codeDir, loader: 'js' };
      });
      build.onResolve({ filter: /.*/ }, async (args) => {
        if (args.pluginData === RESOLVING) return undefined;
        // The sandbox's own require, at run time.
        if (args.namespace === RUNTIME_NAMESPACE) return { path: args.path, external: true };
        const id = args.path;
        const bare = id.startsWith('node:') ? id.slice(5) : id;
        if (OWN_MODULES.has(id) || id.startsWith('node:') || BUILTIN_MODULES.has(bare)) return { path: id, namespace: RUNTIME_NAMESPACE, pluginData: { builtin: true } };
        if (id.endsWith('.node')) {
          const addon = id.startsWith('.') ? functionPath(codeDir, path.resolve(args.resolveDir, id)) : id;
          return { path: addon, namespace: RUNTIME_NAMESPACE, pluginData: { addon } };
        }
        if (args.kind !== 'require-call' && args.kind !== 'require-resolve') return undefined;
        const resolved = await build.resolve(id, { kind: args.kind, resolveDir: args.resolveDir, importer: args.importer, pluginData: RESOLVING });
        // require.resolve names a file the code reads at run time (with fs, or a require of its own).
        // esbuild leaves the call in the bundle, where the bundle's require resolves from the entry's
        // folder: the name becomes the file's path from the function's root, as Node answers its
        // absolute path (jsdom 29 require.resolves './xhr-sync-worker.js' beside itself as it loads).
        if (resolved.errors.length === 0 && args.kind === 'require-resolve') {
          resolvedAtRunTime.add(path.relative(codeDir, resolved.path).split(path.sep).join('/'));
          return { path: functionPath(codeDir, resolved.path), external: true };
        }
        if (resolved.errors.length === 0) return resolved;
        return { path: id, namespace: RUNTIME_NAMESPACE, pluginData: { from: functionPath(codeDir, args.resolveDir) } };
      });
      build.onLoad({ filter: /.*/, namespace: RUNTIME_NAMESPACE }, (args) => {
        const data = args.pluginData as { builtin?: true; addon?: string; from?: string };
        const id = JSON.stringify(args.path);
        if (data.addon !== undefined)
          return { contents: `throw Object.assign(new Error(${JSON.stringify(nativeAddonMessage(data.addon))}), { code: ${JSON.stringify(NATIVE_ADDON_CODE)} });`, loader: 'js' };
        if (data.builtin) return { contents: `module.exports = require(${id});`, loader: 'js' };
        return { contents: `module.exports = __isletRequireFrom(${JSON.stringify(data.from ?? '/')}, ${id});`, loader: 'js' };
      });
      build.onLoad({ filter: SOURCE_FILE }, async (args) => {
        const text = await fsp.readFile(args.path, 'utf8');
        const loader = loaderFor(args.path);
        const locations = /__dirname|__filename|import\.meta/.test(text);
        const main = args.path === entryFile && /\brequire\.main\b/.test(text);
        if (!locations && !main) return { contents: text, loader };
        const file = functionPath(codeDir, args.path);
        const dir = path.posix.dirname(file);
        let prefix = locations
          ? `var __filename = ${JSON.stringify(file)}, __dirname = ${JSON.stringify(dir)}, __isletMeta = { url: ${JSON.stringify(`file://${file}`)}, filename: ${JSON.stringify(file)}, dirname: ${JSON.stringify(dir)} };`
          : '';
        // Guarded: an ES module that only mentions require.main has no `module`.
        if (main) prefix += `if (typeof module === "object" && module) { require.main = module; module.id = "."; module.filename = ${JSON.stringify(file)}; }`;
        const { contents, line, column } = insertAfterPrologue(text, prefix);
        shifts[file.slice(1)] = { line, column, length: prefix.length };
        return { contents, loader };
      });
    },
  };
}

/** Marks islet's own `build.resolve` calls, which the plugin must not answer again. */
const RESOLVING = Symbol('islet resolving');

function loaderFor(file: string): esbuild.Loader {
  if (/\.[cm]?ts$/.test(file)) return 'ts';
  if (file.endsWith('.tsx')) return 'tsx';
  if (file.endsWith('.jsx')) return 'jsx';
  return 'js';
}

/**
 * Puts `prefix` where it changes nothing else: after a hashbang (turned into a comment of the same
 * length) and after a 'use strict' directive, on that same line, so no line moves.
 */
function insertAfterPrologue(text: string, prefix: string): { contents: string; line: number; column: number } {
  let body = text;
  if (body.startsWith('#!')) body = `//${body.slice(2)}`;
  const prologue = /^(?:\s|\/\*[\s\S]*?\*\/|\/\/[^\n]*\n)*(['"])use strict\1\s*;?/.exec(body);
  const at = prologue ? prologue[0].length : body.startsWith('//') ? body.indexOf('\n') + 1 || body.length : 0;
  const before = body.slice(0, at);
  const line = before.split('\n').length;
  const column = at - (before.lastIndexOf('\n') + 1);
  const contents = at > 0 && !before.endsWith('\n') ? `${before}${prefix}${body.slice(at)}` : `${before}${prefix}${body.slice(at)}`;
  return { contents, line, column };
}

function isFailure(err: unknown): err is esbuild.BuildFailure {
  return typeof err === 'object' && err !== null && Array.isArray((err as esbuild.BuildFailure).errors);
}

/** An esbuild failure as the deploy's answer: the first error, at its place in the user's file. */
function buildError(err: unknown, shifts: FunctionBuild['shifts']): ServiceError {
  if (!isFailure(err) || err.errors.length === 0) return new ServiceError('ERR_INTERNAL', `could not build the function: ${(err as Error)?.message ?? String(err)}`);
  const first = err.errors[0]!;
  const loc = first.location;
  if (!loc) return new ServiceError('ERR_INVALID_FUNCTION', first.text, { key: 'file' });
  const file = loc.file.replace(/^islet-entry:(cjs|esm):/, '');
  const shift = shifts[file];
  const column = loc.column + 1 - (shift && shift.line === loc.line && loc.column >= shift.column + shift.length ? shift.length : 0);
  const more = err.errors.length > 1 ? `; and ${err.errors.length - 1} more error${err.errors.length > 2 ? 's' : ''}` : '';
  const missing = /^Could not resolve "(.*)"$/.exec(first.text);
  const message = missing ? `Cannot find module '${missing[1]}'` : `SyntaxError: ${first.text}`;
  return new ServiceError('ERR_INVALID_FUNCTION', `${message} (${file}:${loc.line}:${column}${more})`, { key: 'file', file, line: loc.line, column });
}
