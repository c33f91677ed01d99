import { isUtf8 } from 'node:buffer';
import ivm from 'isolated-vm';
import { toArrayBuffer } from '../bytes';
import { ServiceError } from '../errors';
import type { HandlerStyle } from '../manifest';
import { checkBodySize, checkResponseHeaders, checkStatus, contentTypeOf, jsonResponse } from '../response';
import { serverLog } from '../server-log';
import type { CallInput, CallOutcome, FunctionResponse, Instance, InstanceServices, InstanceState } from '../runtime';
import { hostErrorText } from '../capabilities/errors';
import { EgressBodies } from '../capabilities/fetch/bodies';
import { RequestBodies } from '../capabilities/request-body/host';
import { isRequestBody } from '../request-body';
import type { OpAnswer } from '../capabilities/host-ops';
import { InstanceConnections } from '../capabilities/sockets/connections';
import { SOCKET_LIMITS, type SocketLimits } from '../capabilities/sockets/limits';
import { InstanceStreams } from '../capabilities/streams/host';
import { MAX_STREAMS } from '../capabilities/streams/ops';
import { MAX_TIMERS, TimerOp, type TimerOpKind } from '../capabilities/timers/ops';
import { InstanceSockets } from '../capabilities/websockets/host';
import { WEBSOCKET_LIMITS, type WebSocketLimits } from '../capabilities/websockets/limits';
import { callMeta, EXPLICIT_TAG, Fire, ISLET_FRAME, JSON_TAG, LONG_TEXT, MAX_PENDING_OPS, META_SEPARATOR, requestIdOfMeta, RESEND_RESULTS } from '../sandbox/protocol';
import { SlotMap, SlotMirror } from '../slot-map';
import type { BlankIsolate, BridgeTarget } from './bridge';
import { HostMemory } from './host-memory';
/**
 * What may go into an isolate before its thread must go idle once (see `mayEnter`): text bytes up
 * to a sixteenth of the memory limit (at most 8 MB), and calls.
 */
const HANDED_BYTES = 8 * 1024 * 1024;
const HANDED_CALLS = 1024;

export interface IsolateInstanceOptions {
  timeoutMs: number;
  responseBodyBytes: number;
  /**
   * The sandbox reads a request body still arriving (node8: the body's id in place of its bytes),
   * whole up to `requestBodyBytes`. Without it, the engine hands every call its body whole.
   */
  readsBodyStreams?: { requestBodyBytes: number };
  services: InstanceServices;
  /** Reads one of the version's files for `require` (relative path, already checked to exist). */
  readModule?(path: string): string | undefined;
  /** Turns positions in built code back into the user's files (stacks of failed calls). */
  mapStack?(stack: string): string;
  /**
   * Called once when the instance dies (memory limit, timeout, disposal); `catastrophic` when V8
   * parked its thread after a fatal out-of-memory (the process should be replaced).
   */
  onDeath(instance: IsolateInstance, catastrophic: boolean): void;
  /** Dispose at once on any timeout (an interpreter stopped mid-way cannot be trusted again). */
  disposeOnTimeout?: boolean;
  /** The bounds of the function's WebSockets (default WEBSOCKET_LIMITS). */
  webSockets?: WebSocketLimits;
  /** The bounds of the function's TCP sockets (default SOCKET_LIMITS). */
  sockets?: SocketLimits;
  /**
   * Called after 64, 256, 1,024… calls (four times more each time): an isolate's memory grows with
   * use (young-generation pages touched, optimised code), so the warm cache's figure is measured again.
   */
  remeasure?(instance: IsolateInstance): void;
}

/** Calls sent into the isolate together: they share one timeout timer. */
interface Batch {
  ids: number[];
  /** Calls of the batch not answered yet. */
  left: number;
  timer: NodeJS.Timeout | undefined;
  /**
   * The entry is still in the isolate: its calls may all be answered while their code goes on
   * (a microtask loop after the answer), so the timer stays until both are over.
   */
  running: boolean;
}

interface WaitingFire {
  args: unknown[];
  /** Text bytes it hands in (see HANDED_BYTES). */
  bytes: number;
  /** Host memory given back once it is in. */
  held: number;
  /** Called once it is in. */
  entered?: () => void;
}

/** `waitUntil` windows one instance may have open at once; more do not keep it awake. */
const MAX_WINDOWS = 1024;

interface QueuedCall {
  meta: string;
  /** The body: text, bytes, none, or the id of a body still arriving (in `requestBodies`). */
  raw: string | ArrayBuffer | number | undefined;
  done: (outcome: CallOutcome) => void;
  /** Text bytes of the meta and body. */
  bytes: number;
}

interface RunningCall {
  done: (outcome: CallOutcome) => void;
  batch: Batch;
  /** Its meta (whose head holds its request id: see requestIdOfMeta). */
  meta: string;
  /** The id of its request body still arriving, forgotten when the call ends. */
  bodyId: number | undefined;
  /** Answered with a body that still streams: the call runs until its stream ends. */
  streaming?: boolean;
}

