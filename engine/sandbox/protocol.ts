/**
 * The protocol between the host and the code inside an isolate, for both sandboxes (node8 and
 * Python). Imported by the host (engine/isolate, the runtimes' bridges) and bundled into the guest
 * runtimes, so each name, kind and limit is written once. Everything that crosses is copied data:
 * strings, numbers, ArrayBuffers, plain arrays and objects.
 */
import { HOST_WORK_LIMITS } from '../host-work/limits';

/** The global the host puts its callbacks under; the runtime takes them and deletes it. */
export const HOST_GLOBAL = '__isletHost';
/** The global the runtime leaves its entry points under; the host takes them and deletes it. */
export const ENTRY_GLOBAL = '__islet';

/** The file name islet's runtime script is compiled under (its frames never reach users). */
export const RUNTIME_FILENAME = 'islet:runtime';
/** The file name of one of islet's libraries, evaluated inside isolates. */
export const libraryFilename = (name: string): string => `islet:lib/${name}`;
/** A stack frame of islet's own code inside an isolate. */
export const ISLET_FRAME = /islet:(runtime|lib\/)/;

/** What `fire` tells the sandbox: a timer ran out, or an asynchronous operation finished. */
export const Fire = { timer: 0, op: 1 } as const;
export type FireKind = (typeof Fire)[keyof typeof Fire];

/** What `timer` asks of the host: cancel or arm the timer of an id. */
export const TimerOp = { cancel: 0, arm: 1 } as const;
export type TimerOpKind = (typeof TimerOp)[keyof typeof TimerOp];

/**
 * Asynchronous host operations a sandbox may start with `startOp`; each answers once through
 * `fire(Fire.op, id, ok, payload, body?)`. The payload is JSON text, the body copied bytes.
 * - fetch: an HTTP request through the guarded egress;
 * - invoke: `sdk.invoke` of another function;
 * - subtle: a WebCrypto operation;
 * - native: a native call (below) run off the host's thread, for callback and promise APIs.
 */
export type OpKind = 'fetch' | 'invoke' | 'subtle' | 'native';

/**
 * Native calls of the node8 sandbox: work Node does natively on the host for Node's crypto, zlib
 * and fs modules. Each takes JSON text and at most one body of bytes (several byte inputs are
 * concatenated, their lengths in the JSON) and answers a NativeResult. Synchronous through the
 * `native` callback (on the host's thread, for small inputs), or through the `nativeOffThread`
 * reference or the `native` operation (off the host's thread).
 */
export type NativeCall = 'hash' | 'hmac' | 'cipher' | 'sign' | 'verify' | 'key' | 'keygen' | 'derive' | 'rsa' | 'random' | 'zlib' | 'fs';
export interface NativeResult {
  /** JSON text. */
  p: string;
  /** Bytes, when the answer has any (several outputs concatenated, their lengths in the JSON). */
  b?: ArrayBuffer;
}
/** How a key crosses from the sandbox to a native call: its kind and encoding; DER or secret bytes come as the call's first input. */
export interface KeySpec {
  kind: 'secret' | 'public' | 'private';
  format: 'pem' | 'der' | 'jwk';
  type?: string;
  passphrase?: string;
  pem?: string;
  jwk?: Record<string, unknown>;
}
/** Largest input of one native call (see engine/host-work/limits.ts, the one table of host-work limits). */
export const MAX_NATIVE_BYTES = HOST_WORK_LIMITS.inputBytes;
/** Inputs larger than this are worked off the host's thread even by synchronous APIs. */
export const OFF_THREAD_BYTES = HOST_WORK_LIMITS.mainThreadBytes;
/**
 * The code of the host's answer to a synchronous native call that is too heavy for its thread
 * (the host judges, whatever the sandbox thought): the sandbox sends the call again off it.
 */
export const NATIVE_OFF_THREAD = 'ERR_ISLET_OFF_THREAD';

/**
 * Operations the Python sandbox waits for: Python code is synchronous, so its thread blocks
 * (isolated-vm's applySyncPromise on the bridge's `opSync`) while the host does the work; the
 * instance's timeout still bounds the wait. `fetch` goes through the same egress as node8's,
 * `invoke` is sdk.invoke, `pbkdf2`/`scrypt` run in the host's crypto, `tzdata` reads one
 * time-zone file, `file` one of the function's own files.
 */
export type SyncOpKind = 'fetch' | 'invoke' | 'pbkdf2' | 'scrypt' | 'tzdata' | 'file';
/** What `opSync` answers: ok, JSON text (`{code, message}` when not ok) and bytes when there are some. */
export type SyncOpResult = [ok: boolean, payload: string, body?: ArrayBuffer];

/** Characters of one log line; longer ones are cut (by the sandbox, and again by the host). */
export const MAX_LOG_LINE = 16 * 1024;
/**
 * Characters of log text one instance hands the host per second (four seconds' worth at once);
 * the rest is dropped in the sandbox and counted (engine/sandbox/guest/log-budget.ts). The host
 * holds each account to its own budget too (engine/log-budget.ts).
 */
export const LOG_BUDGET = 1024 * 1024;

/** Timers one sandbox may have armed at once (both sides enforce it). */
export const MAX_TIMERS = 10_000;
/** Asynchronous operations one instance may have in flight. */
export const MAX_PENDING_OPS = 256;

/**
 * A text of this many characters or more crosses as a one-element array: isolated-vm would hand it
 * to the isolate as an external string (see `textArgument` in engine/isolate/instance.ts), and the
 * guest unwraps it with `fromHost`.
 */
