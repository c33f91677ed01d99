import { randomBytes } from 'node:crypto';
import ivm from 'isolated-vm';
import { callMeta } from './instance';
import { installLibraries } from './libraries';

/** What the sandbox's host callbacks reach: the instance the isolate became (none while blank). */
export interface BridgeTarget {
  log(requestId: string, level: string, text: string): void;
  readModule(path: string): string | undefined;
  setTimer(op: number, id: number, ms: number): void;
  startOp(kind: string, id: number, payload: string, body: unknown): void;
  invokeSync(payload: string): Promise<string>;
  deliver(id: number, result: unknown): void;
  onCatastrophe(): void;
}

/** An isolate with islet's runtime loaded and no function yet: `init` turns it into one. */
export interface BlankIsolate {
  isolate: ivm.Isolate;
  context: ivm.Context;
  memoryMb: number;
  callRef: ivm.Reference<unknown>;
  fireRef: ivm.Reference<unknown>;
  initRef: ivm.Reference<unknown>;
  bridge: { target: BridgeTarget | undefined };
}

export const SANDBOX_NAME = 'islet:runtime';

/** isolated-vm sets these on a Script compiled with cachedData options (missing from its typings). */
export type CachedScript = ivm.Script & ivm.CachedDataResult & { cachedDataRejected?: boolean };

/**
 * Puts `__isletHost` on the context's global: the callbacks the sandbox captures and deletes before
 * any user code runs. Each copies its arguments in and its result out; none hands the isolate a
 * host object. They reach whatever instance `bridge.target` is (none while the isolate is blank).
 * `invokeSync` is for runtimes whose sdk calls are synchronous (Python).
 */
export function installBridge(isolate: ivm.Isolate, context: ivm.Context, bridge: BlankIsolate['bridge'], options: { invokeSync?: boolean } = {}): void {
  const host = isolate.compileScriptSync('({})').runSync(context, { reference: true }) as ivm.Reference<Record<string, unknown>>;
  host.setSync('log', new ivm.Callback((requestId: unknown, level: unknown, text: unknown) => {
    bridge.target?.log(String(requestId).slice(0, 64), String(level).slice(0, 8), String(text));
  }, { ignored: true }));
  host.setSync('readModule', new ivm.Callback((path: unknown) => (typeof path === 'string' ? bridge.target?.readModule(path) : undefined)));
  host.setSync('timer', new ivm.Callback((op: unknown, id: unknown, ms: unknown) => bridge.target?.setTimer(Number(op), Number(id), Number(ms)), { ignored: true }));
  host.setSync('deliver', new ivm.Callback((id: unknown, result: unknown) => bridge.target?.deliver(Number(id), result), { ignored: true }));
  host.setSync('random', new ivm.Callback((n: unknown) => randomBytes(Math.min(Math.max(Number(n) | 0, 1), 65536)).toString('hex')));
  host.setSync('startOp', new ivm.Callback(
    (kind: unknown, id: unknown, _requestId: unknown, payload: unknown, body: unknown) => bridge.target?.startOp(String(kind), Number(id), String(payload), body),
    { ignored: true },
  ));
  // The isolate's thread waits while the host's event loop runs the call. Only the sandbox's closure
  // holds this reference. Not given to isolates that do not need it: the first Reference in an
  // isolate sets up isolated-vm's Reference class there, about 19 KB.
  if (options.invokeSync) {
    host.setSync('invokeSync', new ivm.Reference(async (payload: unknown) => {
      if (!bridge.target) throw new Error('not initialised');
      return bridge.target.invokeSync(String(payload));
    }));
  }
  context.global.setSync('__isletHost', host.derefInto());
}

