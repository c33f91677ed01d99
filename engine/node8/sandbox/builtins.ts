/**
 * Node's built-in modules inside node8 isolates, and where each comes from: `<library>` (its
 * default export) or `<library>#<export>`. Each is made on first require, from islet's libraries
 * (engine/sandbox/library-names.ts); the modules the runtime owns (process, timers, console, sdk)
 * are given by it. Modules a sandbox cannot offer (net, child_process, worker_threads…) load, and
 * throw an error naming the module when used, as workerd's do.
 */
import { library } from '../../sandbox/guest/libraries';
import type { LibraryName } from '../../sandbox/library-names';

const UNAVAILABLE = ['child_process', 'cluster', 'dgram', 'dns', 'domain', 'http2', 'inspector', 'net', 'readline', 'repl', 'tls', 'trace_events', 'v8', 'vm', 'wasi', 'worker_threads'];

const FROM_LIBRARIES: Record<string, string> = {
  assert: 'node/assert',
  'assert/strict': 'node/assert#strict',
  async_hooks: 'node/async_hooks',
  buffer: 'buffer#node',
  constants: 'node/misc#constants',
  crypto: 'node/crypto',
  diagnostics_channel: 'node/misc#diagnostics_channel',
  'dns/promises': 'node/unavailable#dnsPromises',
  events: 'node/events',
  fs: 'node/fs',
  'fs/promises': 'node/fs#promises',
  http: 'node/http',
  https: 'node/http#https',
  'inspector/promises': 'node/unavailable#inspector',
  module: 'node/misc#module',
  os: 'node/misc#os',
  path: 'node/path',
  'path/posix': 'node/path',
  'path/win32': 'node/path#win32',
  perf_hooks: 'node/misc#perf_hooks',
  punycode: 'node/url#punycode',
  querystring: 'node/url#querystring',
  'readline/promises': 'node/unavailable#readline',
  stream: 'node/stream',
  'stream/consumers': 'node/stream#consumers',
  'stream/promises': 'node/stream#promises',
  'stream/web': 'web/streams#node',
  string_decoder: 'node/string_decoder',
  sys: 'node/util',
  'timers/promises': 'node/misc#timersPromises',
  tty: 'node/misc#tty',
  url: 'node/url',
  util: 'node/util',
  'util/types': 'node/util#types',
  zlib: 'node/zlib',
};
for (const name of UNAVAILABLE) FROM_LIBRARIES[name] = `node/unavailable#${name}`;

/** `require` of built-in modules: undefined for a name that is not one (a file or package then). */
export function makeBuiltinRequire(own: Record<string, unknown>): (id: string) => unknown {
  const made = new Map<string, unknown>();
  return (id) => {
    const name = id.startsWith('node:') ? id.slice(5) : id;
    if (Object.prototype.hasOwnProperty.call(own, name)) return own[name];
    const from = FROM_LIBRARIES[name];
    if (from === undefined) return undefined;
    let module = made.get(name);
    if (module === undefined) {
      const [lib, exported = 'default'] = from.split('#') as [LibraryName, string?];
      module = library<Record<string, unknown>>(lib)[exported];
      made.set(name, module);
    }
    return module;
  };
}
