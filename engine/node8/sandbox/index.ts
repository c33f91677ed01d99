/**
 * The runtime inside every node8 isolate. The host puts its callbacks on HOST_GLOBAL (see
 * engine/node8/bridge.ts), runs this script, takes the entry points from ENTRY_GLOBAL and deletes
 * both globals; then `init(config, bundle)` loads the function — the first time user code runs.
 * Compiled as RUNTIME_FILENAME, which is how its frames are removed from user-visible stacks.
 */
import { SlotMap } from '../../slot-map';
import { makeConsole } from '../../capabilities/console/guest/console';
import { budgetedLog } from '../../capabilities/console/guest/log-budget';
import { makeResponseStreams, type ChunkSource } from '../../capabilities/streams/guest/response-streams';
import { current, takeHost } from '../../sandbox/guest/host';
import { freeze, NativePromise, promiseResolve, promiseThen } from '../../sandbox/guest/intrinsics';
import { library, setLibraryRequire } from '../../sandbox/guest/libraries';
import { makeInvoke } from '../../capabilities/invoke/guest/invoke';
import { makeTimers } from '../../capabilities/timers/guest/timers';
import {
  ENTRY_GLOBAL,
  Fire,
  fromHost,
  HEADERS_SEPARATOR,
  META_SEPARATOR,
  NATIVE_OFF_THREAD,
  OFF_THREAD_BYTES,
  type CallResult,
  type FireKind,
  type HostBridge,
  type HostReply,
  type MetaHead,
  type NativeCall,
  type OpKind,
  type RawBody,
  RESEND_RESULTS,
  type SandboxConfig,
  type SandboxEntryPoints,
} from '../../sandbox/protocol';
import { makeBuiltinRequire } from './builtins';
import { installGlobals, installLazyGlobals } from './globals';
import { pickEntry, type Entry } from './handlers';
import type { serveFetch as ServeFetch, serveScheduled as ServeScheduled } from '../../capabilities/fetch/guest/fetch';
import { INTERNAL, type Internal, type OpAnswer, type ServeCall } from './internal';
import { ModuleSystem } from './modules';
import { installSlicedFill } from './sliced-fill';
import { makeWasmMemories, WASM_PAGE } from './wasm-memories';
import { makeRequest } from './request';
import { encodeError, encodeResult, HTTPResponse, setStreamOpener, userStack } from './response';

const g = globalThis as unknown as Record<string, unknown>;
// The host's callbacks, as constants of this closure, before any user code runs. Neither the
// host's object nor any of them is ever put on an object of this runtime (a property assignment
// goes through any setter user code put on a prototype) or handed to a method user code could
// replace; they reach islet's libraries only inside the closures of `internal`.
const {
  log: rawHostLog,
  timer: hostTimer,
  random: hostRandom,
  deliver: hostDeliver,
  startOp: hostStartOp,
  native: hostNative,
  nativeOffThread: hostNativeOffThread,
  readModule: hostReadModule,
  unbatch: hostUnbatch,
  background: hostBackground,
  chunk: hostChunk,
  socket: hostSocket,
} = takeHost<HostBridge>();
const hostLog = budgetedLog(rawHostLog);
// Kept for the WebAssembly library, which takes it once and hands out a guarded version (see web/wasm.ts).
let nativeWebAssembly: unknown = g.WebAssembly;
delete g.WebAssembly;
// V8's `gc` (engine/node-flags.ts), which only the count of WebAssembly memories calls.
const wasmMemories = makeWasmMemories(nativeWebAssembly, typeof g.gc === 'function' ? (g.gc as () => void) : undefined);
// Not configurable: it stays on the global object, undefined.
g.gc = undefined;

const consoleObject = makeConsole(hostLog);
const reportError = (err: unknown): void => {
  const text = err instanceof Error ? (userStack(err) ?? String(err)) : String(err);
  hostLog(current.requestId, 'error', `Uncaught ${text}`);
};

