/**
 * What the node8 runtime gives islet's libraries (never user code): closures over the host's
 * callbacks (never the callbacks, the host's object or an isolated-vm Reference themselves), the
 * asynchronous operations, the request running now and the runtime's own objects. A library asks
 * for it with `require(INTERNAL)`; the `require` user code gets has no such module. It is a frozen
 * object without a prototype, and each closure in it enforces the sandbox's rules itself (which
 * native calls leave the host's thread, the one hand-over of the isolate's WebAssembly): libraries
 * are evaluated on first use, after user code may have replaced built-ins they call.
 */
import type { ChunkSource } from '../../capabilities/streams/guest/response-streams';
import type { LibraryName } from '../../sandbox/library-names';
import type { CallResult, HostReply, MetaHead, NativeCall, OpKind } from '../../sandbox/protocol';
import type { WasmMemories } from './wasm-memories';

export const INTERNAL = 'islet:internal';

export interface OpAnswer {
  payload: string;
  body: ArrayBuffer | undefined;
}

/** How a listening Node HTTP server takes one call: its head, its headers' JSON and its body (or the id of one still arriving). */
export type ServeCall = (head: MetaHead, headers: string, raw: string | ArrayBuffer | number | undefined) => Promise<CallResult>;

export interface Internal {
  /** Appends a line to the function's logs, as the request running now. */
  log(level: string, text: string): void;
  /** Sends this isolate's calls one per entry from now on (see HostBridge.unbatch). */
  unbatch(): void;
  /** Random bytes from the host's CSPRNG, as hex. */
  random(bytes: number): string;
  /**
   * A native call (crypto, zlib, the function's files). Inputs of OFF_THREAD_BYTES or more, and
   * `long` work (key derivation, key generation), are worked off the host's thread while this
   * isolate waits; the rest on the host's thread.
   */
  native(call: NativeCall, payload: unknown, bytes?: readonly Uint8Array[], long?: boolean): HostReply;
  /**
   * Starts an asynchronous host operation (fetch, sdk.invoke, WebCrypto…). A failure rejects with
   * its HostError (engine/capabilities/errors.ts), data the caller makes its API's error of.
   */
  op(kind: OpKind, payload: string, body?: ArrayBuffer): Promise<OpAnswer>;
  /** The request whose code runs now. */
  readonly current: { requestId: string };
  /** Registers the reader of an answer's streamed body; its key goes to the host in the answer's head. */
  openStream(source: ChunkSource): number;
  /** A WebSocket's operation: accept, send or close (see HostBridge.socket). */
  socket(key: number, op: number, data?: string | ArrayBuffer | number, reason?: string): void;
  /** Where the host's WebSocket events go (set once, by the websockets library). */
  onSocketEvent(handler: (key: number, event: unknown, data: unknown, reason: unknown) => void): void;
  /** Keeps the instance awake for a call's `waitUntil` work (see HostBridge.background). */
  background(token: number, open: boolean): void;
  /** Reports an error nobody caught, into the function's logs. */
  reportError(err: unknown): void;
  /** The function's env (its `process.env`): the declared variables and SERVICE_ACCOUNT_ID. */
  readonly env: Record<string, string>;
  /** The function's `require` for files (as `module.createRequire` needs it). */
  requireFrom(dir: string): (id: string) => unknown;
  /** Another of islet's libraries (evaluated on first use). */
  library<T>(name: LibraryName): T;
  /** The isolate's own WebAssembly, given once (to the library that guards it), undefined after. */
  takeWebAssembly(): unknown;
  /** The function's memory limit, in MB. */
  readonly memoryLimitMb: number;
  /** The WebAssembly memories alive and what they use (counted by the library that guards WebAssembly). */
  readonly wasmMemories: WasmMemories;
  /**
   * A Node HTTP server was made: a module without a handler then waits for one to listen with
   * `untilListen` (Fastify listens once its plugins are ready), which rejects with the load's error.
   */
  serverCreated(untilListen: (main: string, entrypoint: string) => Promise<void>): void;
  /**
   * The server that listens while the module loads serves the function's calls. Refused when one
   * already listens ('taken') or the function has loaded ('loaded').
   */
  listen(serve: ServeCall): 'taken' | 'loaded' | undefined;
}
