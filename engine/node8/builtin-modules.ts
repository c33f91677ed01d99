/**
 * The names of Node's built-in modules (Node 20's `module.builtinModules`, without the internal
 * underscore ones). `require`/`import` of any of them, with or without `node:`, reaches islet's
 * module of that name inside the sandbox (engine/node8/sandbox/builtins.ts), never a package of the
 * same name: Node resolves them the same way. Shared by the host's build (engine/node8/build.ts,
 * scripts/build.js) and the sandbox.
 */
export const BUILTIN_MODULES: ReadonlySet<string> = new Set([
  'assert', 'assert/strict', 'async_hooks', 'buffer', 'child_process', 'cluster', 'console', 'constants',
  'crypto', 'dgram', 'diagnostics_channel', 'dns', 'dns/promises', 'domain', 'events', 'fs', 'fs/promises',
  'http', 'http2', 'https', 'inspector', 'inspector/promises', 'module', 'net', 'os', 'path', 'path/posix',
  'path/win32', 'perf_hooks', 'process', 'punycode', 'querystring', 'readline', 'readline/promises', 'repl',
  'stream', 'stream/consumers', 'stream/promises', 'stream/web', 'string_decoder', 'sys', 'timers',
  'timers/promises', 'tls', 'trace_events', 'tty', 'url', 'util', 'util/types', 'v8', 'vm', 'wasi',
  'worker_threads', 'zlib',
]);