/** Result shapes produced by the sandboxes (CallResult in the protocol), as received: untrusted. */
type RawResult = string | { t?: unknown; s?: unknown; h?: unknown; b?: unknown; c?: unknown; m?: unknown; k?: unknown };

/** The status of an answer that gives a WebSocket (and only of such an answer). */
const SWITCHING_PROTOCOLS = 101;

/**
 * A function version loaded in its own isolate (node8, or Python on Pyodide: both sandboxes speak
 * the same protocol). Calls enter through `callRef` with plain copied data; every other entry
 * (timers, finished fetches) carries a timeout, so guest code can never hold an isolate thread
 * past its limit without being stopped.
 */
export class IsolateInstance implements Instance, BridgeTarget {
  state: InstanceState = 'ready';
  inflight = 0;
  sizeMb: number;
  /** Host timers of the sandbox's timers, by the sandbox's timer id (at most MAX_TIMERS). */
  private readonly timers = new SlotMirror<NodeJS.Timeout>(MAX_TIMERS);
  /** Calls sent into the isolate and not answered yet, by id. */
  private readonly running = new SlotMap<RunningCall>();
  /** Calls waiting for this turn's flush. */
  private queue: QueuedCall[] = [];
  /** Calls one entry may carry (1 once the sandbox asked for it, see unbatch). */
  private maxBatch = Infinity;
  private flushScheduled = false;
  /** Text bytes of the queued calls (metas and bodies). */
  private queuedBytes = 0;
  /** Entries (batches of calls, fires) handed to the isolate and not finished yet. */
  private entries = 0;
  /** Text bytes and calls handed to the isolate since its thread was last idle (see HANDED_BYTES). */
  private handedBytes = 0;
  private handedCalls = 0;
  /** Fires waiting until the isolate may take more (see HANDED_BYTES), in order; `held` bytes of host memory go with each. */
  private fires: WaitingFire[] = [];
  /**
   * Fires (timers that ran out, finished operations) held while the instance has nothing to do: no
   * call in flight, no code loading, no `waitUntil` window open. They enter with the next call, so
   * a function uses no CPU between calls (as a Lambda function is frozen), whatever it left behind.
   */
  private frozen: WaitingFire[] = [];
  /** Loads in progress and `waitUntil` windows open: the instance is awake without calls. */
  private awake = 0;
  /** Open `waitUntil` windows by the sandbox's token, each closed at the latest a timeout after it opened. */
  private readonly windows = new Map<number, NodeJS.Timeout>();
  /** The request each open window is the work of (its sockets stay open until the window closes). */
  private readonly windowOwners = new Map<number, string>();
  /** Loads of the code in progress (module code runs as request ''). */
  private loads = 0;
  private readonly handedBytesLimit: number;
  private calls = 0;
  private nextRemeasure = 64;
  private pendingOps = 0;
  private deathCause: 'memory' | 'timeout' | 'disposed' | undefined;
  private readonly deathWatchers = new Set<(error: Error) => void>();
  /** Set while the version's code is still loading in the isolate (see loadInBackground). */
  private loading: Promise<void> | undefined;
  private loadFailure: ServiceError | undefined;

  private readonly callRef: ivm.Reference<unknown>;
  private readonly fireRef: ivm.Reference<unknown>;
  readonly isolate: ivm.Isolate;
  readonly services: InstanceServices;
  /** How the entry is called, once the code has loaded (set by the runtime). */
  style: HandlerStyle | undefined;
  /** What the host holds for this instance outside its isolate (fetch bodies, results waiting to go in). */
  readonly hostMemory: HostMemory;
  readonly egressBodies = new EgressBodies();
  /** Its TCP sockets, each closed when the call that opened it is over. */
  readonly connections: InstanceConnections;
  readonly requestBodies: RequestBodies;
  /** The response bodies its calls stream. */
  private readonly streams: InstanceStreams;
  /** Its WebSockets: while it holds any, it stays awake, and a retired instance lives on until they close. */
  private readonly sockets: InstanceSockets;
  /** WebSockets held (until the sandbox has taken in their close). */
  private heldSockets = 0;

  constructor(
    blank: BlankIsolate,
    private readonly options: IsolateInstanceOptions,
  ) {
    this.isolate = blank.isolate;
    this.callRef = blank.callRef;
    this.fireRef = blank.fireRef;
    this.services = options.services;
    this.sizeMb = 1;
    this.hostMemory = new HostMemory(blank.memoryMb * 1024 * 1024);
    this.requestBodies = new RequestBodies(options.readsBodyStreams?.requestBodyBytes ?? 0);
    this.streams = new InstanceStreams({ fire: (args) => this.fire(args), hostMemory: this.hostMemory, ended: (callId, error) => this.streamEnded(callId, error) });
    this.sockets = new InstanceSockets({
      limits: options.webSockets ?? WEBSOCKET_LIMITS,
      timeoutMs: options.timeoutMs,
      hostMemory: this.hostMemory,
      fire: (args, bytes, held, entered) => this.fire(args, bytes, held, entered),
      argument: (data) => (typeof data === 'string' ? textArgument(data) : new ivm.ExternalCopy(toArrayBuffer(data)).copyInto({ release: true })),
      hold: () => {
        this.heldSockets++;
        this.wake();
      },
      release: () => {
        this.heldSockets--;
        this.awake--;
        this.disposeIfDone();
      },
      log: (requestId, text) => this.options.services.log(requestId, 'error', text),
    });
    this.connections = new InstanceConnections({ limits: options.sockets ?? SOCKET_LIMITS, hostMemory: this.hostMemory, live: (owner) => this.runs(owner) });
    this.handedBytesLimit = Math.min(HANDED_BYTES, (blank.memoryMb * 1024 * 1024) / 16);
    blank.bridge.target = this;
  }

