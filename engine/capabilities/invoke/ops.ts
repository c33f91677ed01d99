/**
 * The operation between the sdk's guest halves (guest/invoke.ts in node8, `sdk` in
 * python/sandbox/runtime.py) and its host half (host.ts): a call of another function, in process.
 */
import { object, string, type Infer } from '../schema';

export const INVOKE_OPS = {
  /** `body` is the call's body as text; `apiKey` '' for none. */
  invoke: object({ accountId: string(), functionName: string(), apiKey: string(), body: string() }),
};

export type InvokeRequest = Infer<(typeof INVOKE_OPS)['invoke']>;

/** What the call answered. */
export interface InvokeAnswer {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
}
