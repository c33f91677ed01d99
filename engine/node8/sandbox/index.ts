/**
 * The runtime inside every node8 isolate. The host puts its callbacks on HOST_GLOBAL (see
 * engine/node8/bridge.ts), runs this script, takes the entry points from ENTRY_GLOBAL and deletes
 * both globals; then `init(config, mainWrapper)` loads the function — the first time user code
 * runs. Compiled as RUNTIME_FILENAME, which is how its frames are removed from user-visible stacks.
 */
import { SlotMap } from '../../slot-map';
import { makeConsole } from '../../sandbox/guest/console';
import { current, takeHost } from '../../sandbox/guest/host';
import { getBuffer } from '../../sandbox/guest/text';
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
  type OpKind,
  type SandboxConfig,
  type SandboxEntryPoints,
} from '../../sandbox/protocol';
import { ModuleSystem } from './modules';
import { encodeError, encodeResult, HTTPResponse, userStack } from './response';
import { installWebGlobals } from './web';

const g = globalThis as unknown as Record<string, unknown>;
const host = takeHost<HostBridge>();

const consoleObject = makeConsole(host);
const reportError = (err: unknown): void => {
  const text = err instanceof Error ? userStack(err) ?? String(err) : String(err);
  host.log(current.requestId, 'error', `Uncaught ${text}`);
};

// Asynchronous host operations (fetch, sdk invoke): started with a callback, settled by `fire`.
const pendingOps = new SlotMap<{ resolve: (v: { payload: string; body: ArrayBuffer | undefined }) => void; reject: (e: Error) => void; requestId: string }>();
const ops = {
  start(kind: OpKind, payload: string, body: ArrayBuffer | undefined) {
    const requestId = current.requestId;
    return new Promise<{ payload: string; body: ArrayBuffer | undefined }>((resolve, reject) => {
      const id = pendingOps.add({ resolve, reject, requestId });
      host.startOp(kind, id, requestId, payload, body);
    });
  },
};

const timers = makeTimers(host, reportError);
installWebGlobals(host, ops);

const processObject = {
  env: {} as Record<string, string>,
  argv: ['node'],
  platform: 'linux',
  version: 'v8.17.0',
  versions: { node: '8.17.0', islet: '1' },
  release: { name: 'islet' },
  cwd: () => '/',
  nextTick: (fn: (...args: unknown[]) => void, ...args: unknown[]) => timers.globals.queueMicrotask(() => fn(...args)),
  hrtime: Object.assign(
    (prev?: [number, number]) => {
      const now = Date.now();
      const t: [number, number] = [Math.floor(now / 1000), (now % 1000) * 1e6];
      return prev ? [t[0] - prev[0], t[1] - prev[1]] : t;
    },
    { bigint: () => BigInt(Date.now()) * 1_000_000n },
  ),
  emitWarning: (warning: unknown) => consoleObject.warn(String(warning)),
  on: () => processObject,
  once: () => processObject,
  off: () => processObject,
  exit: () => {
    throw new Error('process.exit() is not available in islet functions');
  },
};

const invoke = async (accountId: unknown, functionName: unknown, apiKey: unknown, body?: unknown) => {
  const payload = JSON.stringify({ accountId: String(accountId), functionName: String(functionName), apiKey: apiKey === undefined || apiKey === null ? '' : String(apiKey), body: body === undefined ? '' : typeof body === 'string' ? body : JSON.stringify(body) });
  const result = await ops.start('invoke', payload, undefined);
  return JSON.parse(result.payload) as { statusCode: number; headers: Record<string, string>; body: string };
};
const sdkModule = Object.freeze({ invoke });

const builtins = {
  sdk: () => sdkModule,
  buffer: () => ({ Buffer: getBuffer() }),
  url: () => ({ URL: g.URL, URLSearchParams: g.URLSearchParams }),
  timers: () => ({ ...timers.globals }),
  process: () => processObject,
};

// WebAssembly memory is outside isolated-vm's memory accounting, and a module can declare or grow
// its own memory without any JavaScript call to intercept: functions get no WebAssembly.
delete g.WebAssembly;

Object.assign(g, timers.globals);
for (const [name, value] of Object.entries({ console: consoleObject, process: processObject, global: globalThis, self: globalThis })) {
  Object.defineProperty(g, name, { value, writable: true, configurable: true, enumerable: false });
}

type Handler = (body: unknown, context: unknown) => unknown;
let handler: Handler | undefined;

/**
 * Makes this isolate the function described by `configJson` and loads its main file (compiled by
 * the host, with V8's code cache). Throws with a message naming the file and export.
 */
function init(configJson: string, mainWrapper: Parameters<ModuleSystem['provideCompiled']>[1]): void {
  if (handler) throw new Error('this isolate is already initialised');
  const config = JSON.parse(configJson) as SandboxConfig;
  processObject.env = { ...config.env, SERVICE_ACCOUNT_ID: config.accountId };
  const modules = new ModuleSystem(config.files, host, builtins);
  modules.provideCompiled(config.main, mainWrapper);
  const exportsValue = modules.requireMain(config.main) as Record<string, unknown> | undefined;
  const candidate = exportsValue?.[config.entrypoint];
  if (typeof candidate !== 'function') {
    throw new Error(`${config.main} does not export a function named "${config.entrypoint}" (found ${candidate === undefined ? 'nothing' : typeof candidate})`);
  }
  handler = candidate as Handler;
}