  /**
   * `work` (an entry into this isolate outside calls, such as loading the code), rejected with the
   * death's error if the instance dies first: after a fatal out-of-memory the entry never settles.
   */
  untilDeath<T>(work: Promise<T>): Promise<T> {
    if (this.state === 'dead') return Promise.reject(this.deathError());
    // Its timers and operations run meanwhile (a module may await them at its top level).
    this.wake();
    this.loads++;
    return new Promise<T>((resolve, reject) => {
      this.deathWatchers.add(reject);
      work.then(resolve, reject).finally(() => {
        this.deathWatchers.delete(reject);
        this.awake--;
        // Sockets the module opened while it loaded close with the load.
        if (--this.loads === 0) this.ownerOver('');
      });
    });
  }

  /**
   * A `waitUntil` window opens (the sandbox's `token`) or closes: while one is open, the
   * instance's timers and operations run without a call in flight, for at most its timeout.
   */
  background(token: number, open: boolean, requestId = ''): void {
    if (this.state === 'dead' || !Number.isInteger(token)) return;
    const timer = this.windows.get(token);
    if (open && timer === undefined && this.windows.size < MAX_WINDOWS) {
      this.windows.set(token, setTimeout(() => this.background(token, false), this.options.timeoutMs).unref());
      this.windowOwners.set(token, requestId);
      this.wake();
    } else if (!open && timer !== undefined) {
      clearTimeout(timer);
      this.windows.delete(token);
      const owner = this.windowOwners.get(token);
      this.windowOwners.delete(token);
      this.awake--;
      if (owner !== undefined) this.ownerOver(owner);
    }
  }

  /**
   * Whether request `requestId` still runs here: its call is in flight, or its `waitUntil` work
   * goes on ('' is the module's code while it loads). Asked only when a socket opens or its
   * owner may be over, so the call path keeps no table of request ids.
   */
  private runs(requestId: string): boolean {
    if (this.state === 'dead') return false;
    if (requestId === '') return this.loads > 0;
    if (requestId.length !== 32) return false;
    for (const owner of this.windowOwners.values()) if (owner === requestId) return true;
    for (const id of this.running.ids()) if (this.running.get(id)!.meta.startsWith(requestId, 2)) return true;
    return false;
  }

  /** A call, a window or the load is over: the sockets of its request close unless it still runs. */
  private ownerOver(requestId: string): void {
    if (this.connections.size > 0 && !this.runs(requestId)) this.connections.ownerEnded(requestId);
  }

  /** Something to do besides calls: what was held while idle goes in. */
  private wake(): void {
    this.awake++;
    this.thaw();
  }

  private thaw(): void {
    if (this.frozen.length === 0) return;
    const held = this.frozen;
    this.frozen = [];
    for (const fire of held) this.fire(fire.args, fire.bytes, fire.held, fire.entered);
  }

  /**
   * Takes calls while the version's code is still loading: their entry queues behind the load on
   * the isolate's thread, so a cold start wakes that thread once instead of twice. Call timeouts
   * start when the load is done. If it fails, every call answers `failure(err)` and the instance
   * dies.
   */
  loadInBackground(load: Promise<void>, failure: (err: unknown) => ServiceError): void {
    this.loading = load.then(
      () => {
        this.loading = undefined;
      },
      (err: unknown) => {
        this.loadFailure ??= failure(err);
        this.loading = undefined;
        this.die('disposed');
      },
    );
  }

  readModule(path: string): string | undefined {
    return this.options.readModule?.(path);
  }

  get readsBodyStreams(): boolean {
    return this.options.readsBodyStreams !== undefined;
  }

  call(input: CallInput, done: (outcome: CallOutcome) => void): void {
    if (this.state === 'dead') {
      done({ ok: false, error: this.deathError() });
      return;
    }
    if (isRequestBody(input.body) && !this.readsBodyStreams) {
      // The engine reads such a body whole for this instance first (Engine.run).
      done({ ok: false, error: new ServiceError('ERR_INTERNAL', 'this instance reads no request body still arriving') });
      return;
    }
    this.inflight++;
    if (this.inflight === 1) this.thaw();
    if (++this.calls === this.nextRemeasure) {
      this.nextRemeasure *= 4;
      this.options.remeasure?.(this);
    }
    const meta = callMeta(input.requestId, input.method, input.path, input.rawQuery, input.headers, input.scheduled);
    const body = input.body;
    let raw: QueuedCall['raw'];
    if (isRequestBody(body)) raw = this.requestBodies.add(body);
    else raw = body.length === 0 ? undefined : isUtf8(body) ? body.toString('utf8') : toArrayBuffer(body);
    const bytes = meta.length + (raw === undefined || typeof raw === 'number' ? 0 : typeof raw === 'string' ? raw.length : raw.byteLength);
    this.queue.push({ meta, raw, done, bytes });
    this.queuedBytes += bytes;
    this.scheduleFlush();
  }

