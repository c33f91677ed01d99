import ivm from 'isolated-vm';
import { textIfUtf8, toArrayBuffer } from '../bytes';
import { ServiceError } from '../errors';
import type { HandlerStyle } from '../manifest';
import type { CallInput, CallOutcome, Instance, InstanceServices, InstanceState } from '../runtime';
import { EgressBodies } from '../capabilities/fetch/bodies';
import { RequestBodies } from '../capabilities/request-body/host';
import { isRequestBody } from '../request-body';
import type { OpAnswer } from '../capabilities/host-ops';
import { InstanceConnections } from '../capabilities/sockets/connections';
import { SOCKET_LIMITS } from '../capabilities/sockets/limits';
import { InstanceStreams } from '../capabilities/streams/host';
import type { TimerOpKind } from '../capabilities/timers/ops';
import { InstanceSockets } from '../capabilities/websockets/host';
import { WEBSOCKET_LIMITS } from '../capabilities/websockets/limits';
import { callMeta, Fire, requestIdOfMeta } from '../sandbox/protocol';
import type { BlankIsolate, BridgeTarget } from './bridge';
import { CallAnswers } from './answers';
import { CallBatches, type Batch } from './call-batches';
import { IsolateEntries } from './entries';
import { deathError, isRejection, timeoutError, uncaughtLine, type DeathCause } from './failures';
import { HostMemory } from './host-memory';
import type { IsolateInstanceOptions } from './instance-options';
import { IsolateOperations } from './operations';
import { textArgument, type RawResult } from './results';
import { RequestOwners } from './owners';

export type { IsolateInstanceOptions } from './instance-options';

/**
 * A function version loaded in its own isolate (node8, or Python on Pyodide: both sandboxes speak
 * the same protocol). Calls enter through `callRef` with plain copied data (see CallBatches); every
 * other entry (timers, finished fetches) carries a timeout (see IsolateEntries), so guest code can
 * never hold an isolate thread past its limit without being stopped.
 */
