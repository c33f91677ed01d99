/**
 * The runtime inside every Python isolate. The host defines HOST_GLOBAL (callbacks, see
 * python/bridge.ts) and `__isletPy` (the Pyodide files and the memory snapshot, copied in),
 * runs this script, evaluates Pyodide's two modules, and awaits `__isletBoot(asm, loader)` with
 * their namespaces. Pyodide runs in its "JS shell" mode (it looks for `read` and `load` when its
 * module is evaluated): it reads files only through `read`/`readbuffer` below, which serve the
 * copied bytes, and those globals are removed once it has booted.
 */
import { budgetedLog } from '../../engine/capabilities/console/guest/log-budget';
import { makeResponseStreams, type ChunkSource } from '../../engine/capabilities/streams/guest/response-streams';
import { current, takeHost } from '../../engine/sandbox/guest/host';
import { apply, freeze } from '../../engine/sandbox/guest/intrinsics';
import { makeCrypto } from '../../engine/capabilities/subtle/guest/random';
import { TextDecoder, TextEncoder } from '../../engine/sandbox/guest/text';
import { makeTimers } from '../../engine/capabilities/timers/guest/timers';
import {
  ENTRY_GLOBAL,
  Fire,
  fromHost,
  requestIdOfMeta,
  META_SEPARATOR,
  RESEND_RESULTS,
  type CallResult,
  type FireKind,
  type HostBridge,
  type HostReply,
  type SandboxEntryPoints,
  type SyncOpKind,
} from '../../engine/sandbox/protocol';
import { MessageChannel } from './message-channel';
import { mountLazyFiles, type LazyFs } from './lazy-files';

interface PyFiles {
  /** The interpreter, compiled once by the host and shared by every Python isolate (python/runtime.ts). */
  module: WebAssembly.Module;
  stdlib: ArrayBuffer;
  snapshot: ArrayBuffer;
  lock: string;
  /** Largest WebAssembly memory the interpreter may grow to, in bytes. */
  memoryCap: number;
}

interface PyProxyLike {
  (...args: unknown[]): unknown;
  toJs?: () => unknown;
  destroy?: () => void;
}

/** Python bytes as Pyodide hands them to JavaScript. */
interface PyBytesLike {
  toJs(): Uint8Array;
}

interface PyodideLike {
  FS: LazyFs;
  runPython(code: string): unknown;
  globals: { get(name: string): PyProxyLike };
  _api?: { config?: { _loadSnapshot?: unknown } };
}

const g = globalThis as unknown as Record<string, unknown>;
/**
 * The Python bridge's callbacks (python/bridge.ts): the common ones, and `opSync` for the
 * operations Python waits for. Taken into constants of this closure before any user code runs;
 * none is ever put on an object of this runtime or handed to a method user code could replace
 * (Python code reaches JavaScript through Pyodide's objects, and can run it).
 */
const {
  log: rawHostLog,
  timer: hostTimer,
  random: hostRandom,
  deliver: hostDeliver,
  chunk: hostChunk,
  opSync: hostOpSync,
} = takeHost<Pick<HostBridge, 'log' | 'timer' | 'random' | 'deliver' | 'chunk'> & { opSync: { applySyncPromise(receiver: unknown, args: unknown[], options: object): HostReply } }>();
const hostLog = budgetedLog(rawHostLog);
/** The answers this instance streams (generators), pulled by the host chunk by chunk. */
const responseStreams = makeResponseStreams(hostChunk, (err) => hostLog(current.requestId, 'error', `Uncaught ${err instanceof Error ? err.message : String(err)}`));
/** How `applySyncPromise` is told to copy: an object of its own, which no prototype can add options to. */
const COPY_ARGUMENTS = freeze({ __proto__: null, arguments: freeze({ __proto__: null, copy: true }) });
const files = g.__isletPy as PyFiles;
/** V8's gc(), which this isolate's context alone was made with (see python/runtime.ts); user code never sees it. */
const collectGarbage = typeof g.gc === 'function' ? (g.gc as () => void) : undefined;
// V8 may install it undeletable; then it is at least emptied.
if (!Reflect.deleteProperty(g, 'gc')) Reflect.set(g, 'gc', undefined);
type Loader = { loadPyodide(options: Record<string, unknown>): Promise<PyodideLike> };
delete g.__isletPy;

const reportError = (err: unknown): void => hostLog(current.requestId, 'error', `Uncaught ${err instanceof Error ? err.message : String(err)}`);
const timers = makeTimers(hostTimer, reportError);
const cryptoObject = makeCrypto(hostRandom);

