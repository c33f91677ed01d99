/**
 * The only surface the host offers to code in the isolate. Each function is an isolated-vm
 * Callback: arguments and results are copied, never shared. The sandbox captures these at start
 * and removes them from the global object before any user code runs.
 */
export interface HostBridge {
  /** Appends a line to the function's logs (fire and forget). */
  log(requestId: string, level: string, text: string): void;
  /** Source of one of the function's own files, by relative path. */
  readModule(path: string): string | undefined;
  /** Arms (op 1) or cancels (op 0) a host timer that later calls back with `fire(TIMER, id)`. */
  timer(op: number, id: number, ms: number): void;
  /** Random bytes from the host's CSPRNG, as hex. */
  random(bytes: number): string;
  /** Delivers the result of a call that finished after its batch returned (fire and forget). */
  deliver(id: number, result: unknown): void;
  /** Starts an asynchronous host operation (`fetch`, `invoke`); the result arrives with `fire(OP, id, …)`. */
  startOp(kind: string, id: number, requestId: string, payload: string, body: ArrayBuffer | undefined): void;
}

export interface SandboxConfig {
  accountId: string;
  env: Record<string, string>;
  files: string[];
  main: string;
  entrypoint: string;
}

export const FIRE_TIMER = 0;
export const FIRE_OP = 1;

/** Which request the code running now belongs to (set at every entry from the host). */
export const current = { requestId: '' };

/** A text from the host: long ones come as a one-element array (see textArgument in instance.ts). */
export function fromHost<T>(value: T | [T]): T {
  return Array.isArray(value) ? value[0] : value;
}