export const LONG_TEXT = 1024;

const { isArray } = Array;
/** A text from the host: long ones come as a one-element array (see LONG_TEXT). */
export function fromHost<T>(value: T | [T]): T {
  return isArray(value) ? value[0] : value;
}

/**
 * What a call returns to the host. Strings are the fast path, tagged by their first character:
 *   JSON_TAG + json                                          an implicit JSON response
 *   EXPLICIT_TAG + status + '\n' + headersJson + '\n' + body  an explicit response with a text body
 * Objects for the rest: bodies of bytes, and errors.
 */
export const JSON_TAG = 'J';
export const EXPLICIT_TAG = 'R';
export type CallResult = string | BytesResult | ErrorResult;
export interface BytesResult {
  t: 'b';
  /** Status. */
  s: number;
  /** Headers. */
  h: Record<string, string>;
  /** Body. */
  b: ArrayBuffer;
}
export interface ErrorResult {
  t: 'e';
  /** Error code (ERR_FUNCTION_FAILED, ERR_BAD_RESPONSE or ERR_RESOURCE_LIMIT). */
  c: string;
  /** Message. */
  m: string;
  /** The user's stack, when there is one. */
  k?: string;
}

/**
 * A call's meta: `["<request id>","<method>","<path>","<raw query>"]`, a tab, then the headers as
 * JSON. JSON text has no raw tab, so the sandbox finds the headers with one indexOf and parses them
 * only when the function reads them; the calls of a batch are joined by newlines, which JSON text
 * has none of either.
 */
export function callMeta(requestId: string, method: string, path: string, rawQuery: string, headers: Record<string, string>, scheduled?: ScheduledEvent): string {
  return `${JSON.stringify(scheduled ? [requestId, method, path, rawQuery, scheduled] : [requestId, method, path, rawQuery])}\t${JSON.stringify(headers)}`;
}
/** A scheduled run's tick: the cron expression and the tick's nominal time (ms since the epoch). HTTP cannot send it. */
export interface ScheduledEvent {
  cron: string;
  scheduledTime: number;
}
export type MetaHead = [requestId: string, method: string, path: string, rawQuery: string, scheduled?: ScheduledEvent];
/** Separates the metas of a batch's calls. */
export const META_SEPARATOR = '\n';
/** Separates the head of a meta from its headers' JSON. */
export const HEADERS_SEPARATOR = '\t';
/** The request id of a meta without parsing it: the head starts with `["` and the 32-character id. */
export const requestIdOfMeta = (meta: string): string => meta.slice(2, 34);

/** What a runtime's `init` receives as JSON: the function it becomes. */
export interface SandboxConfig {
  accountId: string;
  env: Record<string, string>;
  main: string;
  entrypoint: string;
}

/**
 * The host's callbacks as the guest sees them. Each is an isolated-vm Callback: arguments and
 * results are copied, never shared. Which of them a sandbox gets is its bridge's choice
 * (engine/node8/bridge.ts, python/bridge.ts).
 */
export interface HostBridge {
  /** Appends a line to the function's logs (fire and forget). */
  log(requestId: string, level: string, text: string): void;
  /** Source of one of the function's own files, by relative path (node8). */
  readModule(path: string): string | undefined;
  /** Arms or cancels a host timer, which later calls back with `fire(Fire.timer, id)`. */
  timer(op: TimerOpKind, id: number, ms: number): void;
  /** Random bytes from the host's CSPRNG, as hex. */
  random(bytes: number): string;
  /** Delivers the result of a call that finished after its batch returned (fire and forget). */
  deliver(id: number, result: CallResult): void;
  /**
   * Opens or closes a `waitUntil` window (`token` is the sandbox's): while one is open, the
   * instance's timers and operations run with no call in flight, for at most the timeout. Without
   * one they wait for the next call.
   */
  background(token: number, open: boolean): void;
  /** Starts an asynchronous host operation; its result arrives with `fire(Fire.op, id, …)`. */
  startOp(kind: OpKind, id: number, requestId: string, payload: string, body: ArrayBuffer | undefined): void;
  /** A native call on the host's thread (node8). Throws the host's error message. */
  native(call: NativeCall, payload: string, body: ArrayBuffer | undefined): NativeResult;
  /**
   * From now on, sends this isolate's calls one per entry (node8, once AsyncLocalStorage is used):
   * promise jobs then run before the next call starts, so they are known to belong to theirs.
   */
  unbatch(): void;
  /**
   * Gives the node8 sandbox, on first need, the reference its crypto and zlib use to run native
   * calls off the host's thread (`applySyncPromise`); the sandbox keeps it private.
   */
  nativeOffThread(): { applySyncPromise(receiver: undefined, args: [NativeCall, string, ArrayBuffer | undefined], options: { arguments: { copy: true } }): NativeResult };
}

/** The entry points a runtime leaves on ENTRY_GLOBAL. */
export interface SandboxEntryPoints {
  /** A batch of calls: metas joined by META_SEPARATOR, their ids joined by commas, one body argument per call. */
  call(metas: string | [string], ids: string, ...bodies: (string | [string] | ArrayBuffer | undefined)[]): (CallResult | 0)[];
  /** A host event: a timer ran out, or an operation finished. */
  fire(kind: FireKind, id: number, ok?: boolean, payload?: string | [string], body?: ArrayBuffer): void;
  /** Makes the isolate the function described by the config JSON. */
  init(configJson: string, ...rest: never[]): unknown;
}
