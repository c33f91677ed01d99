import ivm from 'isolated-vm';
import { toArrayBuffer } from '../engine/bytes';
import { commonCallbacks, installHostObject, type Bridge } from '../engine/isolate/bridge';
import type { SyncOpKind, SyncOpResult } from '../engine/sandbox/protocol';
import { OpError, runSyncOp, type SyncOpScope } from './host-ops';

/** A Python isolate's bridge: the instance it became, and what its operations may reach. */
export interface PythonBridge extends Bridge, Omit<SyncOpScope, 'services' | 'memory'> {}

const SYNC_OPS: ReadonlySet<string> = new Set<SyncOpKind>(['fetch', 'invoke', 'pbkdf2', 'scrypt', 'tzdata', 'file']);

/**
 * The host side of the Python sandbox: the only place that answers its calls. Python code is
 * synchronous, so besides the common callbacks it gets `opSync`: the isolate's thread waits while
 * the host's event loop does the work (`applySyncPromise`), and the instance's timeout still bounds
 * the wait (a timed-out Python instance is disposed, which releases the thread). Only the
 * sandbox's closure holds this Reference; node8 isolates never get one (the first Reference in an
 * isolate sets up isolated-vm's Reference class there, about 19 KB).
 */
export function installPythonBridge(isolate: ivm.Isolate, context: ivm.Context, bridge: PythonBridge): void {
  installHostObject(isolate, context, {
    ...commonCallbacks(bridge),
    opSync: new ivm.Reference(async (kind: unknown, payload: unknown, body: unknown) => {
      const target = bridge.target;
      let result: SyncOpResult;
      try {
        if (typeof kind !== 'string' || !SYNC_OPS.has(kind)) throw new OpError('ERR_UNKNOWN_OP', `unknown operation ${String(kind)}`);
        const bytes = body instanceof ArrayBuffer ? new Uint8Array(body) : undefined;
        const answer = await runSyncOp(kind as SyncOpKind, String(payload), bytes, { ...bridge, services: target?.services, memory: target?.hostMemory });
        result = answer.body ? [true, answer.payload, toArrayBuffer(answer.body)] : [true, answer.payload];
      } catch (err) {
        const code = err instanceof OpError ? err.code : 'ERR_FAILED';
        result = [false, JSON.stringify({ code, message: err instanceof Error ? err.message : String(err) })];
      }
      return new ivm.ExternalCopy(result).copyInto({ release: true });
    }),
  });
}