  private scheduleFlush(): void {
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    setImmediate(this.flush);
  }

  /**
   * Whether an entry carrying `bytes` of text for `calls` calls may go into the isolate now, and if
   * so counts it. isolated-vm lets go of what entries handed to an isolate (their arguments and
   * results) only when the isolate's thread finds no entry waiting. Under steady load entries
   * queue back to back and that never happens: a function taking 10 KB bodies at c=64 passed its
   * 128 MB in seconds (measured). So once `handedBytesLimit` or HANDED_CALLS have gone in since
   * the thread was last idle, the next entry waits until the ones in the isolate are done.
   */
  private mayEnter(bytes: number, calls: number): boolean {
    if (this.entries === 0) {
      this.handedBytes = 0;
      this.handedCalls = 0;
    } else if (this.handedBytes + bytes > this.handedBytesLimit || this.handedCalls + calls > HANDED_CALLS) {
      return false;
    }
    this.entries++;
    this.handedBytes += bytes;
    this.handedCalls += calls;
    return true;
  }

  /** An entry is over: waiting fires, then waiting calls, may go in. */
  private readonly entered = (): void => {
    this.entries--;
    if (this.state === 'dead') return;
    while (this.fires.length > 0 && this.mayEnter(this.fires[0]!.bytes, 1)) {
      const fire = this.fires.shift()!;
      this.enterFire(fire.args, fire.held, fire.entered);
    }
    if (this.queue.length > 0) this.scheduleFlush();
  };

  /**
   * Sends the calls queued during this turn of the event loop into the isolate in one entry: under
   * load, one thread hand-off (and one timeout timer) serves many requests. Results of synchronous
   * handlers come back with the entry; the others arrive through `deliver`.
   */
  private readonly flush = (): void => {
    this.flushScheduled = false;
    while (this.queue.length > 0 && this.state !== 'dead') {
      // All waiting calls in one entry, or one per entry once the sandbox asked (see unbatch).
      const taking = Math.min(this.queue.length, this.maxBatch);
      const bytes = taking === this.queue.length ? this.queuedBytes : this.queue.slice(0, taking).reduce((n, c) => n + c.bytes, 0);
      // Otherwise `entered` flushes again.
      if (!this.mayEnter(bytes, taking)) return;
      const queued = taking === this.queue.length ? this.queue : this.queue.slice(0, taking);
      this.queue = taking === this.queue.length ? [] : this.queue.slice(taking);
      this.queuedBytes -= bytes;
      this.enter(queued);
    }
  };

  /** Sends calls into the isolate in one entry; they share one timeout timer. */
  private enter(queued: QueuedCall[]): void {
    const batch: Batch = { ids: [], left: queued.length, timer: undefined, running: true };
    for (const c of queued) batch.ids.push(this.running.add({ done: c.done, batch, meta: c.meta, bodyId: typeof c.raw === 'number' ? c.raw : undefined }));
    const loading = this.loading;
    const armTimer = () => {
      if (batch.left > 0 || batch.running) batch.timer = setTimeout(() => this.onBatchTimeout(batch), this.options.timeoutMs);
    };
    if (loading) void loading.then(armTimer);
    else armTimer();
    const metas = queued.length === 1 ? queued[0]!.meta : queued.map((c) => c.meta).join(META_SEPARATOR);
    // Bodies go as arguments of their own: strings are copied as they are, bytes as one copy each
    // (a structured clone of an array of bodies would serialise every string again).
    const bodies = queued.map((c) => (c.raw instanceof ArrayBuffer ? new ivm.ExternalCopy(c.raw).copyInto({ release: true }) : typeof c.raw === 'number' ? c.raw : textArgument(c.raw)));
    const entry = this.callRef.apply(undefined, [textArgument(metas), batch.ids.join(','), ...bodies], { result: { copy: true } });
    const over = () => {
      batch.running = false;
      if (batch.left === 0) clearTimeout(batch.timer);
      this.entered();
    };
    entry.then(over, over);
    // A failed load answers the batch first (its calls found no handler).
    (loading ? loading.then(() => entry) : entry).then(
      (results) => this.answerBatch(batch, results),
      (err: unknown) => {
        if (this.isRejection(err)) {
          this.uncaught(err, queued.length === 1 ? requestIdOfMeta(queued[0]!.meta) : '-');
          this.resendResults(batch);
          return;
        }
        const error = this.failure(err);
        for (const id of batch.ids) this.finish(id, () => ({ ok: false, error }));
      },
    );
  }

