/**
 * Node's built-in modules inside node8 isolates, and where each comes from: `<library>` (its
 * default export) or `<library>#<export>`. Each is made on first require, from islet's libraries
 * (engine/sandbox/library-names.ts); the modules the runtime owns (process, timers, console, sdk)
 * are given by it. Modules a sandbox cannot offer (net, child_process, worker_threads…) load, and
 * throw an error naming the module when used, as workerd's do.
 */
import { library } from '../../sandbox/guest/libraries';
import { lookUpLibrary } from './library-table';

/** `<module>:<library>[#<export>]` (the default export when left out), one per line (see lookUpLibrary). */
const FROM_LIBRARIES = `
assert:node/assert
assert/strict:node/assert#strict
async_hooks:node/async_hooks
buffer:buffer#node
child_process:node/unavailable#child_process
cluster:node/unavailable#cluster
constants:node/misc#constants
crypto:node/crypto
dgram:node/unavailable#dgram
diagnostics_channel:node/misc#diagnostics_channel
dns:node/unavailable#dns
dns/promises:node/unavailable#dnsPromises
domain:node/unavailable#domain
events:node/events
fs:node/fs
fs/promises:node/fs#promises
http:node/http
http2:node/unavailable#http2
https:node/http#https
inspector:node/unavailable#inspector
inspector/promises:node/unavailable#inspector
module:node/misc#module
net:node/unavailable#net
os:node/misc#os
path:node/path
path/posix:node/path
path/win32:node/path#win32
perf_hooks:node/misc#perf_hooks
process:node/process
punycode:node/url#punycode
querystring:node/url#querystring
readline:node/unavailable#readline
readline/promises:node/unavailable#readline
repl:node/unavailable#repl
stream:node/stream
stream/consumers:node/stream#consumers
stream/promises:node/stream#promises
stream/web:web/streams#node
string_decoder:node/string_decoder
sys:node/util
timers/promises:node/misc#timersPromises
tls:node/unavailable#tls
trace_events:node/unavailable#trace_events
tty:node/misc#tty
url:node/url
util:node/util
util/types:node/util#types
v8:node/unavailable#v8
vm:node/unavailable#vm
wasi:node/unavailable#wasi
worker_threads:node/unavailable#worker_threads
zlib:node/zlib
`;

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
      const source = lookUpLibrary(FROM_LIBRARIES, name);
      if (source === undefined) return undefined;
      module = library<Record<string, unknown>>(source[0])[source[1] ?? 'default'];
      made.set(name, module);
    }
    return module;
  };
}