// The answers this instance streams, pulled by the host chunk by chunk.
const responseStreams = makeResponseStreams(hostChunk, reportError);
setStreamOpener((source) => responseStreams.open(source));

// Asynchronous host operations: started with a callback, settled by `fire` (a failure with its HostError).
const pendingOps = new SlotMap<{ resolve: (v: OpAnswer) => void; reject: (e: unknown) => void; requestId: string }>();
function op(kind: OpKind, payload: string, body?: ArrayBuffer): Promise<OpAnswer> {
  const requestId = current.requestId;
  return new NativePromise<OpAnswer>((resolve, reject) => {
    const id = pendingOps.add({ resolve, reject, requestId });
    hostStartOp(kind, id, requestId, payload, body);
  });
}

/** Where the host's WebSocket events go (engine/capabilities/websockets/guest), once that library is loaded. */
let socketEvents: ((key: number, event: unknown, data: unknown, reason: unknown) => void) | undefined;

const timers = makeTimers(hostTimer, reportError);
/** The function's env: `process.env`, `context.env` and a fetch-style handler's `env`. */
let env: Record<string, string> = {};
let memoryLimitMb = 128;

const invoke = makeInvoke(op);

/** The Node HTTP server that listened while the module loaded: it serves every call (engine/capabilities/http-server). */
let serverCall: ServeCall | undefined;
/** Set once the entry is known: a server that listens later serves nothing. */
let loaded = false;
/** Set when the module made a server: waits for one to listen (the http-server library's). */
let untilListen: ((main: string, entrypoint: string) => Promise<void>) | undefined;

/** Requires at run time (computed names, createRequire): made on first use. */
let modules: ModuleSystem | undefined;
const moduleSystem = () => (modules ??= new ModuleSystem(hostReadModule, builtin));

/** How `applySyncPromise` is told to copy: an object of its own, which no prototype can add options to. */
const COPY_ARGUMENTS = freeze({ __proto__: null, arguments: freeze({ __proto__: null, copy: true }) });
/** The reference native calls run off the host's thread through, asked for on first need (about 7 KB per isolate). */
let offThread: ReturnType<HostBridge['nativeOffThread']> | undefined;

/**
 * A native call. Inputs over OFF_THREAD_BYTES run off the host's thread while this isolate waits,
 * and so does work the caller says is long whatever its input (`long`: key derivation, key
 * generation), and whatever the host finds too heavy for its thread (it answers NATIVE_OFF_THREAD:
 * the host judges, whatever this side thought). The size rule is here, not in the libraries that
 * call: a library's function that reached user code still could not run a large input on the
 * host's thread.
 */
function native(call: NativeCall, payload: unknown, bytes?: readonly Uint8Array[], long = false): HostReply {
  const [body, json, size] = nativeArguments(payload, bytes);
  if (!long && size <= OFF_THREAD_BYTES) {
    const reply = hostNative(call, json, body);
    if (reply !== NATIVE_OFF_THREAD) return reply;
  }
  offThread ??= hostNativeOffThread();
  return offThread.applySyncPromise(undefined, [call, json, body], COPY_ARGUMENTS);
}