  /** An entry's results: a call's answer, or 0 for a call whose answer comes later (`deliver`). */
  private answerBatch(batch: Batch, results: unknown): void {
    const list = Array.isArray(results) ? (results as unknown[]) : [];
    for (let i = 0; i < batch.ids.length; i++) {
      const result = list[i];
      if (result !== undefined && result !== 0) this.answer(batch.ids[i]!, result as RawResult);
    }
  }

  /**
   * Whether an entry failed because a promise was rejected with no handler by its end, which
   * isolated-vm throws in place of the entry's answer: the sandbox catches everything else its
   * entries run but the timeout and the memory limit.
   */
  private isRejection(err: unknown): boolean {
    if (this.state === 'dead' || this.isolate.isDisposed) return false;
    const message = err instanceof Error ? err.message : String(err);
    return !/Script execution timed out|disposed/i.test(message);
  }

  /**
   * A promise rejected with no handler (an Express 4 route's async rejection, a floating promise):
   * as Node logs it (with --unhandled-rejections=warn) and a Worker does, in the function's logs;
   * no call fails for it. The calls go on: their handlers may still answer, or their timeout does.
   */
  private uncaught(err: unknown, requestId: string): void {
    let text = err instanceof Error ? (err.stack ?? `${err.name}: ${err.message}`) : String(err);
    text = (this.options.mapStack?.(text) ?? text)
      .split('\n')
      .filter((line) => !ISLET_FRAME.test(line) && !line.includes('isolated-vm boundary'))
      .join('\n');
    this.options.services.log(requestId, 'error', `Uncaught (in promise) ${text}`);
  }

  /** Asks the sandbox again for the results of a batch whose entry threw a rejection in place of them. */
  private resendResults(batch: Batch): void {
    if (this.state === 'dead') return;
    this.entries++;
    this.callRef.apply(undefined, [RESEND_RESULTS, batch.ids.join(',')], { result: { copy: true }, timeout: this.options.timeoutMs }).then(
      (results) => {
        this.entered();
        this.answerBatch(batch, results);
      },
      () => this.entered(),
    );
  }

  /** From now on, one call per entry (the sandbox asked: its promise jobs must not mix requests). */
  unbatch(): void {
    this.maxBatch = 1;
  }

  /** Answers a running call once (later answers for the same id are ignored). */
  private finish(id: number, outcome: () => CallOutcome): void {
    const streaming = this.running.get(id);
    if (streaming?.streaming) {
      // Answered already: its stream fails (the call's timeout, the instance's death), which ends the call.
      const result = outcome();
      this.streams.fail(id, result.ok ? new ServiceError('ERR_INTERNAL', 'the call ended while its answer streamed') : result.error);
      return;
    }
    const call = this.running.take(id);
    if (!call) return;
    if (--call.batch.left === 0 && !call.batch.running) clearTimeout(call.batch.timer);
    if (call.bodyId !== undefined) this.requestBodies.forget(call.bodyId);
    this.settle(call.done, outcome());
    if (this.connections.size > 0) this.ownerOver(requestIdOfMeta(call.meta));
  }

  private settle(done: (outcome: CallOutcome) => void, outcome: CallOutcome): void {
    this.inflight--;
    try {
      done(outcome);
    } catch (err) {
      // A failure while answering one call must not leave the rest of its batch unanswered.
      serverLog.error({ code: 'ERR_INTERNAL', err }, `internal error while answering a call: ${(err as Error)?.message ?? String(err)}`);
    }
    this.disposeIfDone();
  }

  /** A retired instance is disposed once its calls are over and its WebSockets closed. */
  private disposeIfDone(): void {
    if (this.state === 'retired' && this.inflight === 0 && this.heldSockets === 0) this.dispose();
  }

  private onBatchTimeout(batch: Batch): void {
    // A dead instance answered its calls already (a catastrophe leaves its entry never settled).
    if (this.state === 'dead') return;
    const error = this.timeoutError();
    let timedOut = false;
    for (const id of batch.ids) {
      if (this.running.get(id) === undefined) continue;
      timedOut = true;
      this.finish(id, () => ({ ok: false, error }));
    }
    if (timedOut) this.onTimeout();
    else if (batch.running) {
      // Every call was answered, and their code still runs a timeout later (a loop of promise jobs):
      // nobody waits for it, and nothing else can enter the isolate meanwhile.
      this.options.services.log('-', 'error', `the function kept running ${this.options.timeoutMs} ms after its answer and was stopped`);
      this.deathCause ??= 'timeout';
      this.die('timeout');
    }
  }

  /** The result of a call whose handler returned a promise (sent by the sandbox when it settled). */
  deliver(id: number, result: unknown): void {
    this.answer(id, result as RawResult);
  }

  /** A stream's chunk, its end or its failure, from the sandbox (see InstanceStreams). */
  chunk(key: number, data: unknown, state: unknown, message: unknown): void {
    this.streams.chunk(key, data, state, message);
  }

  /** A WebSocket's operation, from the sandbox (see InstanceSockets). */
  socket(key: number, op: unknown, data: unknown, reason: unknown): void {
    if (this.state !== 'dead') this.sockets.op(key, op, data, reason);
  }

