/**
 * The host's callbacks, taken from HOST_GLOBAL when a runtime script starts (before any user code
 * runs), and which request the code running now belongs to.
 */
import { HOST_GLOBAL, type HostBridge } from '../protocol';

/**
 * Takes the host's callbacks (and anything else the runtime's bridge put there) off the global
 * object. The object is the host's: frozen, without a prototype (engine/isolate/bridge.ts). A
 * runtime takes its members into constants of its own closure at once and keeps neither the
 * object nor its members anywhere user code can reach.
 */
export function takeHost<T extends Partial<HostBridge>>(): T {
  const g = globalThis as unknown as Record<string, unknown>;
  const host = g[HOST_GLOBAL] as T;
  delete g[HOST_GLOBAL];
  return host;
}

/** Which request the code running now belongs to (set at every entry from the host). */
export const current = { __proto__: null, requestId: '' } as { requestId: string };
