import { randomBytes } from 'node:crypto';
import ivm from 'isolated-vm';

/** What the sandbox's host callbacks reach: the instance the isolate became (none while blank). */
export interface BridgeTarget {
  log(requestId: string, level: string, text: string): void;
  readModule(path: string): string | undefined;
  setTimer(op: number, id: number, ms: number): void;
  startOp(kind: string, id: number, payload: string, body: unknown): void;
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
 * Creates a blank isolate. Only islet's own code runs here, so it runs synchronously on the calling
 * thread (about 2 ms): each asynchronous step would cost a round trip to the isolate's thread.
 * `sandbox.cache` is filled on first use and reused (V8 code cache of the runtime script).
 */
export function createBlankIsolate(memoryMb: number, sandbox: { source: string; cache?: ivm.ExternalCopy<ArrayBuffer> }): BlankIsolate {
  const bridge: BlankIsolate['bridge'] = { target: undefined };
  const isolate = new ivm.Isolate({ memoryLimit: memoryMb, onCatastrophicError: () => bridge.target?.onCatastrophe() });
  try {
    const context = isolate.createContextSync();
    const host = isolate.compileScriptSync('({})').runSync(context, { reference: true }) as ivm.Reference<Record<string, unknown>>;
    // Each callback copies its arguments in and its result out; none hands the isolate a host object.
    host.setSync('log', new ivm.Callback((requestId: unknown, level: unknown, text: unknown) => {
      bridge.target?.log(String(requestId).slice(0, 64), String(level).slice(0, 8), String(text));
    }, { ignored: true }));
    host.setSync('readModule', new ivm.Callback((path: unknown) => (typeof path === 'string' ? bridge.target?.readModule(path) : undefined)));
    host.setSync('timer', new ivm.Callback((op: unknown, id: unknown, ms: unknown) => bridge.target?.setTimer(Number(op), Number(id), Number(ms)), { ignored: true }));
    host.setSync('random', new ivm.Callback((n: unknown) => randomBytes(Math.min(Math.max(Number(n) | 0, 1), 65536)).toString('hex')));
    host.setSync('startOp', new ivm.Callback(
      (kind: unknown, id: unknown, _requestId: unknown, payload: unknown, body: unknown) => bridge.target?.startOp(String(kind), Number(id), String(payload), body),
      { ignored: true },
    ));
    context.global.setSync('__isletHost', host.derefInto());
    const script: CachedScript = isolate.compileScriptSync(sandbox.source, {
      filename: SANDBOX_NAME,
      ...(sandbox.cache ? { cachedData: sandbox.cache } : { produceCachedData: true }),
    });
    if (!sandbox.cache && script.cachedData) sandbox.cache = script.cachedData;
    script.runSync(context);
    const api = context.global.getSync('__islet', { reference: true }) as ivm.Reference<Record<string, unknown>>;
    const blank: BlankIsolate = {
      isolate,
      context,
      memoryMb,
      callRef: api.getSync('call', { reference: true }) as ivm.Reference<unknown>,
      fireRef: api.getSync('fire', { reference: true }) as ivm.Reference<unknown>,
      initRef: api.getSync('init', { reference: true }) as ivm.Reference<unknown>,
      bridge,
    };
    context.evalSync('delete globalThis.__islet; delete globalThis.__isletHost;');
    return blank;
  } catch (err) {
    isolate.dispose();
    throw err;
  }
}