  /** Closes its WebSockets (its version was replaced or removed, the server drains). */
  closeSockets(code: number, reason: string): void {
    this.sockets.shutAll(code, reason);
  }

  /** A call's result: its answer, the head of an answer whose body streams, or a WebSocket given. */
  private answer(id: number, result: RawResult): void {
    if (typeof result === 'object' && result !== null && result.t === 's') this.startStream(id, result);
    else if (typeof result === 'object' && result !== null && result.t === 'w') this.finish(id, () => this.socketAnswer(result));
    else this.finish(id, () => this.parseResult(result));
  }

  /** An answer of status 101 that gives the client end of the pair `k`, whose server end the sandbox accepted. */
  private socketAnswer(result: { h?: unknown; k?: unknown }): CallOutcome {
    try {
      const headers = checkResponseHeaders(result.h);
      const webSocket = this.sockets.give(Number(result.k));
      if (!webSocket) throw new ServiceError('ERR_BAD_RESPONSE', "the answer's WebSocket is not one this instance accepted");
      return { ok: true, response: { status: SWITCHING_PROTOCOLS, headers, body: '', webSocket } };
    } catch (err) {
      return { ok: false, error: err instanceof ServiceError ? err : new ServiceError('ERR_BAD_RESPONSE', (err as Error).message) };
    }
  }

  /**
   * Answers call `id` with the status and headers of `head` and a body pulled from the sandbox's
   * stream; the call runs on (its timeout, the instance awake) until the stream ends.
   */
  private startStream(id: number, head: { s?: unknown; h?: unknown; k?: unknown }): void {
    const call = this.running.get(id);
    if (!call || call.streaming) return;
    let response: FunctionResponse;
    try {
      const status = answerStatus(head.s);
      // A stream's length is not known yet: it is typed as a body that has bytes.
      const headers = withDefaultType(checkResponseHeaders(head.h), 'application/octet-stream', Number.POSITIVE_INFINITY);
      const stream = this.streams.start(Number(head.k), id);
      if (!stream) throw new ServiceError('ERR_BAD_RESPONSE', `the instance already streams ${MAX_STREAMS} answers`);
      // A stream's length is not known yet: it is typed as a body that has bytes.
      response = { status, headers, body: stream };
    } catch (err) {
      const error = err instanceof ServiceError ? err : new ServiceError('ERR_BAD_RESPONSE', (err as Error).message);
      this.finish(id, () => ({ ok: false, error }));
      return;
    }
    call.streaming = true;
    try {
      call.done({ ok: true, response });
    } catch (err) {
      serverLog.error({ code: 'ERR_INTERNAL', err }, `internal error while answering a call: ${(err as Error)?.message ?? String(err)}`);
    }
  }

  /** The stream of call `id` ended (or failed): the call is over. */
  private streamEnded(id: number, _error: ServiceError | undefined): void {
    const call = this.running.take(id);
    if (!call) return;
    if (--call.batch.left === 0 && !call.batch.running) clearTimeout(call.batch.timer);
    if (call.bodyId !== undefined) this.requestBodies.forget(call.bodyId);
    this.inflight--;
    if (this.connections.size > 0) this.ownerOver(requestIdOfMeta(call.meta));
    this.disposeIfDone();
  }

  cpuTimeMs(): number {
    return this.state === 'dead' || this.isolate.isDisposed ? 0 : Number(this.isolate.cpuTime) / 1e6;
  }

  retire(): void {
    if (this.state !== 'ready') return;
    this.state = 'retired';
    this.disposeIfDone();
  }

  dispose(): void {
    this.die('disposed');
  }

  /** V8 hit a fatal out-of-memory in this isolate; its thread is parked for good and must not be touched. */
  onCatastrophe(): void {
    this.die('memory', false);
  }

  private die(cause: 'memory' | 'timeout' | 'disposed', disposeIsolate = true): void {
    if (this.state === 'dead') return;
    this.state = 'dead';
    this.deathCause ??= cause;
    for (const timer of this.timers.takeAll()) clearTimeout(timer);
    for (const timer of this.windows.values()) clearTimeout(timer);
    this.windows.clear();
    this.windowOwners.clear();
    this.egressBodies.closeAll();
    this.frozen = [];
    const error = this.deathError();
    this.sockets.dropAll(error.code === 'ERR_INTERNAL' ? 'the function instance was stopped' : error.message);
    this.connections.closeAll(error.code === 'ERR_INTERNAL' ? 'the function instance was stopped' : error.message);
    for (const id of this.running.ids()) this.finish(id, () => ({ ok: false, error }));
    const queued = this.queue;
    this.queue = [];
    this.queuedBytes = 0;
    for (const c of queued) this.settle(c.done, { ok: false, error });
    this.requestBodies.forgetAll();
    this.fires = [];
    // A plain Error, so a load that dies is reported like any load failure (loadError).
    for (const reject of [...this.deathWatchers]) reject(new Error(error.message));
    this.deathWatchers.clear();
    if (disposeIsolate && !this.isolate.isDisposed) {
      try {
        this.isolate.dispose();
      } catch {
        // already disposed by isolated-vm (memory limit)
      }
    }
    // Only a catastrophe leaves the isolate undisposed: its thread is parked.
    this.options.onDeath(this, !disposeIsolate);
  }

