/**
 * The protocol between the host and the code inside an isolate, for both sandboxes (node8 and
 * Python): how calls enter and results leave, and how host operations cross. Which operations
 * there are, and what each one's payload and answer are, is each capability's to declare
 * (engine/capabilities/<name>/ops.ts, gathered in engine/capabilities/ops.ts). Imported by the
 * host (engine/isolate, the runtimes' bridges) and bundled into the guest runtimes, so each name,
 * kind and limit is written once. Everything that crosses is copied data: strings, numbers,
 * ArrayBuffers, plain arrays and objects.
 */
import type { ConsoleCallbacks } from '../capabilities/console/ops';
import type { FetchCallbacks } from '../capabilities/fetch/ops';
import type { NodeCallbacks } from '../capabilities/node/ops';
import type { NativeCall, OpKind, SyncOpKind } from '../capabilities/ops';
import type { StreamsCallbacks } from '../capabilities/streams/ops';
import type { SubtleCallbacks } from '../capabilities/subtle/ops';
import type { SocketsCallbacks } from '../capabilities/websockets/ops';
import type { TimersCallbacks } from '../capabilities/timers/ops';
import { MAIN_THREAD_BYTES } from '../host-work/main-thread';

export type { NativeCall, OpKind, SyncOpKind };

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

/**
 * What `fire` tells the sandbox: a timer ran out, an asynchronous operation finished, a response
 * stream is pulled or cancelled, a WebSocket has a message or closed, or a call's client went away
 * before its answer (`abort`, whose payload is the call's request id).
 */
export const Fire = { timer: 0, op: 1, stream: 2, socket: 3, abort: 4 } as const;
export type FireKind = (typeof Fire)[keyof typeof Fire];

/**
 * What every host operation answers, both runtimes (a native call, an operation Python waits for;
 * an asynchronous one's `fire` carries the same three): ok and JSON text with bytes when there are
 * some, or not ok and the failure as JSON text of a HostError, `{code, message}` (see
 * engine/capabilities/errors.ts), which each runtime turns into its own error with one function.
 */
export type HostReply = [ok: true, payload: string, body?: ArrayBuffer] | [ok: false, error: string];

/** Inputs larger than this are worked off the host's thread even by synchronous APIs (see engine/host-work/limits.ts, the one table of host-work limits). */
export const OFF_THREAD_BYTES = MAIN_THREAD_BYTES;
/**
 * The host's answer to a synchronous native call that is too heavy for its thread (the host
 * judges, whatever the sandbox thought), in place of a reply: the sandbox sends the call again off it.
 */
export const NATIVE_OFF_THREAD = 'ERR_ISLET_OFF_THREAD';

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
/**
 * An answer's headers: a header sent several times (Set-Cookie) has its values in an array, each
 * sent as a line of its own (joined by commas, `Set-Cookie` values would break: they hold commas).
 */
export type ResultHeaders = Record<string, string | string[]>;
export const EXPLICIT_TAG = 'R';
export type CallResult = string | BytesResult | ErrorResult | StreamResult | SocketResult;
/**
 * An answer that gives a client the client end of a WebSocketPair (status 101): the server end `k`
 * was accepted (engine/capabilities/websockets).
 */
export interface SocketResult {
  t: 'w';
  /** Headers. */
  h: ResultHeaders;
  /** The sandbox's key of the pair. */
  k: number;
}
/**
 * An answer whose body streams: its status and headers now, its body pulled a window at a time
 * (`fire(Fire.stream, k, StreamOp.pull, bytes)`, answered by `chunk(k, …)`s; engine/capabilities/streams).
 */
export interface StreamResult {
  t: 's';
  /** Status. */
  s: number;
  /** Headers. */
  h: ResultHeaders;
  /** The sandbox's key of the stream. */
  k: number;
  /**
   * Set when the body is one the host holds, passed on untouched (`new Response(request.body)`,
   * `new Response(up.body, up)`): `[RelayFrom, id]`, read by the host without pulls.
   */
  r?: [number, number];
}
export interface BytesResult {
  t: 'b';
  /** Status. */
  s: number;
  /** Headers. */
  h: ResultHeaders;
  /** Body: bytes, or the text of a body the function made from a string. */
  b: ArrayBuffer | string;
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
/**
 * The metas argument that asks the sandbox again for the results of batch `ids` (kept until the
 * next batch): isolated-vm throws a promise rejected with no handler by an entry's end in place of
 * its answer, and the calls that answered at once would otherwise be lost.
 */
export const RESEND_RESULTS = '';
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
 * The host's callbacks as the guest sees them: the transport's own, and each capability's
 * (declared in its ops.ts). Each is an isolated-vm Callback: arguments and results are copied,
 * never shared. Which of them a sandbox gets is its bridge's choice (engine/node8/bridge.ts,
 * python/bridge.ts).
 */
export interface HostBridge extends ConsoleCallbacks, TimersCallbacks, SubtleCallbacks, FetchCallbacks, StreamsCallbacks, SocketsCallbacks, NodeCallbacks {
  /** Source of one of the function's own files, by relative path (node8). */
  readModule(path: string): string | undefined;
  /** Delivers the result of a call that finished after its batch returned (fire and forget). */
  deliver(id: number, result: CallResult): void;
  /** Starts an asynchronous host operation; its reply arrives with `fire(Fire.op, id, ok, payload, body)`. */
  startOp(kind: OpKind, id: number, requestId: string, payload: string, body: ArrayBuffer | undefined): void;
  /** A native call on the host's thread (node8), or NATIVE_OFF_THREAD when it is too heavy for that thread. */
  native(call: NativeCall, payload: string, body: ArrayBuffer | undefined): HostReply | typeof NATIVE_OFF_THREAD;
  /**
   * Gives the node8 sandbox, on first need, the reference its crypto and zlib use to run native
   * calls off the host's thread (`applySyncPromise`); the sandbox keeps it private.
   */
  nativeOffThread(): { applySyncPromise(receiver: undefined, args: [NativeCall, string, ArrayBuffer | undefined], options: { arguments: { copy: true } }): HostReply };
}

/** A call's body as it enters: text (long text wrapped, see LONG_TEXT), bytes, none, or the id of a body still arriving. */
export type RawBody = string | [string] | ArrayBuffer | number | undefined;

/** The entry points a runtime leaves on ENTRY_GLOBAL. */
export interface SandboxEntryPoints {
  /**
   * A batch of calls: metas joined by META_SEPARATOR, their ids joined by commas, one body argument
   * per call: its text, its bytes, none, or the id of a body still arriving, which the sandbox reads
   * with the request-body operations (engine/capabilities/request-body).
   */
  call(metas: string | [string], ids: string, ...bodies: RawBody[]): (CallResult | 0)[];
  /**
   * A host event: a timer ran out, an operation finished (ok, payload, body), a stream is pulled or
   * cancelled (op, reason), or a WebSocket has a message (event, data) or closed (event, code, reason).
   */
  fire(kind: FireKind, id: number, ok?: boolean | number, payload?: string | [string] | ArrayBuffer | number, body?: ArrayBuffer | string): void;
  /** Makes the isolate the function described by the config JSON. */
  init(configJson: string, ...rest: never[]): unknown;
}
