/**
 * The runtime inside every node8 isolate. The host puts its callbacks on HOST_GLOBAL (see
 * engine/node8/bridge.ts), runs this script, takes the entry points from ENTRY_GLOBAL and deletes
 * both globals; then `init(config, bundle)` loads the function — the first time user code runs.
 * Compiled as RUNTIME_FILENAME, which is how its frames are removed from user-visible stacks.
 */
import { SlotMap } from '../../slot-map';
import { makeConsole } from '../../sandbox/guest/console';
import { current, takeHost } from '../../sandbox/guest/host';
import { library, setLibraryRequire } from '../../sandbox/guest/libraries';
import { makeTimers } from '../../sandbox/guest/timers';
import {
  ENTRY_GLOBAL,
  Fire,
  fromHost,
  HEADERS_SEPARATOR,
  META_SEPARATOR,
  type CallResult,
  type FireKind,
  type HostBridge,
  type MetaHead,
  type NativeCall,
  type NativeResult,
  type OpKind,
  type SandboxConfig,
  type SandboxEntryPoints,
} from '../../sandbox/protocol';
import { makeBuiltinRequire } from './builtins';
import { installGlobals, installLazyGlobals } from './globals';
import { pickEntry, type Entry } from './handlers';
import type { serveFetch as ServeFetch } from './web/fetch';
import { INTERNAL, type Internal, type OpAnswer } from './internal';
import { ModuleSystem } from './modules';
import { makeRequest } from './request';
import { encodeError, encodeResult, HTTPResponse, userStack } from './response';

const g = globalThis as unknown as Record<string, unknown>;
const host = takeHost<HostBridge>();
// Kept for the WebAssembly library, which hands out a guarded version (see web/wasm.ts).
const nativeWebAssembly = g.WebAssembly;
delete g.WebAssembly;

const consoleObject = makeConsole(host);
const reportError = (err: unknown): void => {
  const text = err instanceof Error ? userStack(err) ?? String(err) : String(err);
  host.log(current.requestId, 'error', `Uncaught ${text}`);
};

// Asynchronous host operations: started with a callback, settled by `fire`.
const pendingOps = new SlotMap<{ resolve: (v: OpAnswer) => void; reject: (e: Error) => void; requestId: string }>();
function op(kind: OpKind, payload: string, body?: ArrayBuffer): Promise<OpAnswer> {
  const requestId = current.requestId;
  return new Promise<OpAnswer>((resolve, reject) => {
    const id = pendingOps.add({ resolve, reject, requestId });
    host.startOp(kind, id, requestId, payload, body);
  });
}

const timers = makeTimers(host, reportError);
/** The function's env: `process.env`, `context.env` and a fetch-style handler's `env`. */
let env: Record<string, string> = {};

const invoke = async (accountId: unknown, functionName: unknown, apiKey: unknown, body?: unknown) => {
  const payload = JSON.stringify({ accountId: String(accountId), functionName: String(functionName), apiKey: apiKey === undefined || apiKey === null ? '' : String(apiKey), body: body === undefined ? '' : typeof body === 'string' ? body : JSON.stringify(body) });
  const result = await op('invoke', payload);
  return JSON.parse(result.payload) as { statusCode: number; headers: Record<string, string>; body: string };
};

/** Requires at run time (computed names, createRequire): made on first use. */
let modules: ModuleSystem | undefined;
const moduleSystem = () => (modules ??= new ModuleSystem(host, builtin));
let offThread: ReturnType<HostBridge['nativeOffThread']> | undefined;
const internal: Internal = {
  host,
  native: (call: NativeCall, payload: unknown, bytes?: readonly Uint8Array[]) => nativeCall((body, json) => host.native(call, json, body), payload, bytes),
  nativeOffThread: (call: NativeCall, payload: unknown, bytes?: readonly Uint8Array[]) =>
    nativeCall((body, json) => (offThread ??= host.nativeOffThread()).applySyncPromise(undefined, [call, json, body], { arguments: { copy: true } }), payload, bytes),
  op,
  current,
  background: (token, open) => host.background(token, open),
  reportError,
  env,
  requireFrom: (dir) => moduleSystem().requireFrom(dir),
  library,
  webAssembly: nativeWebAssembly,
  memoryLimitMb: 128,
};

const builtin = makeBuiltinRequire({
  sdk: Object.freeze({ invoke }),
  timers: { ...timers.globals },
  console: consoleObject,
});
setLibraryRequire((id) => (id === INTERNAL ? internal : builtin(id)));

