/**
 * sdk.invoke of node8 functions (the runtime's `sdk` module): a call of another function through
 * the host (host.ts in this folder), its body sent as JSON unless it is text. A failure is a
 * TypeError with the host's message.
 */
import type { HostError } from '../../errors';
import type { InvokeAnswer, InvokeRequest } from '../ops';

type Op = (kind: 'invoke', payload: string) => Promise<{ payload: string }>;

export function makeInvoke(op: Op): (accountId: unknown, functionName: unknown, apiKey: unknown, body?: unknown) => Promise<InvokeAnswer> {
  return async (accountId, functionName, apiKey, body) => {
    const request: InvokeRequest = {
      accountId: String(accountId),
      functionName: String(functionName),
      apiKey: apiKey === undefined || apiKey === null ? '' : String(apiKey),
      body: body === undefined ? '' : typeof body === 'string' ? body : JSON.stringify(body),
    };
    let result;
    try {
      result = await op('invoke', JSON.stringify(request));
    } catch (err) {
      throw new TypeError((err as HostError).message);
    }
    return JSON.parse(result.payload) as InvokeAnswer;
  };
}
