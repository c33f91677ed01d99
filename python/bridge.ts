import ivm from 'isolated-vm';
import { commonCallbacks, installHostObject, type Bridge } from '../engine/isolate/bridge';

/**
 * The host side of the Python sandbox: the only place that answers its calls. Python code is
 * synchronous, so besides the common callbacks it gets `invokeSync`: the isolate's thread waits
 * while the host's event loop runs the call (`applySyncPromise`). Only the sandbox's closure holds
 * this Reference; node8 isolates never get one (the first Reference in an isolate sets up
 * isolated-vm's Reference class there, about 19 KB).
 */
export function installPythonBridge(isolate: ivm.Isolate, context: ivm.Context, bridge: Bridge): void {
  installHostObject(isolate, context, {
    ...commonCallbacks(bridge),
    invokeSync: new ivm.Reference(async (payload: unknown) => {
      if (!bridge.target) throw new Error('not initialised');
      return bridge.target.services.invoke(String(payload));
    }),
  });
}
