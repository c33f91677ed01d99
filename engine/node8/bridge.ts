import ivm from 'isolated-vm';
import { commonCallbacks, installHostObject, type Bridge, type OpResult } from '../isolate/bridge';
import type { InstanceServices } from '../runtime';
import type { OpKind } from '../sandbox/protocol';

/**
 * The host side of the node8 sandbox: the only place that answers its calls (see HostBridge in
 * engine/sandbox/protocol.ts). Besides the common callbacks, a node8 isolate reads its own files
 * for `require` and starts asynchronous operations.
 */
export function installNode8Bridge(isolate: ivm.Isolate, context: ivm.Context, bridge: Bridge): void {
  installHostObject(isolate, context, {
    ...commonCallbacks(bridge),
    readModule: new ivm.Callback((path: unknown) => (typeof path === 'string' ? bridge.target?.readModule(path) : undefined)),
    startOp: new ivm.Callback(
      (kind: unknown, id: unknown, _requestId: unknown, payload: unknown, body: unknown) => {
        const target = bridge.target;
        if (!target || !Number.isInteger(id)) return;
        const bytes = body instanceof ArrayBuffer ? new Uint8Array(body) : undefined;
        target.runOp(Number(id), () => node8Op(String(kind) as OpKind, String(payload), bytes, target.services));
      },
      { ignored: true },
    ),
  });
}

/** The work of one asynchronous operation; a rejection reaches the sandbox as a TypeError with its message. */
function node8Op(kind: OpKind, payload: string, body: Uint8Array | undefined, services: InstanceServices): Promise<OpResult> {
  switch (kind) {
    case 'fetch':
      return services.fetch(payload, body);
    case 'invoke':
      return services.invoke(payload).then((result) => ({ payload: result }));
    default:
      return Promise.reject(new Error(`unknown operation ${String(kind)}`));
  }
}
