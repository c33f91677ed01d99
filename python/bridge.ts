import ivm from 'isolated-vm';
import { toArrayBuffer } from '../engine/bytes';
import { hostErrorText } from '../engine/capabilities/errors';
import type { FunctionFiles } from '../engine/capabilities/fs/host';
import { runPythonOp } from '../engine/capabilities/host-ops';
import { commonCallbacks, installHostObject, type Bridge } from '../engine/isolate/bridge';
import type { HostReply } from '../engine/sandbox/protocol';

/** A Python isolate's bridge: the instance it became, its handler's timeout and its files. */
export interface PythonBridge extends Bridge {
  timeoutMs: number;
  files: FunctionFiles | undefined;
}

/**
 * The host side of the Python sandbox: the only place that answers its calls, a dispatcher over
 * the capabilities' host halves (engine/capabilities/host-ops.ts). Python code is synchronous, so
 * besides the common callbacks it gets `opSync`: the isolate's thread waits while the host's event
 * loop does the work (`applySyncPromise`), and the instance's timeout still bounds the wait (a
 * timed-out Python instance is disposed, which releases the thread). Every answer is a HostReply;
 * a failure is its HostError. Only the sandbox's closure holds this Reference; node8 isolates never
 * get one (the first Reference in an isolate sets up isolated-vm's Reference class there, about 19 KB).
 */
export function installPythonBridge(isolate: ivm.Isolate, context: ivm.Context, bridge: PythonBridge): void {
  installHostObject(isolate, context, {
    ...commonCallbacks(bridge),
    opSync: new ivm.Reference(async (kind: unknown, payload: unknown, body: unknown) => {
      const target = bridge.target;
      let reply: HostReply;
      try {
        const bytes = body instanceof ArrayBuffer ? new Uint8Array(body) : undefined;
        const answer = await runPythonOp(kind, payload, bytes, {
          services: target?.services,
          hostMemory: target?.hostMemory,
          requestBodies: target?.requestBodies,
          files: bridge.files,
          timeoutMs: bridge.timeoutMs,
        });
        reply = answer.body ? [true, answer.payload, toArrayBuffer(answer.body)] : [true, answer.payload];
      } catch (err) {
        reply = [false, hostErrorText(err)];
      }
      return new ivm.ExternalCopy(reply).copyInto({ release: true });
    }),
  });
}
