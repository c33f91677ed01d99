import type { OpAnswer, OpScope } from '../host-ops';
import type { InvokeRequest } from './ops';

/** The host half of sdk.invoke: the call, in process, through the engine (`services.invoke`). */
export async function invokeFunction(request: InvokeRequest, _body: Uint8Array | undefined, scope: OpScope): Promise<OpAnswer> {
  return { payload: JSON.stringify(await scope.services.invoke(request)) };
}