  private deathError(): ServiceError {
    if (this.loadFailure) return this.loadFailure;
    if (this.deathCause === 'memory') return new ServiceError('ERR_RESOURCE_LIMIT', 'the function instance went over its memory limit and was discarded');
    if (this.deathCause === 'timeout') return new ServiceError('ERR_TIMEOUT', 'the function instance was stopped because a call on it ran past its timeout');
    return new ServiceError('ERR_INTERNAL', 'the function instance was stopped');
  }

  /**
   * A call ran past its timeout. The instance takes no new calls. If the isolate is burning CPU
   * (a loop), it is stopped at once; if it is only waiting (a promise that never settles), calls
   * already running on it may finish first.
   */
  private onTimeout(): void {
    this.deathCause ??= 'timeout';
    if (this.options.disposeOnTimeout) {
      this.die('timeout');
      return;
    }
    this.retire();
    // isolated-vm may have disposed it already (over its memory limit): its next failure says so.
    if (this.state === 'dead' || this.isolate.isDisposed) return;
    const before = this.isolate.cpuTime;
    setTimeout(() => {
      if (this.state === 'dead' || this.isolate.isDisposed) return;
      if (this.isolate.cpuTime - before > 5_000_000n) this.die('timeout');
    }, 10).unref();
  }

  private failure(err: unknown): ServiceError {
    const message = err instanceof Error ? err.message : String(err);
    if (this.state === 'dead') return this.deathError();
    // Disposed while not dead to us: isolated-vm disposes an isolate on its own only when it goes
    // over its memory limit (calls queued behind the one that hit it only hear "disposed").
    if (this.isolate.isDisposed) {
      this.deathCause = 'memory';
      this.die('memory', false);
      return this.deathError();
    }
    if (/Script execution timed out/.test(message)) {
      this.deathCause ??= 'timeout';
      this.retire();
      return this.timeoutError();
    }
    return new ServiceError('ERR_INTERNAL', `the function instance failed: ${message}`);
  }

  /** The answer of a call stopped at its timeout. */
  private timeoutError(): ServiceError {
    return new ServiceError('ERR_TIMEOUT', `the function ran longer than its timeout of ${this.options.timeoutMs} ms and was stopped`);
  }

  private parseResult(result: RawResult): CallOutcome {
    try {
      const response = this.toResponse(result);
      checkBodySize(response.body as string | Uint8Array, this.options.responseBodyBytes);
      return { ok: true, response };
    } catch (err) {
      if (err instanceof ServiceError) {
        if (err.code === 'ERR_RESOURCE_LIMIT') this.retire();
        return { ok: false, error: err };
      }
      return { ok: false, error: new ServiceError('ERR_INTERNAL', `unreadable function result: ${(err as Error).message}`) };
    }
  }

  private toResponse(result: RawResult): FunctionResponse {
    if (typeof result === 'string') {
      if (result.startsWith(JSON_TAG)) return jsonResponse(result.slice(1));
      if (result.startsWith(EXPLICIT_TAG)) {
        const a = result.indexOf('\n');
        const b = result.indexOf('\n', a + 1);
        if (a < 0 || b < 0) throw new Error('malformed explicit response');
        const headers = checkResponseHeaders(JSON.parse(result.slice(a + 1, b)));
        const body = result.slice(b + 1);
        return { status: answerStatus(Number(result.slice(1, a))), headers: withDefaultType(headers, 'text/plain; charset=utf-8', body.length), body };
      }
      throw new Error('unknown result tag');
    }
    if (typeof result !== 'object' || result === null) throw new Error('result is not an object');
    if (result.t === 'e') {
      const code = result.c === 'ERR_BAD_RESPONSE' || result.c === 'ERR_RESOURCE_LIMIT' ? result.c : 'ERR_FUNCTION_FAILED';
      const stack = typeof result.k === 'string' ? (this.options.mapStack?.(result.k) ?? result.k) : undefined;
      throw new ServiceError(code, String(result.m), stack === undefined ? undefined : { stack });
    }
    if (result.t === 'b' && (result.b instanceof ArrayBuffer || typeof result.b === 'string')) {
      const headers = checkResponseHeaders(result.h);
      const body = typeof result.b === 'string' ? result.b : new Uint8Array(result.b);
      return { status: answerStatus(result.s), headers: withDefaultType(headers, 'application/octet-stream', body.length), body };
    }
    throw new Error('unknown result shape');
  }

  setTimer(op: TimerOpKind, id: number, ms: number): void {
    if (this.state === 'dead' || !Number.isInteger(id)) return;
    const existing = this.timers.take(id);
    if (existing) clearTimeout(existing);
    if (op !== TimerOp.arm) return;
    const delay = Number.isFinite(ms) ? Math.min(Math.max(ms, 0), 2 ** 31 - 1) : 0;
    const timer = setTimeout(() => {
      this.timers.take(id);
      this.fire([Fire.timer, id]);
    }, delay);
    timer.unref();
    if (!this.timers.set(id, timer)) clearTimeout(timer);
  }