export class IsolateInstance implements Instance, BridgeTarget {
  state: InstanceState = 'ready';
  inflight = 0;
  sizeMb: number;
  private readonly batches: CallBatches;
  private readonly answers: CallAnswers;
  private readonly entries: IsolateEntries;
  private readonly operations: IsolateOperations;
  /** Loads in progress, `waitUntil` windows open and WebSockets held: the instance is awake without calls. */
  private awake = 0;
  private readonly owners: RequestOwners;
  private calls = 0;
  private nextRemeasure = 64;
  private deathCause: DeathCause | undefined;
  private readonly deathWatchers = new Set<(error: Error) => void>();
  /** Set while the version's code is still loading in the isolate (see loadInBackground). */
  private loading: Promise<void> | undefined;
  private loadFailure: ServiceError | undefined;

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
    this.services = options.services;
    this.sizeMb = 1;
    this.hostMemory = new HostMemory(blank.memoryMb * 1024 * 1024);
    const dead = () => this.state === 'dead';
    this.entries = new IsolateEntries(
      {
        fireRef: blank.fireRef,
        timeoutMs: options.timeoutMs,
        hostMemory: this.hostMemory,
        dead,
        idle: () => this.inflight === 0 && this.awake === 0,
        afterEntry: () => this.batches.flushLater(),
        fireFailed: (err) => {
          if (!this.rejected(err, '-') && this.failure(err).code === 'ERR_TIMEOUT') this.die('timeout');
        },
      },
      blank.memoryMb * 1024 * 1024,
    );
    this.batches = new CallBatches({
      callRef: blank.callRef,
      timeoutMs: options.timeoutMs,
      entries: this.entries,
      loading: () => this.loading,
      dead,
      answer: (id, result) => this.answers.answer(id, result),
      finish: (id, outcome) => this.answers.finish(id, outcome),
      timedOut: (batch) => this.onBatchTimeout(batch),
      rejected: (err, requestId) => this.rejected(err, requestId),
      failure: (err) => this.failure(err),
    });
    this.operations = new IsolateOperations({ hostMemory: this.hostMemory, dead, fire: (args, bytes, held) => this.fire(args, bytes, held) });
    this.requestBodies = new RequestBodies(options.readsBodyStreams?.requestBodyBytes ?? 0);
    this.streams = new InstanceStreams({ fire: (args) => this.fire(args), hostMemory: this.hostMemory, ended: (callId) => this.answers.streamEnded(callId) });
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
    this.connections = new InstanceConnections({ limits: options.sockets ?? SOCKET_LIMITS, hostMemory: this.hostMemory, live: (owner) => this.owners.runs(owner) });
    this.owners = new RequestOwners(this.batches.running, this.connections, this.egressBodies, dead);
    this.answers = new CallAnswers({
      batches: this.batches,
      streams: this.streams,
      requestBodies: this.requestBodies,
      egressBodies: this.egressBodies,
      responseBodyBytes: options.responseBodyBytes,
      mapStack: options.mapStack,
      give: (key) => this.sockets.give(key),
      retire: () => this.retire(),
      left: () => this.inflight--,
      disposeIfDone: () => this.disposeIfDone(),
      ownerOver: (meta) => {
        if (this.owners.holding) this.owners.over(requestIdOfMeta(meta));
      },
    });
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
    this.owners.loads++;
    return new Promise<T>((resolve, reject) => {
      this.deathWatchers.add(reject);
      work.then(resolve, reject).finally(() => {
        this.deathWatchers.delete(reject);
        this.awake--;
        // Sockets the module opened while it loaded close with the load.
        if (--this.owners.loads === 0) this.owners.over('');
      });
    });
  }

  /**
   * A `waitUntil` window opens (the sandbox's `token`) or closes: while one is open, the
   * instance's timers and operations run without a call in flight, for at most its timeout.
   */
  background(token: number, open: boolean, requestId = ''): void {
    if (this.state === 'dead' || !Number.isInteger(token)) return;
    if (open) {
      if (this.owners.openWindow(token, requestId, this.options.timeoutMs, () => this.background(token, false))) this.wake();
    } else if (this.owners.closeWindow(token)) this.awake--;
  }

  /** Something to do besides calls: what was held while idle goes in. */
  private wake(): void {
    this.awake++;
    this.entries.thaw();
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

  relocate(codeDir: string): void {
    if (this.options.files) this.options.files.codeDir = codeDir;
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
    if (this.inflight === 1) this.entries.thaw();
    if (++this.calls === this.nextRemeasure) {
      this.nextRemeasure *= 4;
      this.options.remeasure?.(this);
    }
    const meta = callMeta(input.requestId, input.method, input.path, input.rawQuery, input.headers, input.scheduled);
    const body = input.body;
    let raw: string | ArrayBuffer | number | undefined;
    if (isRequestBody(body)) raw = this.requestBodies.add(body);
    else raw = body.length === 0 ? undefined : (textIfUtf8(body) ?? toArrayBuffer(body));
    const bytes = meta.length + (raw === undefined || typeof raw === 'number' ? 0 : typeof raw === 'string' ? raw.length : raw.byteLength);
    this.batches.add({ meta, raw, done, bytes });
    // Only the request id is held: the line lives as long as the client's response, and holding
    // the call (its meta, its body) there made every call's survive young-generation collections
    // (scavenges rose to 12% of a warm hello's CPU).
    const gone = input.clientGone;
    if (gone) {
      const { requestId } = input;
      gone.onGone = () => this.clientGone(requestId);
    }
  }

  /**
   * The client of a call went away. A call still waiting to go in (behind a busy isolate) never
   * runs; a fetch-style handler's request.signal aborts (the fire follows the call in, so a call
   * that went in but has not started yet hears it as it starts). Request ids are unique: told
   * after the call ended, the sandbox finds nothing to abort.
   */
  private clientGone(requestId: string): void {
    const queued = this.batches.dropQueued(requestId);
    if (queued) {
      if (typeof queued.raw === 'number') this.requestBodies.forget(queued.raw);
      this.answers.settle(queued.done, { ok: false, error: new ServiceError('ERR_CLIENT_GONE', 'the client closed the connection before the call started: the handler did not run') });
    } else if (this.style === 'fetch') this.fire([Fire.abort, 0, true, requestId]);
  }

  /**
   * A promise rejected with no handler, which isolated-vm throws in place of an entry's answer (see
   * isRejection), goes to the function's logs and fails no call: the calls go on, and their
   * handlers may still answer, or their timeout does. False for any other failure.
   */
  private rejected(err: unknown, requestId: string): boolean {
    if (this.state === 'dead' || this.isolate.isDisposed || !isRejection(err)) return false;
    this.options.services.log(requestId, 'error', uncaughtLine(err, this.options.mapStack));
    return true;
  }

  /** From now on, one call per entry (the sandbox asked: its promise jobs must not mix requests). */
  unbatch(): void {
    this.batches.unbatch();
  }

  /** A retired instance is disposed once its calls are over and its WebSockets closed. */
  private disposeIfDone(): void {
    if (this.state === 'retired' && this.inflight === 0 && this.heldSockets === 0) this.dispose();
  }

  private onBatchTimeout(batch: Batch): void {
    // A dead instance answered its calls already (a catastrophe leaves its entry never settled).
    if (this.state === 'dead') return;
    const error = timeoutError(this.options.timeoutMs);
    let timedOut = false;
    for (const id of batch.ids) {
      if (this.batches.running.get(id) === undefined) continue;
      timedOut = true;
      this.answers.finish(id, () => ({ ok: false, error }));
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
    this.answers.answer(id, result as RawResult);
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

  private die(cause: DeathCause, disposeIsolate = true): void {
    if (this.state === 'dead') return;
    this.state = 'dead';
    this.deathCause ??= cause;
    this.operations.clearTimers();
    this.owners.clearWindows();
    this.egressBodies.closeAll();
    this.entries.clear();
    const error = this.deathError();
    this.sockets.dropAll(error.code === 'ERR_INTERNAL' ? 'the function instance was stopped' : error.message);
    this.connections.closeAll(error.code === 'ERR_INTERNAL' ? 'the function instance was stopped' : error.message);
    for (const id of this.batches.running.ids()) this.answers.finish(id, () => ({ ok: false, error }));
    for (const c of this.batches.takeQueued()) this.answers.settle(c.done, { ok: false, error });
    this.requestBodies.forgetAll();
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
    return this.loadFailure ?? deathError(this.deathCause);
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
      return timeoutError(this.options.timeoutMs);
    }
    return new ServiceError('ERR_INTERNAL', `the function instance failed: ${message}`);
  }

  setTimer(op: TimerOpKind, id: number, ms: number): void {
    this.operations.setTimer(op, id, ms);
  }

  runOp(id: number, work: () => Promise<OpAnswer>): void {
    this.operations.run(id, work);
  }

  /** Enters the isolate for a timer, a finished operation, a stream's window or a WebSocket's event (see IsolateEntries). */
  private fire(args: unknown[], bytes = 0, held = 0, entered?: () => void): void {
    this.entries.fire(args, bytes, held, entered);
  }
}