/**
 * `request.query`: the last value of each name, decoded. Written for few allocations per call (each
 * young-generation page a call touches stays resident in every warm isolate): no decoding when the
 * query has no escapes, and no intermediate arrays.
 */
function parseQuery(raw: string): Record<string, string> {
  const query: Record<string, string> = {};
  if (!raw) return query;
  const escaped = raw.includes('%') || raw.includes('+');
  for (let start = 0; start < raw.length; ) {
    let end = raw.indexOf('&', start);
    if (end === -1) end = raw.length;
    if (end > start) {
      let eq = raw.indexOf('=', start);
      if (eq === -1 || eq > end) eq = end;
      const key = raw.slice(start, eq);
      const value = eq === end ? '' : raw.slice(eq + 1, end);
      setQuery(query, escaped ? decode(key) : key, escaped ? decode(value) : value);
    }
    start = end + 1;
  }
  return query;
}

/** An own property even for `__proto__`, which plain assignment would treat as the prototype. */
function setQuery(query: Record<string, string>, key: string, value: string): void {
  if (key === '__proto__') Object.defineProperty(query, key, { value, writable: true, enumerable: true, configurable: true });
  else query[key] = value;
}

function decode(s: string): string {
  const plain = s.includes('+') ? s.replaceAll('+', ' ') : s;
  if (!plain.includes('%')) return plain;
  try {
    return decodeURIComponent(plain);
  } catch {
    return plain;
  }
}

/**
 * A request field made on first read from what is kept under `source` (a symbol, not enumerable),
 * then kept there for the next read: an own enumerable accessor, so it shows in JSON, spread and
 * Object.keys like a plain field. One descriptor shared by every request: a getter written in each
 * request's object literal cost about 550 bytes of young-generation memory per call, and those
 * pages stay resident in every warm isolate.
 */
function madeOnFirstRead<T>(source: symbol, isMade: (kept: unknown) => kept is T, make: (kept: unknown) => T): PropertyDescriptor {
  return {
    enumerable: true,
    configurable: true,
    get(this: Record<symbol, unknown>) {
      const kept = this[source];
      if (isMade(kept)) return kept;
      const made = make(kept);
      // A frozen request makes it again on each read.
      if (typeof this === 'object' && this !== null) Reflect.defineProperty(this, source, { value: made, writable: true });
      return made;
    },
  };
}

/** `request.headers`: their JSON until the first read, then the object; the field can be assigned. */
const HEADERS_SOURCE = Symbol('headers');
const HEADERS_PROPERTY: PropertyDescriptor = {
  ...madeOnFirstRead(
    HEADERS_SOURCE,
    (kept): kept is Record<string, string> | undefined => typeof kept !== 'string',
    (json) => JSON.parse(json as string) as Record<string, string>,
  ),
  set(this: object, value: unknown) {
    Reflect.defineProperty(this, 'headers', { value, writable: true, enumerable: true, configurable: true });
  },
};

/** `request.body`: the raw body (absent when the call had none) until the first read, then its Buffer. */
const BODY_SOURCE = Symbol('body');
const BODY_PROPERTY = madeOnFirstRead(
  BODY_SOURCE,
  (kept): kept is Uint8Array => kept instanceof Uint8Array,
  (raw) => {
    const Buffer = getBuffer();
    return raw === undefined ? Buffer.from([]) : typeof raw === 'string' ? Buffer.from(raw, 'utf8') : Buffer.from(raw as ArrayBuffer);
  },
);

function makeRequest(head: MetaHead, headers: string, raw: string | ArrayBuffer | undefined) {
  const request: Record<string, unknown> = { method: head[1], path: head[2], query: parseQuery(head[3]) };
  Object.defineProperty(request, 'headers', HEADERS_PROPERTY);
  Object.defineProperty(request, HEADERS_SOURCE, { value: headers, writable: true });
  Object.defineProperty(request, 'body', BODY_PROPERTY);
  request.requestId = head[0];
  request.env = processObject.env;
  if (raw !== undefined) Object.defineProperty(request, BODY_SOURCE, { value: raw, writable: true });
  return request;
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
  // The headers' JSON is parsed on first read (see `callMeta` in the protocol).
  const tab = meta.indexOf(HEADERS_SEPARATOR);
  const head = JSON.parse(meta.slice(0, tab)) as MetaHead;
  const requestId = head[0];
  current.requestId = requestId;
  let value: unknown;
  try {
    const request = makeRequest(head, meta.slice(tab + 1), raw);
    value = handler!(parseBody(raw), { request, HTTPResponse, requestId, env: processObject.env });
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
    const op = pendingOps.take(id);
    if (!op) return;
    current.requestId = op.requestId;
    if (ok) op.resolve({ payload: payload ?? '', body });
    else op.reject(new TypeError(payload ?? 'operation failed'));
  }
}

const entryPoints: SandboxEntryPoints = { call: callMany, fire, init };
g[ENTRY_GLOBAL] = entryPoints;