  /**
   * Runs an operation and enters the isolate with its reply (see HostReply): its answer, or its
   * failure as a HostError. The instance's own refusals (too many in flight, no memory left for the
   * result) are TypeErrors, as a web API's.
   */
  runOp(id: number, work: () => Promise<OpAnswer>): void {
    if (this.state === 'dead' || !Number.isInteger(id)) return;
    const refuse = (message: string) => JSON.stringify({ message, name: 'TypeError' });
    const settle = (ok: boolean, resultPayload: string, resultBody?: Uint8Array, transfer = false) => {
      this.pendingOps--;
      const bytes = resultPayload.length + (resultBody?.byteLength ?? 0);
      // A result waits for its turn to go in: the host holds it meanwhile, within the instance's memory.
      if (this.state !== 'dead' && !this.hostMemory.reserve(bytes)) {
        const refusal = refuse(this.hostMemory.refusal("the operation's result was dropped"));
        this.fire([Fire.op, id, false, refusal], refusal.length);
        return;
      }
      const args: unknown[] = [Fire.op, id, ok, textArgument(resultPayload)];
      if (resultBody) args.push(transfer ? movedBytes(resultBody) : new ivm.ExternalCopy(toArrayBuffer(resultBody)).copyInto({ release: true }));
      this.fire(args, bytes, bytes);
    };
    this.pendingOps++;
    if (this.pendingOps > MAX_PENDING_OPS) {
      settle(false, refuse(`too many operations in flight (limit ${MAX_PENDING_OPS})`));
      return;
    }
    work().then(
      (r) => settle(true, r.payload, r.body, r.transfer),
      (err: unknown) => settle(false, hostErrorText(err)),
    );
  }

  /**
   * Enters the isolate for a timer or a finished operation, bounded by the timeout; `held` bytes
   * of host memory are given back once it is in. Held while the instance is idle (see `frozen`).
   */
  private fire(args: unknown[], bytes = 0, held = 0, entered?: () => void): void {
    if (this.state === 'dead') return;
    if (this.inflight === 0 && this.awake === 0) this.frozen.push({ args, bytes, held, entered });
    else if (this.fires.length > 0 || !this.mayEnter(bytes, 1)) this.fires.push({ args, bytes, held, entered });
    else this.enterFire(args, held, entered);
  }

  private enterFire(args: unknown[], held: number, entered?: () => void): void {
    this.fireRef.apply(undefined, args, { timeout: this.options.timeoutMs }).then(
      () => {
        this.hostMemory.release(held);
        this.entered();
        entered?.();
      },
      (err: unknown) => {
        this.hostMemory.release(held);
        this.entered();
        entered?.();
        if (this.isRejection(err)) {
          this.uncaught(err, '-');
          return;
        }
        const error = this.failure(err);
        if (error.code === 'ERR_TIMEOUT') this.die('timeout');
      },
    );
  }
}

/**
 * A text for an isolate. isolated-vm hands a string of 1,024 characters or more to an isolate as an
 * external string and counts its bytes against the isolate's memory limit, but V8 is not told of
 * them: once such strings outlive a young-generation collection (a batch of POST bodies does),
 * nothing collects them until a full collection: a function that keeps nothing, taking 10 KB
 * bodies 64 at a time, was measured at up to 120 MB of its 128 MB limit. So a
 * long text goes as a one-element array, which isolated-vm serialises: the isolate gets an
 * ordinary string in its heap. The sandbox unwraps it (`fromHost` in the protocol).
 */
export function textArgument(text: string | undefined): string | ivm.Copy<string[]> | undefined {
  return text !== undefined && text.length >= LONG_TEXT ? new ivm.ExternalCopy([text]).copyInto({ release: true }) : text;
}

/**
 * Bytes moved into an isolate without a copy: their ArrayBuffer is detached on the host (a view of
 * part of one is copied first, so that the rest stays whole).
 */
function movedBytes(bytes: Uint8Array): ivm.Copy<ArrayBuffer> {
  return new ivm.ExternalCopy(toArrayBuffer(bytes), { transferOut: true }).copyInto({ release: true, transferIn: true });
}

/**
 * The status of an answer that gives no WebSocket: 100–599 but 101, which would leave the client
 * waiting for another protocol on a connection that goes on speaking HTTP.
 */
function answerStatus(status: unknown): number {
  const checked = checkStatus(status);
  if (checked === SWITCHING_PROTOCOLS) throw new ServiceError('ERR_BAD_RESPONSE', 'status 101 answers only with a WebSocket: new Response(null, { status: 101, webSocket: client })');
  return checked;
}

/** A body's type when the function named none; an empty body (a 204, a `new Response(null)`) gets none. */
function withDefaultType(headers: Record<string, string>, type: string, bodyLength: number): Record<string, string> {
  if (bodyLength > 0 && contentTypeOf(headers) === undefined) headers['content-type'] = type;
  return headers;
}
