/**
 * What the node8 runtime gives islet's libraries (never user code): the host's callbacks, the
 * asynchronous operations, the request running now and the runtime's own objects. A library asks
 * for it with `require(INTERNAL)`; the `require` user code gets has no such module.
 */
import type { LibraryName } from '../../sandbox/library-names';
import type { HostBridge, NativeCall, NativeResult, OpKind } from '../../sandbox/protocol';

export const INTERNAL = 'islet:internal';

export interface OpAnswer {
  payload: string;
  body: ArrayBuffer | undefined;
}

export interface Internal {
  host: HostBridge;
  /** A synchronous native call (crypto, zlib, the function's files), answered on the host's thread. */
  native(call: NativeCall, payload: unknown, bytes?: readonly Uint8Array[]): NativeResult;
  /**
   * The same call answered off the host's thread while this isolate waits: for work that would
   * hold the host's thread too long (key derivation, large compression).
   */
  nativeOffThread(call: NativeCall, payload: unknown, bytes?: readonly Uint8Array[]): NativeResult;
  /** Starts an asynchronous host operation (fetch, sdk.invoke, WebCrypto…). */
  op(kind: OpKind, payload: string, body?: ArrayBuffer): Promise<OpAnswer>;
  /** The request whose code runs now. */
  current: { requestId: string };
  /** Keeps the instance awake for a call's `waitUntil` work (see HostBridge.background). */
  background(token: number, open: boolean): void;
  /** Reports an error nobody caught, into the function's logs. */
  reportError(err: unknown): void;
  /** The function's env (its `process.env`): the declared variables and SERVICE_ACCOUNT_ID. */
  env: Record<string, string>;
  /** The function's `require` for files (as `module.createRequire` needs it). */
  requireFrom(dir: string): (id: string) => unknown;
  /** Another of islet's libraries (evaluated on first use). */
  library<T>(name: LibraryName): T;
  /** The isolate's own WebAssembly, which only the guarded one given to functions uses. */
  webAssembly: unknown;
  /** The function's memory limit, in MB. */
  memoryLimitMb: number;
}