/** Takes the entry points the sandbox left on `__islet` and removes the sandbox's globals. */
export function takeEntryPoints(context: ivm.Context): Pick<BlankIsolate, 'callRef' | 'fireRef' | 'initRef'> {
  const api = context.global.getSync('__islet', { reference: true }) as ivm.Reference<Record<string, unknown>>;
  const refs = {
    callRef: api.getSync('call', { reference: true }) as ivm.Reference<unknown>,
    fireRef: api.getSync('fire', { reference: true }) as ivm.Reference<unknown>,
    initRef: api.getSync('init', { reference: true }) as ivm.Reference<unknown>,
  };
  context.evalSync('delete globalThis.__islet; delete globalThis.__isletHost;');
  return refs;
}

/**
 * Creates a blank node8 isolate. Only islet's own code runs here, so it runs synchronously on the
 * calling thread (about 2 ms): each asynchronous step would cost a round trip to the isolate's
 * thread. `sandbox.cache` is filled on first use and reused (V8 code cache of the runtime script).
 */
export function createBlankIsolate(memoryMb: number, sandbox: { source: string; cache?: ivm.ExternalCopy<ArrayBuffer> }): BlankIsolate {
  if (!sandbox.cache) sandbox.cache = warmedRuntimeCache(memoryMb, sandbox.source);
  return loadRuntime(memoryMb, sandbox.source, sandbox.cache);
}

/** A new isolate with islet's runtime script run in it (compiled from `cache` when there is one). */
function loadRuntime(memoryMb: number, source: string, cache: ivm.ExternalCopy<ArrayBuffer> | undefined): BlankIsolate {
  const bridge: BlankIsolate['bridge'] = { target: undefined };
  const isolate = new ivm.Isolate({ memoryLimit: memoryMb, onCatastrophicError: () => bridge.target?.onCatastrophe() });
  try {
    const context = isolate.createContextSync();
    installBridge(isolate, context, bridge);
    installLibraries(context);
    isolate.compileScriptSync(source, { filename: SANDBOX_NAME, ...(cache ? { cachedData: cache } : {}) }).runSync(context);
    return { isolate, context, memoryMb, bridge, ...takeEntryPoints(context) };
  } catch (err) {
    isolate.dispose();
    throw err;
  }
}

/** islet's own function for the warm-up below: a GET with a query and a POST with a JSON body. */
const WARM_UP_MAIN = `(function (exports, require, module) {
  module.exports.warmUp = function (body, context) {
    return context.request.method === 'GET' ? 'Hello ' + String(context.request.query.name).toUpperCase() : { items: body.items.length };
  };
})`;

/**
 * The runtime's V8 code cache, made in an isolate that has first answered two calls of islet's own
 * warm-up function. V8 caches only the functions compiled by then, and the runtime compiles its call
 * path (request, context, response) lazily: without this, every new isolate compiles it again on
 * its first call, a cold start's cost. Compiling the same source again in the same isolate returns
 * the script V8 already has, with those functions. No user code ever runs in this isolate.
 */
function warmedRuntimeCache(memoryMb: number, source: string): ivm.ExternalCopy<ArrayBuffer> | undefined {
  const { isolate, context, initRef, callRef } = loadRuntime(memoryMb, source, undefined);
  try {
    const main = isolate.compileScriptSync(WARM_UP_MAIN, { filename: '/warm-up.js' }).runSync(context, { reference: true }) as ivm.Reference<unknown>;
    const config = JSON.stringify({ accountId: 'islet', env: {}, files: ['warm-up.js'], main: 'warm-up.js', entrypoint: 'warmUp' });
    initRef.applySync(undefined, [config, main.derefInto()], { timeout: 1000 });
    const get = callMeta('warm-up', 'GET', '/', 'name=islet', { accept: '*/*' });
    const post = callMeta('warm-up', 'POST', '/', '', { 'content-type': 'application/json' });
    callRef.applySync(undefined, [`${get}\n${post}`, '1,2', undefined, '{"items":[1,2]}'], { timeout: 1000, result: { copy: true } });
    const script: CachedScript = isolate.compileScriptSync(source, { filename: SANDBOX_NAME, produceCachedData: true });
    return script.cachedData;
  } finally {
    isolate.dispose();
  }
}
