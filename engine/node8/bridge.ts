import ivm from 'isolated-vm';
import { commonCallbacks, installHostObject, type Bridge, type BridgeTarget, type OpResult } from '../isolate/bridge';
import type { InstanceServices } from '../runtime';
import type { NativeCall, OpKind } from '../sandbox/protocol';
import type { FunctionFiles } from '../capabilities/fs/host';
import { nativeErrorMessage, runNative, runNativeOffThread } from './host/native';

/** A node8 isolate's bridge also knows the files of the function it became (for `fs` and `require`). */
export interface Node8Bridge extends Bridge {
  files: FunctionFiles | undefined;
}

/**
 * The host side of the node8 sandbox: the only place that answers its calls (see HostBridge in
 * engine/sandbox/protocol.ts). Besides the common callbacks, a node8 isolate reads its own files
 * for `require`, starts asynchronous operations, and makes native calls for crypto, zlib and fs.
 */
export function installNode8Bridge(isolate: ivm.Isolate, context: ivm.Context, bridge: Node8Bridge): void {
  const noFiles: FunctionFiles = { codeDir: '/nonexistent', files: new Set() };
  // Handed to the sandbox on first need only: the first Reference in an isolate costs it about 7 KB.
  let offThread: ivm.Reference<unknown> | undefined;
  installHostObject(isolate, context, {
    ...commonCallbacks(bridge),
    unbatch: new ivm.Callback(() => bridge.target?.unbatch(), { ignored: true }),
    readModule: new ivm.Callback((path: unknown) => (typeof path === 'string' ? bridge.target?.readModule(path) : undefined)),
    startOp: new ivm.Callback(
      (kind: unknown, id: unknown, _requestId: unknown, payload: unknown, body: unknown) => {
        const target = bridge.target;
        if (!target || !Number.isInteger(id)) return;
        const bytes = body instanceof ArrayBuffer ? new Uint8Array(body) : undefined;
        target.runOp(Number(id), () => node8Op(String(kind) as OpKind, String(payload), bytes, target, bridge.files ?? noFiles));
      },
      { ignored: true },
    ),
    native: new ivm.Callback((call: unknown, payload: unknown, body: unknown) => {
      try {
        return runNative(call as NativeCall, payload, body, bridge.files ?? noFiles);
      } catch (err) {
        throw new Error(nativeErrorMessage(err));
      }
    }),
    nativeOffThread: new ivm.Callback(() => {
      offThread ??= new ivm.Reference(async (call: unknown, payload: unknown, body: unknown) => {
        const target = bridge.target;
        if (!target) throw new Error('the function is not loaded yet');
        try {
          // A Reference's result must be transferable: the plain answer goes as a copy.
          return new ivm.ExternalCopy(await runNativeOffThread(call as NativeCall, payload, body, bridge.files ?? noFiles, target.services)).copyInto({ release: true });
        } catch (err) {
          throw new Error(nativeErrorMessage(err));
        }
      });
      return offThread;
    }),
  });
}

/** The work of one asynchronous operation; a rejection reaches the sandbox with its message. */
async function node8Op(kind: OpKind, payload: string, body: Uint8Array | undefined, target: BridgeTarget, files: FunctionFiles): Promise<OpResult> {
  const services = target.services;
  switch (kind) {
    case 'fetch':
      return services.fetch(payload, body, target.hostMemory);
    case 'invoke':
      return { payload: await services.invoke(payload) };
    case 'subtle': {
      const answer = await services.hostWork({ kind: 'subtle', payload, body: body ? body.slice().buffer : undefined });
      return { payload: answer.payload, body: answer.body ? new Uint8Array(answer.body) : undefined };
    }
    case 'native': {
      const { call, args } = JSON.parse(payload) as { call: NativeCall; args: string };
      try {
        const result = await runNativeOffThread(call, args, body ? body.slice().buffer : undefined, files, services);
        return { payload: result.p, body: result.b ? new Uint8Array(result.b) : undefined };
      } catch (err) {
        throw new Error(nativeErrorMessage(err));
      }
    }
    default:
      throw new Error(`unknown operation ${String(kind)}`);
  }
}
