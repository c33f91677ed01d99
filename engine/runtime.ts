import type { BodyKeeper } from './capabilities/fetch/bodies';
import type { BodyStream } from './body-stream';
import type { RequestBody } from './request-body';
import type { FetchRequest } from './capabilities/fetch/ops';
import type { InvokeAnswer, InvokeRequest } from './capabilities/invoke/ops';
import type { SocketService } from './capabilities/sockets/egress';
import type { FunctionSocket } from './capabilities/websockets/host';
import { ServiceError } from './errors';
import type { HostTask, HostTaskAnswer } from './host-work/task';
import type { HostMemoryBudget } from './isolate/host-memory';
import type { FunctionManifest, HandlerStyle } from './manifest';
import { ISLET_FRAME, type ScheduledEvent } from './sandbox/protocol';

/** One invocation as a runtime sees it (already authenticated and routed). */
export interface CallInput {
  requestId: string;
  method: string;
  /** The part of the URL path after the function name; `/` when none. */
  path: string;
  /** The raw query string, without `?`. */
  rawQuery: string;
  /** Lower-case names; repeated headers joined with `, `. */
  headers: Record<string, string>;
  /** The whole body, or one still arriving (only for an instance that `readsBodyStreams`). */
  body: Buffer | RequestBody;
  /** Set for a run of a schedule (never for a call over HTTP): what the handler is told of its tick. */
  scheduled?: ScheduledEvent;
  /** Set by the HTTP server: told when the client goes away (see ClientGone). */
  clientGone?: ClientGone;
}

/**
 * One call's line from the HTTP server to its instance: the server calls `onGone` when the client
 * goes away, which the instance set once it took the call. A call still waiting to go into a busy
 * isolate is then dropped unrun; a fetch-style handler's `request.signal` aborts, before its answer
 * as after.
 */
export interface ClientGone {
  onGone?: () => void;
}

export interface FunctionResponse {
  status: number;
  headers: Record<string, string>;
  /** The whole body, or one the function streams. */
  body: string | Uint8Array | BodyStream;
  /** The WebSocket an answer of status 101 gives the client (engine/capabilities/websockets). */
  webSocket?: FunctionSocket;
}

export type CallOutcome = { ok: true; response: FunctionResponse } | { ok: false; error: ServiceError };

export type InstanceState = 'ready' | 'retired' | 'dead';

/** A warm, loaded function version that can take calls. */
export interface Instance {
  readonly state: InstanceState;
  /** Calls running now. */
  readonly inflight: number;
  /** Memory this instance is estimated to hold, in MB (the warm cache's size unit). */
  readonly sizeMb: number;
  /** Time spent running code so far, in ms (not time awaiting I/O): the warm cache scales busy versions on it. */
  cpuTimeMs?(): number;
  /** How its entry is called, once its code has loaded (node8 tells the two styles apart; Python's is a handler). */
  readonly style?: HandlerStyle;
  /** Runs one call; `done` is called exactly once, with the handler's response or the error. */
  call(input: CallInput, done: (outcome: CallOutcome) => void): void;
  /** Takes no new calls; disposed once the running ones finish. */
  retire(): void;
  /** Stops at once; running calls fail. */
  dispose(): void;
  /** Closes its WebSockets with `code` (a retired instance lives on until they are closed). */
  closeSockets?(code: number, reason: string): void;
  /** Its version's files are now in `codeDir` (a deploy's check loaded them from the staging folder). */
  relocate?(codeDir: string): void;
}

/** What a running function may ask of the service (the sandbox's only way out). */
export interface InstanceServices {
  log(requestId: string, level: string, text: string): void;
  /**
   * A function's `fetch`; answers the JSON of a FetchAnswer and the response's body, whose bytes are
   * taken from `budget` as they arrive (the instance's host memory).
   */
  /** With `bodies`, a long body or one of unknown length is kept there and read as it arrives. */
  fetch(request: FetchRequest, body: Uint8Array | undefined, budget?: HostMemoryBudget, bodies?: BodyKeeper): Promise<{ payload: string; body: Uint8Array | undefined }>;
  /** Outbound TCP (engine/capabilities/sockets): connections through the egress's rules, the account's pacing. */
  sockets: SocketService;
  /** In-process `sdk.invoke`. */
  invoke(request: InvokeRequest): Promise<InvokeAnswer>;
  /**
   * Host work (crypto, compression, key derivation) on islet's host-work threads, within the
   * function's timeout and its account's share of the threads (engine/host-work/pool.ts).
   */
  hostWork(task: HostTask): Promise<HostTaskAnswer>;
}

export interface Runtime {
  /**
   * Its instances' calls may be given a request body still arriving: always (node8), or only past
   * the limit of a body read whole ('past-whole-limit', Python: engine/whole-or-stream.ts);
   * otherwise the engine reads each body whole first.
   */
  readonly readsBodyStreams?: boolean | 'past-whole-limit';
  /** Loads a version into a fresh instance. Throws ERR_FUNCTION_FAILED when its code cannot load. */
  createInstance(manifest: FunctionManifest, codeDir: string, services: InstanceServices): Promise<Instance>;
  /** Deploy-time check of unpacked code; throws ERR_INVALID_FUNCTION naming file and line. Answers what it found out. */
  validate(manifest: FunctionManifest, codeDir: string, services: InstanceServices): Promise<ValidatedCode>;
  /** Releases what the runtime holds besides instances (spare isolates). */
  close?(): void | Promise<void>;
}

