import ivm from 'isolated-vm';
import type { FunctionFiles } from '../capabilities/fs/host';
import { hostErrorText } from '../capabilities/errors';
import { runNode8Op, type OpScope } from '../capabilities/host-ops';
import { answerNative, runNativeOffThread } from '../capabilities/native';
import { commonCallbacks, installHostObject, type Bridge, type BridgeTarget } from '../isolate/bridge';
import type { HostReply } from '../sandbox/protocol';

/** A node8 isolate's bridge also knows the files of the function it became (for `fs` and `require`). */
export interface Node8Bridge extends Bridge {
  files: FunctionFiles | undefined;
}

const NO_FILES: FunctionFiles = { codeDir: '/nonexistent', files: new Set() };

/**
 * What an operation the sandbox of `target` started may reach: that instance's own tables (its
 * request bodies, fetch bodies, sockets) and nothing of another's. `requestId` is the sandbox's
 * word, untrusted.
 */
export function opScopeOf(target: BridgeTarget, files: FunctionFiles | undefined, requestId: unknown): OpScope {
  return {
    services: target.services,
    hostMemory: target.hostMemory,
    files: files ?? NO_FILES,
    egressBodies: target.egressBodies,
    connections: target.connections,
    requestBodies: target.requestBodies,
    requestId: typeof requestId === 'string' ? requestId.slice(0, 64) : '',
  };
}

/**
 * The host side of the node8 sandbox: the only place that answers its calls (see HostBridge in
 * engine/sandbox/protocol.ts), a dispatcher over the capabilities' host halves. Besides the common
 * callbacks, a node8 isolate reads its own files for `require`, starts asynchronous operations
 * (engine/capabilities/host-ops.ts), and makes native calls for crypto, zlib and fs
 * (engine/capabilities/native.ts). Every answer is a HostReply; a failure is its HostError.
 */
export function installNode8Bridge(isolate: ivm.Isolate, context: ivm.Context, bridge: Node8Bridge): void {
  // Handed to the sandbox on first need only: the first Reference in an isolate costs it about 7 KB.
  let offThread: ivm.Reference<unknown> | undefined;
  installHostObject(isolate, context, {
    ...commonCallbacks(bridge),
    unbatch: new ivm.Callback(() => bridge.target?.unbatch(), { ignored: true }),
    socket: new ivm.Callback((key: unknown, op: unknown, data: unknown, reason: unknown) => bridge.target?.socket(Number(key), op, data, reason), { ignored: true }),
    readModule: new ivm.Callback((path: unknown) => (typeof path === 'string' ? bridge.target?.readModule(path) : undefined)),
    startOp: new ivm.Callback(
      (kind: unknown, id: unknown, requestId: unknown, payload: unknown, body: unknown) => {
        const target = bridge.target;
        if (!target || !Number.isInteger(id)) return;
        const bytes = body instanceof ArrayBuffer ? new Uint8Array(body) : undefined;
        const scope = opScopeOf(target, bridge.files, requestId);
        target.runOp(Number(id), () => runNode8Op(kind, payload, bytes, scope));
      },
      { ignored: true },
    ),
    native: new ivm.Callback((call: unknown, payload: unknown, body: unknown) => answerNative(call, payload, body, bridge.files ?? NO_FILES)),
    nativeOffThread: new ivm.Callback(() => {
      offThread ??= new ivm.Reference(async (call: unknown, payload: unknown, body: unknown) => {
        let reply: HostReply;
        try {
          const target = bridge.target;
          if (!target) throw new Error('the function is not loaded yet');
          const answer = await runNativeOffThread(call, payload, body, bridge.files ?? NO_FILES, target.services);
          reply = [true, answer.payload, answer.body];
        } catch (err) {
          reply = [false, hostErrorText(err)];
        }
        // A Reference's result must be transferable: the reply goes as a copy.
        return new ivm.ExternalCopy(reply).copyInto({ release: true });
      });
      return offThread;
    }),
  });
}