/** What islet's libraries get with `require(INTERNAL)`: closures over the host's callbacks, in an object no user code can reach or extend. */
const internal: Internal = freeze({
  __proto__: null,
  log: (level: string, text: string) => hostLog(current.requestId, level, text),
  unbatch: () => hostUnbatch(),
  random: (bytes: number) => hostRandom(bytes),
  native,
  op,
  current,
  background: (token: number, open: boolean) => hostBackground(token, open, current.requestId),
  openStream: (source: ChunkSource) => responseStreams.open(source),
  socket: (key: number, op: number, data?: string | ArrayBuffer | number, reason?: string) => hostSocket(key, op, data, reason),
  onSocketEvent: (handler: (key: number, event: unknown, data: unknown, reason: unknown) => void) => {
    socketEvents ??= handler;
  },
  reportError,
  get env() {
    return env;
  },
  requireFrom: (dir: string) => moduleSystem().requireFrom(dir),
  library,
  takeWebAssembly: () => {
    const taken = nativeWebAssembly;
    nativeWebAssembly = undefined;
    return taken;
  },
  get memoryLimitMb() {
    return memoryLimitMb;
  },
  wasmMemories,
  serverCreated: (wait: (main: string, entrypoint: string) => Promise<void>) => {
    untilListen ??= wait;
  },
  listen: (serve: ServeCall) => {
    if (loaded || serverCall) return loaded ? 'loaded' : 'taken';
    serverCall = serve;
    return undefined;
  },
});

const builtin = makeBuiltinRequire({
  __proto__: null,
  sdk: Object.freeze({ invoke }),
  timers: { ...timers.globals },
  console: consoleObject,
});
setLibraryRequire((id) => (id === INTERNAL ? internal : builtin(id)));

installSlicedFill();
installGlobals({
  ...timers.globals,
  console: consoleObject,
  global: globalThis,
  self: globalThis,
  reportError,
});

/** A native call's byte inputs as one body (their lengths go in the JSON as `n`), its JSON and its size. */
function nativeArguments(payload: unknown, bytes?: readonly Uint8Array[]): [body: ArrayBuffer | undefined, json: string, size: number] {
  if (!bytes || bytes.length === 0) return [undefined, JSON.stringify(payload), 0];
  const lengths: number[] = [];
  let total = 0;
  for (let i = 0; i < bytes.length; i++) {
    lengths[i] = bytes[i]!.byteLength;
    total += lengths[i]!;
  }
  const all = new Uint8Array(total);
  let offset = 0;
  for (let i = 0; i < bytes.length; i++) {
    all.set(bytes[i]!, offset);
    offset += lengths[i]!;
  }
  return [all.buffer, JSON.stringify({ ...(payload as object), n: lengths }), total];
}

let entry: Entry | undefined;
/** Set while the entry module awaits at its top level: calls that arrive meanwhile wait for it. */
let ready: Promise<unknown> | undefined;

type Bundle = (exportsOf: (namespace: Record<string, unknown>, esm: boolean) => void, require: (id: string) => unknown, requireFrom: (dir: string, id: string) => unknown) => unknown;

/**
 * Makes this isolate the function described by `configJson`: runs its bundle (compiled by the
 * host with V8's code cache), whose entry module hands over its namespace. A bundle whose modules
 * await at their top level answers a promise. Throws with a message naming the file and export.
 */
function init(configJson: string, bundle: Bundle): unknown {
  if (entry) throw new Error('this isolate is already initialised');
  installLazyGlobals();
  const config = JSON.parse(configJson) as SandboxConfig & { memoryMb?: number };
  env = { ...config.env, SERVICE_ACCOUNT_ID: config.accountId };
  memoryLimitMb = config.memoryMb ?? 128;
  const mainDir = config.main.includes('/') ? config.main.slice(0, config.main.lastIndexOf('/')) : '';
  // The bundle's own require (for names it could not bundle) resolves from the entry file's folder.
  const require = Object.assign((id: string) => moduleSystem().requireFrom(mainDir)(id), {
    resolve: (id: string) => (moduleSystem().requireFrom(mainDir) as unknown as { resolve(id: string): string }).resolve(id),
    cache: {},
  });
  let namespace: Record<string, unknown> | undefined;
  let esm = false;
  const done = bundle(
    (ns, isEsm) => {
      namespace = ns;
      // An ES module required by the CommonJS bundle comes as its namespace, marked __esModule.
      esm = isEsm || (typeof ns === 'object' && ns !== null && ns.__esModule === true);
    },
    require,
    (dir, id) => moduleSystem().requireFrom(dir)(id),
  );
  const serve = (): Entry['style'] => {
    entry = { style: 'server', serve: serverCall! };
    loaded = true;
    return entry.style;
  };
  // The handler's style is init's answer (or its promise's): the host keeps it with the version
  // (the console shows it).
  const finish = (): Entry['style'] | Promise<Entry['style']> => {
    if (serverCall) return serve();
    try {
      entry = pickEntry(namespace ?? {}, esm, config.main, config.entrypoint);
      loaded = true;
      return entry.style;
    } catch (err) {
      // A module without a handler that made a server: it may listen a little later (Fastify).
      if (!untilListen) throw err;
      return promiseThen(promiseResolve(untilListen(config.main, config.entrypoint)), serve);
    }
  };
  if (done instanceof NativePromise) {
    ready = promiseThen(done, finish);
    return ready;
  }
  const style = finish();
  if (style instanceof NativePromise) ready = style;
  return style;
}