/** Time allowed for a function's module-level code when a deploy validates it. */
export const VALIDATE_TIMEOUT_MS = 10_000;

/** What a deploy's check learns of the code, to keep with the version. */
export interface ValidatedCode {
  style: HandlerStyle;
  /**
   * The instance the check loaded, ready for calls: the caller disposes it, or keeps it as the new
   * version's first warm instance once the version is published (engine/deploy.ts).
   */
  instance: Instance;
}

/** Time allowed to a function's module code: the function's timeout, and at most VALIDATE_TIMEOUT_MS when a deploy checks it. */
export interface LoadTimeouts {
  load: number;
  /** The function's timeout, for its calls. */
  call: number;
}

/** A function's timeouts when it loads for its calls, or for a deploy's check (`check`). */
export function loadTimeouts(manifest: FunctionManifest, defaultTimeoutMs: number, check: boolean): LoadTimeouts {
  const call = manifest.timeoutMs ?? defaultTimeoutMs;
  return { call, load: check ? Math.min(call, VALIDATE_TIMEOUT_MS) : call };
}

/** Deploy-time validation shared by the runtimes: load the code in a fresh instance, which the deploy keeps or drops. */
export async function validateByLoading(manifest: FunctionManifest, load: () => Promise<Instance>): Promise<ValidatedCode> {
  let instance: Instance;
  try {
    instance = await load();
  } catch (err) {
    if (err instanceof ServiceError && err.code === 'ERR_FUNCTION_FAILED') {
      const key = /does not export a function named/.test(err.message) ? 'entrypoint' : 'file';
      throw new ServiceError('ERR_INVALID_FUNCTION', `functions.${manifest.name}: ${err.message}`, { ...err.details, key });
    }
    // A build error (a file that does not parse, an import that does not resolve) names its file already.
    if (err instanceof ServiceError && err.code === 'ERR_INVALID_FUNCTION' && !err.message.startsWith('functions.')) {
      throw new ServiceError('ERR_INVALID_FUNCTION', `functions.${manifest.name}: ${err.message}`, err.details);
    }
    throw err;
  }
  return { style: instance.style ?? 'handler', instance };
}

/** A frame of the host, not of user code: isolated-vm's boundary, Node's internals, islet's own files, Pyodide's loader. */
const HOST_FRAME = /isolated-vm boundary|node:|\/dist\/|pyodide(\.asm)?\.mjs/;
const FRAME_POSITION = /\(?\/?([^\s():]+):(\d+):(\d+)\)?$/;

/**
 * Turns a failure while loading user code into ERR_FUNCTION_FAILED with the user's own message and
 * location. `mapStack` turns positions in built code back into the user's files. The location is the
 * first frame in the user's own files; when the error was raised inside a package, the message
 * names that place too.
 */
export function loadError(err: unknown, manifest: FunctionManifest, timeoutMs: number, mapStack: (stack: string) => string = (stack) => stack): ServiceError {
  if (err instanceof ServiceError) return err;
  const e = err as NodeJS.ErrnoException;
  if (typeof e?.code === 'string' && /^E[A-Z]+$/.test(e.code)) {
    // The deployed files could not be read: the store's fault, not the function's.
    return new ServiceError('ERR_INTERNAL', `cannot load ${manifest.name}: ${e.message}`);
  }
  const message = String(e?.message ?? err);
  if (/Script execution timed out/.test(message)) {
    return new ServiceError('ERR_FUNCTION_FAILED', `loading ${manifest.file} took longer than ${timeoutMs} ms`);
  }
  if (/memory limit/i.test(message)) {
    return new ServiceError('ERR_FUNCTION_FAILED', `loading ${manifest.file} went over the memory limit`);
  }
  const stack =
    typeof e?.stack === 'string'
      ? mapStack(e.stack)
          .split('\n')
          .filter((l) => !ISLET_FRAME.test(l) && !HOST_FRAME.test(l))
          .join('\n')
      : undefined;
  const frames = (stack?.split('\n').slice(1) ?? []).map((l) => FRAME_POSITION.exec(l.trim())).filter((m): m is RegExpExecArray => m !== null);
  const own = frames.find((m) => !m[1]!.startsWith('node_modules/'));
  const raisedIn = frames[0] && frames[0] !== own && frames[0][1]!.startsWith('node_modules/') ? frames[0] : undefined;
  const where = own ?? raisedIn ?? /\[?\/?([^\s():[\]]+):(\d+):(\d+)\]?/.exec(message) ?? /\(([^\s(),]+), line (\d+)\)/.exec(message);
  const details: Record<string, unknown> = {};
  if (stack) details.stack = stack;
  if (where) {
    details.file = where[1];
    details.line = Number(where[2]);
    if (where[3] !== undefined) details.column = Number(where[3]);
  }
  const position = where ? `${where[1]}:${where[2]}${where[3] === undefined ? '' : `:${where[3]}`}` : '';
  const location = where && !message.includes(`${where[1]}:${where[2]}`) ? ` (${position}${raisedIn && raisedIn !== where ? `; raised in ${raisedIn[1]}:${raisedIn[2]}:${raisedIn[3]}` : ''})` : '';
  return new ServiceError('ERR_FUNCTION_FAILED', `${e?.name && e.name !== 'Error' ? `${e.name}: ` : ''}${message}${location}`, details);
}