installGlobals({
  ...timers.globals,
  console: consoleObject,
  global: globalThis,
  self: globalThis,
  reportError,
});

/** Concatenates a native call's byte inputs into one body (their lengths go in the JSON as `n`). */
function nativeCall(send: (body: ArrayBuffer | undefined, json: string) => NativeResult, payload: unknown, bytes?: readonly Uint8Array[]): NativeResult {
  let body: ArrayBuffer | undefined;
  let json = payload;
  if (bytes && bytes.length > 0) {
    const total = bytes.reduce((n, b) => n + b.byteLength, 0);
    const all = new Uint8Array(total);
    let offset = 0;
    for (const b of bytes) {
      all.set(b, offset);
      offset += b.byteLength;
    }
    body = all.buffer;
    json = { ...(payload as object), n: bytes.map((b) => b.byteLength) };
  }
  return send(body, JSON.stringify(json));
}

let entry: Entry | undefined;
/** Set while the entry module awaits at its top level: calls that arrive meanwhile wait for it. */
let ready: Promise<void> | undefined;

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
  env = internal.env = { ...config.env, SERVICE_ACCOUNT_ID: config.accountId };
  internal.memoryLimitMb = config.memoryMb ?? 128;
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
  const finish = () => {
    entry = pickEntry(namespace ?? {}, esm, config.main, config.entrypoint);
  };
  if (done instanceof Promise) {
    ready = done.then(finish);
    return ready;
  }
  finish();
  return undefined;
}

function parseBody(raw: string | ArrayBuffer | undefined): unknown {
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
function call(meta: string, raw: string | ArrayBuffer | undefined): CallResult | Promise<CallResult> {
  if (!entry && ready) return ready.then(() => call(meta, raw), encodeError);
  // The headers' JSON is parsed on first read (see `callMeta` in the protocol).
  const tab = meta.indexOf(HEADERS_SEPARATOR);
  const head = JSON.parse(meta.slice(0, tab)) as MetaHead;
  const requestId = head[0];
  current.requestId = requestId;
  const target = entry!;
  if (target.style === 'fetch') {
    const { serveFetch } = library<{ serveFetch: typeof ServeFetch }>('web/fetch');
    return serveFetch(target.target, head, JSON.parse(meta.slice(tab + 1)) as Record<string, string>, raw, env).then(undefined, encodeError);
  }
  let value: unknown;
  try {
    const request = makeRequest(head, meta.slice(tab + 1), raw, env);
    // Called as a plain function, as before: a method call would name it `[as handler]` in stacks.
    const handler = target.handler;
    value = handler(parseBody(raw), { request, HTTPResponse, requestId, env });
  } catch (err) {
    return encodeError(err);
  }
  if (typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function') {
    return Promise.resolve(value).then(encodeResult).then(undefined, encodeError);
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
function callMany(metasArgument: string | [string], ids: string, ...bodies: (string | [string] | ArrayBuffer | undefined)[]): (CallResult | 0)[] {
  const metas = fromHost(metasArgument);
  // One call (the common case when a function is not busy): no lists to split.
  if (!metas.includes(META_SEPARATOR)) return [settleLater(call(metas, fromHost(bodies[0])), ids)];
  const list = metas.split(META_SEPARATOR);
  const idList = ids.split(',');
  const results: (CallResult | 0)[] = [];
  for (let i = 0; i < list.length; i++) results.push(settleLater(call(list[i]!, fromHost(bodies[i])), idList[i]!));
  return results;
}

/** A call's result for the entry's answer, or 0 when it comes later through `host.deliver`. */
function settleLater(result: CallResult | Promise<CallResult>, id: string): CallResult | 0 {
  if (!(result instanceof Promise)) return result;
  const callId = Number(id);
  result.then((r) => host.deliver(callId, r));
  return 0;
}

/** Host events: a timer fired, or an asynchronous operation finished. */
function fire(kind: FireKind, id: number, ok?: boolean, payloadArgument?: string | [string], body?: ArrayBuffer): void {
  const payload = fromHost(payloadArgument);
  if (kind === Fire.timer) {
    timers.fire(id);
  } else if (kind === Fire.op) {
    const pending = pendingOps.take(id);
    if (!pending) return;
    current.requestId = pending.requestId;
    if (ok) pending.resolve({ payload: payload ?? '', body });
    else pending.reject(new TypeError(payload ?? 'operation failed'));
  }
}

const entryPoints: SandboxEntryPoints = { call: callMany, fire, init };
g[ENTRY_GLOBAL] = entryPoints;
