import ivm from 'isolated-vm';
import { takeEntryPoints, type BlankIsolate } from '../isolate/bridge';
import { newIsolate } from '../isolate/heap';
import { installLibraries } from '../isolate/libraries';
import { callMeta, META_SEPARATOR, RUNTIME_FILENAME } from '../sandbox/protocol';
import { installNode8Bridge, type Node8Bridge } from './bridge';

/** isolated-vm sets these on a Script compiled with cachedData options (missing from its typings). */
export type CachedScript = ivm.Script & ivm.CachedDataResult & { cachedDataRejected?: boolean };

/**
 * Creates a blank node8 isolate. Only islet's own code runs here, so it runs synchronously on the
 * calling thread (about 2 ms): each asynchronous step would cost a round trip to the isolate's
 * thread. `sandbox.cache` is filled on first use and reused (V8 code cache of the runtime script).
 */
/** A blank node8 isolate: its bridge also knows the files of the function it becomes. */
export type Node8BlankIsolate = BlankIsolate & { bridge: Node8Bridge };

export function createBlankIsolate(memoryMb: number, sandbox: { source: string; cache?: ivm.ExternalCopy<ArrayBuffer> }): Node8BlankIsolate {
  if (!sandbox.cache) sandbox.cache = warmedRuntimeCache(memoryMb, sandbox.source);
  return loadRuntime(memoryMb, sandbox.source, sandbox.cache);
}

/** A new isolate with islet's runtime script run in it (compiled from `cache` when there is one). */
function loadRuntime(memoryMb: number, source: string, cache: ivm.ExternalCopy<ArrayBuffer> | undefined): Node8BlankIsolate {
  const bridge: Node8Bridge = { target: undefined, files: undefined };
  const isolate = newIsolate(memoryMb, { onCatastrophicError: () => bridge.target?.onCatastrophe() });
  try {
    const context = isolate.createContextSync();
    installNode8Bridge(isolate, context, bridge);
    installLibraries(context);
    isolate.compileScriptSync(source, { filename: RUNTIME_FILENAME, ...(cache ? { cachedData: cache } : {}) }).runSync(context);
    return { isolate, context, memoryMb, bridge, ...takeEntryPoints(context) };
  } catch (err) {
    isolate.dispose();
    throw err;
  }
}

/** islet's own function for the warm-up below: a GET with a query and a POST with a JSON body. */
const WARM_UP_MAIN = `(function (__isletExports) {
  __isletExports({ warmUp: function (body, context) {
    return context.request.method === 'GET' ? 'Hello ' + String(context.request.query.name).toUpperCase() : { items: body.items.length };
  } });
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
    callRef.applySync(undefined, [`${get}${META_SEPARATOR}${post}`, '1,2', undefined, '{"items":[1,2]}'], { timeout: 1000, result: { copy: true } });
    const script: CachedScript = isolate.compileScriptSync(source, { filename: RUNTIME_FILENAME, produceCachedData: true });
    return script.cachedData;
  } finally {
    isolate.dispose();
  }
}