/**
 * The interpreter's module, compiled by the host: its code (and what V8 tiers up) is shared by
 * every Python isolate instead of compiled in each. Pyodide reads `pyodide.asm.wasm` for bytes to
 * instantiate; it is handed this marker, which `WebAssembly.instantiate` below knows.
 */
let compiledModule: WebAssembly.Module | undefined = files.module;
const COMPILED_MARKER = new ArrayBuffer(8);

// What Pyodide's loader and Emscripten's shell mode expect to find.
const shellGlobals: Record<string, unknown> = {
  read(path: string): string {
    throw new Error(`read(${path}): not available`);
  },
  readbuffer(path: string): ArrayBuffer {
    if (path.endsWith('pyodide.asm.wasm') && compiledModule) return COMPILED_MARKER;
    if (path.endsWith('python_stdlib.zip')) return files.stdlib;
    throw new Error(`readbuffer(${path}): not available`);
  },
  load() {
    throw new Error('load(): not available');
  },
  print: (...args: unknown[]) => hostLog(current.requestId, 'info', args.join(' ')),
  printErr: (...args: unknown[]) => hostLog(current.requestId, 'error', args.join(' ')),
  // Emscripten's shell mode reads random bytes with `sh -c "head -cN /dev/urandom | base64"`; answer
  // only that, with the host's random bytes, and run nothing.
  os: {
    system(cmd: unknown, args: unknown): string {
      const m = /^head -c(\d+) \/dev\/urandom \| base64 --wrap=0$/.exec(Array.isArray(args) ? String(args[1]) : '');
      if (cmd !== 'sh' || !m || Number(m[1]) > 65536) throw new Error('os.system is not available');
      const bytes = new Uint8Array(Number(m[1]));
      (cryptoObject as { getRandomValues(a: Uint8Array): Uint8Array }).getRandomValues(bytes);
      let text = '';
      for (const b of bytes) text += String.fromCharCode(b);
      return base64(text);
    },
  },
};

function base64(binary: string): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
  let out = '';
  for (let i = 0; i < binary.length; i += 3) {
    const n = (binary.charCodeAt(i) << 16) | ((binary.charCodeAt(i + 1) || 0) << 8) | (binary.charCodeAt(i + 2) || 0);
    out += alphabet[(n >> 18) & 63]! + alphabet[(n >> 12) & 63]! + (i + 1 < binary.length ? alphabet[(n >> 6) & 63]! : '=') + (i + 2 < binary.length ? alphabet[n & 63]! : '=');
  }
  return out;
}

Object.assign(g, shellGlobals, timers.globals, {
  // Pyodide schedules its event loop's callbacks through a MessageChannel when there is one (else
  // setTimeout, a host round trip of at least a millisecond each).
  MessageChannel,
  TextEncoder,
  TextDecoder,
  crypto: cryptoObject,
  performance: { now: () => Date.now(), timeOrigin: Date.now() },
});

// isolated-vm never settles the promises of WebAssembly.compile/instantiate (its issue #308);
// the synchronous constructors work, so wrap them to look asynchronous.
const wasm = WebAssembly as unknown as Record<string, unknown>;
wasm.compile = async (bytes: BufferSource) => new WebAssembly.Module(bytes);
wasm.instantiate = async (source: BufferSource | WebAssembly.Module, imports?: WebAssembly.Imports) => {
  if (compiledModule && (source === COMPILED_MARKER || (ArrayBuffer.isView(source) && source.buffer === COMPILED_MARKER))) {
    return { module: compiledModule, instance: new WebAssembly.Instance(compiledModule, imports) };
  }
  if (source instanceof WebAssembly.Module) return new WebAssembly.Instance(source, imports);
  const module = new WebAssembly.Module(source);
  return { module, instance: new WebAssembly.Instance(module, imports) };
};
// isolated-vm's memoryLimit does not count WebAssembly memory: refuse growth past the cap, which
// Python sees as MemoryError.
// The originals are called as they were now: Python code can run JavaScript, which could replace
// Function.prototype.call (to be handed `grow`) or the getters of a memory's size.
const grow = WebAssembly.Memory.prototype.grow;
const bufferOf = Object.getOwnPropertyDescriptor(WebAssembly.Memory.prototype, 'buffer')!.get!;
const byteLengthOf = Object.getOwnPropertyDescriptor(ArrayBuffer.prototype, 'byteLength')!.get!;
const memoryCap = files.memoryCap;
WebAssembly.Memory.prototype.grow = function (this: WebAssembly.Memory, delta: number): number {
  // Converted once: the pages checked are the pages grown.
  const pages = delta >>> 0;
  const size = apply(byteLengthOf, apply(bufferOf, this, []), []) as number;
  if (size + pages * 65536 > memoryCap) {
    throw new RangeError(`WebAssembly memory limit of ${memoryCap} bytes reached`);
  }
  return apply(grow, this, [pages]) as number;
};