function parseBody(raw: string | ArrayBuffer | number | undefined): unknown {
  if (raw === undefined || raw === '') return {};
  if (typeof raw !== 'string') return undefined;
  try {
    return JSON.parse(raw);
  } catch {
    return undefined;
  }
}

/**
 * One invocation. `raw` is the body as text when it is valid UTF-8, as bytes otherwise. Returns the
 * result at once when the handler returns a plain value, a promise of it otherwise.
 */
function call(meta: string, raw: string | ArrayBuffer | number | undefined): CallResult | Promise<CallResult> {
  if (!entry && ready) return promiseThen(ready, () => call(meta, raw), encodeError);
  // The headers' JSON is parsed on first read (see `callMeta` in the protocol).
  const tab = meta.indexOf(HEADERS_SEPARATOR);
  const head = JSON.parse(meta.slice(0, tab)) as MetaHead;
  const requestId = head[0];
  current.requestId = requestId;
  const target = entry!;
  if (target.style === 'server') return promiseThen(promiseResolve(target.serve(head, meta.slice(tab + 1), raw)), undefined, encodeError);
  if (target.style === 'fetch') {
    const { serveFetch, serveScheduled } = library<{ serveFetch: typeof ServeFetch; serveScheduled: typeof ServeScheduled }>('web/fetch');
    if (head[4]) return promiseThen(serveScheduled(target.target, head[4], env), undefined, encodeError);
    return promiseThen(serveFetch(target.target, head, JSON.parse(meta.slice(tab + 1)) as Record<string, string>, raw, env), undefined, encodeError);
  }
  if (typeof raw === 'number') {
    // A seed handler takes its body parsed: read whole first (one copy, as text when it is UTF-8).
    return promiseThen(op('bodyWhole', `{"id":${raw}}`), (answer: OpAnswer) => call(meta, answer.body ?? (answer.payload === '' ? undefined : answer.payload)), encodeError);
  }
  let value: unknown;
  try {
    const request = makeRequest(head, meta.slice(tab + 1), raw, env);
    // Called as a plain function, as before: a method call would name it `[as handler]` in stacks.
    const handler = target.handler;
    // A scheduled run says so on its context (`scheduled: {cron, scheduledTime}`), which HTTP cannot set.
    value = handler(parseBody(raw), head[4] ? { request, HTTPResponse, requestId, env, scheduled: head[4] } : { request, HTTPResponse, requestId, env });
  } catch (err) {
    return encodeError(err);
  }
  if (typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function') {
    return promiseThen(promiseThen(promiseResolve(value), encodeResult), undefined, encodeError);
  }
  try {
    return encodeResult(value);
  } catch (err) {
    return encodeError(err);
  }
}

/**
 * The calls that reached this isolate in one turn of the host's event loop, in one entry: `metas`
 * joined by newlines (JSON has none), their ids joined by commas, then one body argument per call.
 * Results of plain values come back in the array; a call whose handler returned a promise leaves 0
 * there and its result comes later through `host.deliver`.
 */
