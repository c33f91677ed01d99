/**
 * What a capability's host half provides for each of its native calls (node8's synchronous host
 * operations: crypto, zlib, fs), run by the dispatcher in native.ts on the server's thread or a
 * host-work thread.
 */
import { NATIVE_OFF_THREAD } from '../sandbox/protocol';
import { OpError } from './errors';
import type { Check, Infer } from './schema';

/** What a native call answers: JSON, and bytes (several outputs are concatenated, their lengths in the JSON). */
export interface NativeOutput {
  json: object;
  bytes?: Buffer[];
}

export interface NativeHost<P> {
  /**
   * Whether the call is light enough for the server's thread (small, and not work whose cost does
   * not follow its size): else it runs on a host-work thread while the isolate waits.
   */
  light(payload: P, inputBytes: number): boolean;
  /** The work, on the server's thread (`onMainThread`) or a host-work thread. Inputs are the call's byte parts. */
  run(payload: P, parts: Buffer[], onMainThread: boolean): NativeOutput;
}

/** A capability's host half of its native calls, by name, for the checks its ops.ts declares. */
export type NativeHosts<C extends Record<string, Check<unknown>>> = { [K in keyof C]: NativeHost<Infer<C[K]>> };

/** Thrown by work on the server's thread that finds itself heavier than it looked: the sandbox sends it again off the thread. */
export function offThread(why: string): OpError {
  return new OpError(NATIVE_OFF_THREAD, why);
}