let pyCall: PyProxyLike | undefined;
let pyInit: PyProxyLike | undefined;
let pyodide: PyodideLike | undefined;

async function boot(asm: { default: unknown }, loader: Loader): Promise<void> {
  pyodide = await loader.loadPyodide({
    createPyodideModule: asm.default,
    indexURL: '/pyodide/',
    lockFileContents: JSON.parse(files.lock),
    _loadSnapshot: new Uint8Array(files.snapshot),
    jsglobals: Object.create(null),
    env: { HOME: '/function' },
    stdout: (line: string) => hostLog(current.requestId, 'info', line),
    stderr: (line: string) => hostLog(current.requestId, 'error', line),
  });
  // Drop the copies: Pyodide would otherwise keep the 30 MB snapshot alive.
  if (pyodide._api?.config) pyodide._api.config._loadSnapshot = undefined;
  for (const key of Object.keys(files)) delete (files as unknown as Record<string, unknown>)[key];
  compiledModule = undefined;
  // `os` stays: Emscripten draws randomness through it for as long as the interpreter runs.
  for (const name of Object.keys(shellGlobals)) if (name !== 'os') delete g[name];
  // islet's Python side (runtime.py, fetch's net.py, stdlib.py) is in the snapshot (python/make-snapshot.mjs).
  // The IANA time-zone database, read-only where zoneinfo, dateutil and pytz look for it.
  const [listed, zones] = opSync('tzdata', JSON.stringify({ key: '' }), undefined);
  if (listed) mountLazyFiles(pyodide.FS, '/usr/share/zoneinfo', JSON.parse(zones) as [string, number][], (key) => opSync('tzdata', JSON.stringify({ key }), undefined)[2], true);
  // Booted: user code (through run_js) must not make WebAssembly memories of its own, which would
  // escape the interpreter's cap. Pyodide keeps its own references to what it needs.
  delete g.WebAssembly;
  // What boot left behind (the 30 MB snapshot copy, the 9.6 MB wasm bytes, the module sources) is
  // outside V8's heap and below its external-memory trigger, so nothing would collect it until the
  // function had run for a while: 82 MB of RSS per warm instance instead of 58 (measured).
  collectGarbage?.();
  pyCall = pyodide.globals.get('_islet_call');
  pyInit = pyodide.globals.get('_islet_init');
  if (typeof pyCall !== 'function' || typeof pyInit !== 'function') throw new Error("the Python snapshot lacks islet's runtime");
}

/**
 * An operation Python waits for (see SyncOpKind): its thread blocks while the host works. Its
 * reply goes to Python as it came: ok, then the answer's JSON and bytes, or a HostError's JSON.
 */
function opSync(kind: SyncOpKind, payload: string, body: PyBytesLike | undefined): [boolean, string, Uint8Array | undefined] {
  const bytes = body == null ? undefined : (body.toJs().slice().buffer as ArrayBuffer);
  const result = hostOpSync.applySyncPromise(undefined, [kind, payload, bytes], COPY_ARGUMENTS);
  const out = (result as [boolean, string, ArrayBuffer?])[2];
  return [result[0], result[1], out === undefined ? undefined : new Uint8Array(out)];
}

/** A Python warning (the `warnings` module), as one `warn` line of the call running, not as stderr's `error` lines. */
function warn(text: unknown): void {
  hostLog(current.requestId, 'warn', String(text));
}

/** Delivers the result of an async handler once its task settled. */
function deliver(id: number, result: unknown): void {
  hostDeliver(id, toCallResult(result));
}

/**
 * Shows the function's files under /function (their bytes come from the host when first read) and
 * imports its module. Returns nothing, or the JSON of why the module could not load (message,
 * file, line, the function's own traceback).
 */