function callMany(metasArgument: string | [string], ids: string, ...bodies: RawBody[]): (CallResult | 0)[] {
  const metas = fromHost(metasArgument);
  if (metas === RESEND_RESULTS) return lastBatch?.ids === ids ? lastBatch.results : [];
  lastBatch = undefined;
  let results: (CallResult | 0)[];
  // One call (the common case when a function is not busy): no lists to split.
  if (!metas.includes(META_SEPARATOR)) results = [settleLater(call(metas, fromHost(bodies[0])), ids)];
  else {
    const list = metas.split(META_SEPARATOR);
    const idList = ids.split(',');
    results = [];
    for (let i = 0; i < list.length; i++) results.push(settleLater(call(list[i]!, fromHost(bodies[i])), idList[i]!));
  }
  for (let i = 0; i < results.length; i++) {
    if (results[i] !== 0) {
      lastBatch = { ids, results };
      break;
    }
  }
  return results;
}

/**
 * The last batch's answers, kept until the next batch: when a promise rejected with no handler by
 * the entry's end, isolated-vm throws it in place of the entry's answer, and the host asks again
 * (RESEND_RESULTS).
 */
let lastBatch: { ids: string; results: (CallResult | 0)[] } | undefined;

/** A call's result for the entry's answer, or 0 when it comes later through `host.deliver`. */
function settleLater(result: CallResult | Promise<CallResult>, id: string): CallResult | 0 {
  if (!(result instanceof NativePromise)) return withinWasmLimit(result);
  const callId = Number(id);
  promiseThen(result, (r: CallResult) => hostDeliver(callId, withinWasmLimit(r)));
  return 0;
}

/**
 * A call's result, or ERR_RESOURCE_LIMIT (the host then discards the instance) when its
 * WebAssembly memories grew past the function's memory limit together: wasm code grows them with
 * no JavaScript to stop it, each one only up to the limit (see engine/capabilities/wasm).
 */
function withinWasmLimit(result: CallResult): CallResult {
  const limitPages = (memoryLimitMb * 2 ** 20) / WASM_PAGE;
  const used = wasmMemories.usage(limitPages);
  if (used <= limitPages) return result;
  return {
    t: 'e',
    c: 'ERR_RESOURCE_LIMIT',
    m: `the function's WebAssembly memories use ${(used * WASM_PAGE) / 2 ** 20} MB together, over its memory limit of ${memoryLimitMb} MB: the instance was discarded`,
  };
}

/** Host events: a timer fired, an asynchronous operation finished, a stream is pulled, a WebSocket has news. */
function fire(kind: FireKind, id: number, ok?: boolean | number, payloadArgument?: string | [string] | ArrayBuffer | number, body?: ArrayBuffer | string): void {
  const payload = fromHost(payloadArgument);
  if (kind === Fire.timer) {
    timers.fire(id);
  } else if (kind === Fire.stream) {
    responseStreams.fire(id, ok, payload);
  } else if (kind === Fire.abort) {
    // Sent for fetch-style calls only, whose library is loaded.
    library<{ abortCall(requestId: string): void }>('web/fetch').abortCall(payload as string);
  } else if (kind === Fire.socket) {
    // A WebSocket's message (its data) or close (its code and reason).
    socketEvents?.(id, ok, payload, body);
  } else if (kind === Fire.op) {
    const pending = pendingOps.take(id);
    if (!pending) return;
    current.requestId = pending.requestId;
    // Without a prototype: resolving with it looks for a `then`, which Object.prototype could answer.
    if (ok) pending.resolve({ __proto__: null, payload: payload ?? '', body } as OpAnswer);
    else pending.reject(JSON.parse(payload as string));
  }
}

const entryPoints: SandboxEntryPoints = { call: callMany, fire, init };
g[ENTRY_GLOBAL] = entryPoints;