function init(configJson: string, functionFiles: string): string | undefined {
  if (!pyodide || !pyInit) throw new Error('the Python runtime has not booted');
  const files = JSON.parse(functionFiles) as [string, number][];
  mountLazyFiles(pyodide.FS, '/function', files, (path) => opSync('file', JSON.stringify({ path }), undefined)[2], false);
  const failure = pyInit(configJson, opSync, deliver, warn);
  return typeof failure === 'string' ? failure : undefined;
}

/** What islet's runtime failed with (its own errors; the user's are caught in Python): the exception line. */
function pythonMessage(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  const lines = text.trim().split('\n');
  return lines[lines.length - 1] ?? text;
}

/** `raw` is the body, or the id of one over the limit of a body read whole that Python reads as it arrives (runtime.py's _HostBody). */
function call(meta: string, raw: string | ArrayBuffer | number | undefined, id: number): CallResult | 0 {
  current.requestId = requestIdOfMeta(meta);
  let result: unknown;
  try {
    result = pyCall!(meta, raw === undefined || typeof raw === 'string' || typeof raw === 'number' ? raw : new Uint8Array(raw), id);
  } catch (err) {
    return { t: 'e', c: 'ERR_FUNCTION_FAILED', m: pythonMessage(err) };
  }
  return result === 0 ? 0 : toCallResult(result);
}

/** A result as runtime.py encodes it (a tagged string, or a tuple for bytes and errors) for the host. */
function toCallResult(result: unknown): CallResult {
  if (typeof result === 'string') return result;
  const proxy = result as PyProxyLike;
  const tuple = proxy.toJs!() as unknown[];
  proxy.destroy?.();
  if (tuple[0] === 'b') {
    const bytes = tuple[3] as Uint8Array;
    return { t: 'b', s: tuple[1] as number, h: JSON.parse(tuple[2] as string) as Record<string, string>, b: bytes.slice().buffer as ArrayBuffer };
  }
  if (tuple[0] === 's') return { t: 's', s: tuple[1] as number, h: JSON.parse(tuple[2] as string) as Record<string, string>, k: responseStreams.open(pythonChunks(tuple[3] as PyStream)) };
  const trace = tuple[3];
  return typeof trace === 'string' ? { t: 'e', c: String(tuple[1]), m: String(tuple[2]), k: trace } : { t: 'e', c: String(tuple[1]), m: String(tuple[2]) };
}

/** Several calls in one entry (see the node8 sandbox's callMany); an async handler's entry is 0 until it delivers. */
function callMany(metasArgument: string | [string], ids: string, ...bodies: (string | [string] | ArrayBuffer | number | undefined)[]): (CallResult | 0)[] {
  const metas = fromHost(metasArgument);
  // The host's second ask for a batch's answers (see RESEND_RESULTS): Python's are never lost that way.
  if (metas === RESEND_RESULTS) return [];
  const callIds = ids.split(',');
  return metas.split(META_SEPARATOR).map((meta, i) => call(meta, fromHost(bodies[i]), Number(callIds[i])));
}

function fire(kind: FireKind, id: number, op?: unknown, reason?: unknown): void {
  if (kind === Fire.timer) timers.fire(id);
  else if (kind === Fire.stream) responseStreams.fire(id, op, fromHost(reason as string | [string] | undefined));
  else if (kind === Fire.op) hostLog(current.requestId, 'error', 'unexpected operation result');
}

/** A streamed body of runtime.py (_BodyStream), as a reader of its chunks. */
interface PyStream {
  next(): PyProxyLike | Promise<unknown>;
  close(): void;
  destroy?: () => void;
}

function pythonChunks(stream: PyStream): ChunkSource {
  const step = (answer: unknown): { done: boolean; value?: unknown } => {
    const proxy = answer as PyProxyLike;
    const [state, value] = proxy.toJs!() as [string, unknown];
    proxy.destroy?.();
    if (state === 'more') return { done: false, value };
    stream.destroy?.();
    return { done: true };
  };
  return {
    next: () => {
      const answer = stream.next();
      // An async source answers an awaitable (a future on Pyodide's loop, driven by islet's timers).
      return typeof (answer as { then?: unknown }).then === 'function' ? (answer as Promise<unknown>).then(step) : Promise.resolve(step(answer));
    },
    cancel: () => {
      stream.close();
      stream.destroy?.();
    },
  };
}

g.__isletBoot = (asm: { default: unknown }, loader: Loader) => {
  delete g.__isletBoot;
  return boot(asm, loader).then(() => {
    const entryPoints: SandboxEntryPoints = { call: callMany, fire, init };
    g[ENTRY_GLOBAL] = entryPoints;
  });
};
