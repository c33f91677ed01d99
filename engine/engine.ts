import { stripVTControlCharacters } from 'node:util';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { clientError, errorResponse, responseHeaders } from './error-answer';
import { checkNodeFlags, enableIsolateFeatures } from './node-flags';
import { HeldRefusals } from './held-refusals';
import { HostWorkPool } from './host-work/pool';
import { LogBudget } from './capabilities/console/log-budget';
import { Admission, KeyUseRecorder, type Gate } from './admission';
import { ServiceError } from './errors';
import { Egress } from './capabilities/fetch/egress';
import { AccountConnections } from './capabilities/websockets/accounts';
import type { FunctionSocket } from './capabilities/websockets/host';
import { DEFAULT_LIMITS, type Limits } from './limits';
import type { LogEntry, LogQuery, LogReader, LogStore } from './logs';
import { describeFunction, isFunctionName, isPublicName, validateSpec, type FunctionDescription, type FunctionManifest, type RuntimeName } from './manifest';
import { catastrophes } from './isolate/instance';
import { Management } from './manage';
import { logObserver, metricsObserver, observers, type CallObserver } from './observer';
import { WarmPool, type PoolStats } from './pool';
import { newRequestId } from './request-id';
import { HEADER_LINES } from './response';
import type { CallInput, CallOutcome, Instance, InstanceServices, Runtime } from './runtime';
import type { ScheduledEvent } from './sandbox/protocol';
import { isBodyStream, readWhole, watchStream, type BodyStream } from './body-stream';
import { isRequestBody, streamedBodyTooLarge, wholeBodyTooLarge, type RequestBody } from './request-body';
import type { BundleSource } from './bundle';
import { FunctionStatsTable, type FunctionStats } from './stats/function-stats';
import { History } from './stats/history';
import { Catalog } from './store/catalog';
import { Background } from './jobs/background';
import type { RunOutcome } from './jobs/runner';
import { functionsExceeded, type DeployQuota } from './store/quota';
import type { ApiKeyRecord, NewAccount, Store, StoreHealth } from './store/store';
import { checkPercent } from './store/traffic';

export { clientError, errorResponse, responseHeaders };

/** What the engine gives a runtime it creates: the limits, and where to report its instances' deaths and sizes. */
export interface RuntimeContext {
  limits: Limits;
  /** An instance died on its own (memory limit, timeout): the warm cache drops it. */
  onInstanceDeath(instance: Instance): void;
  /** An instance's size is known or changed: the warm cache counts it. */
  onInstanceSized(instance: Instance): void;
}

/** A runtime the composition root plugs in, under the runtime names of `service.yml` it serves. */
export interface RuntimeRegistration {
  names: RuntimeName[];
  create(context: RuntimeContext): Runtime;
}

export interface EngineOptions {
  /** Where accounts, functions and code live (the engine never knows which kind of store it is). */
  store: Store;
  /** Functions' logs. */
  logs: LogStore;
  /** Where reads of logs go (default `logs`; with several nodes, all of theirs). */
  logReader?: LogReader;
  runtimes: RuntimeRegistration[];
  limits?: Partial<Limits>;
  /** Let functions' fetch reach private and loopback addresses (default false). */
  allowPrivateEgress?: boolean;
  /** Where uploads wait while they arrive (deploy bundles): the data directory's staging area (default: a folder of the OS's temp directory). */
  stagingDir?: string;
  /**
   * Count every function's calls for `/metrics`, `islet stats` and their recent history (default
   * true). Off, a call is only logged.
   */
  metrics?: boolean;
}

/** What a deploy may say besides the function's spec. */
export interface DeployRequest {
  /** A note kept with the version. */
  message?: string;
  /** Serve the new version to this share of calls, 0–100 (the rest stays on the previous one). */
  percent?: unknown;
}

/** An invocation as it arrives (over HTTP or from `sdk.invoke`). */
export interface InvokeRequest {
  accountId: string;
  functionName: string;
  apiKey: string | undefined;
  method: string;
  path: string;
  rawQuery: string;
  headers: Record<string, string>;
  /** The whole body, or one still arriving from the client (the HTTP server's, for a large or chunked body). */
  body: Buffer | RequestBody;
  requestId?: string;
  /**
   * A WebSocket upgrade (the HTTP server's `ws://` route): it takes one of the account's
   * connections, and only it may be answered with a WebSocket.
   */
  upgrade?: boolean;
}

/** What starts a run the server makes itself (see Engine.dispatchQueued). */
export interface RunTrigger {
  /** How its call line names it in the logs, as a call's method would (`ASYNC POST`, `SCHEDULED`). */
  label: string;
  /** A schedule's tick, told to the handler. */
  scheduled?: ScheduledEvent;
}

export interface InvokeResponse {
  status: number;
  headers: Record<string, string>;
  /** The whole body, or one the function streams (its reader must read it to its end, or cancel it). */
  body: string | Uint8Array | BodyStream;
  requestId: string;
  /** Microseconds spent in the handler. */
  durationUs: number;
  /** The function version that answered (X-Service-Version); absent when no version was chosen. */
  version?: number;
  /** The WebSocket of a 101 answer to an upgrade: its reader must attach or abandon it. */
  webSocket?: FunctionSocket;
}

/** An answer whose body is whole (not streamed). */
export type WholeResponse = Omit<InvokeResponse, 'body'> & { body: string | Uint8Array };

export interface EngineStats extends PoolStats {
  store: StoreHealth;
  runtimes: string[];
  accounts: number;
  functions: number;
  catastrophicOutOfMemory: number;
}

/**
 * The core of islet: accounts, deployed functions, warm instances and the invocation contract
 * (auth order, limits, error shapes). The HTTP server and the in-process sdk both call `invoke`,
 * so both behave the same. What it serves comes from a Store through the in-memory Catalog; which
 * store and which runtimes is the composition root's choice (supervisor/compose.ts).
 */
export class Engine {
  readonly limits: Limits;
  readonly catalog: Catalog;
  /** Where uploads wait while they arrive (deploy bundles, written as they come). */
  readonly stagingDir: string;
  readonly logs: LogStore;
  /** Keys, scopes and each account's share: asked by calls and by the management API. */
  readonly admission: Admission;
  /** Per-function counters (calls in flight, and what the metrics observer counts). */
  readonly functionStats = new FunctionStatsTable((account, name) => this.catalog.function(account, name) !== undefined);
  readonly store: Store;
  readonly egress: Egress;
  /** Threads for functions' host work (crypto, compression), shared fairly between accounts. */
  readonly hostWork: HostWorkPool;
  readonly pool: WarmPool;
  readonly keyUses: KeyUseRecorder;
  private readonly heldRefusals: HeldRefusals;
  /** The WebSocket connections each account holds in this process. */
  readonly connections: AccountConnections;
  /** Each account's share of the log text the server takes per second. */
  private readonly logBudget: LogBudget;
  /** Versions, traffic and keys (the management API's operations besides deploy and remove). */
  readonly manage: Management;
  /** Asynchronous invocations and schedules: what runs without a caller waiting. */
  readonly background: Background;
  readonly history: History | undefined;
  private readonly observer: CallObserver;
  private readonly logReader: LogReader;
  private readonly runtimes = new Map<RuntimeName, Runtime>();
  /** Every runtime name served, aliases included (`/healthz`). */
  private readonly runtimeNames: string[] = [];
  private readonly selfPorts: number[] = [];
  /** Cold starts in progress, by the call that started each (see servicesFor). */
  private readonly loadingFor = new Map<string, { requestId: string | undefined }>();

  private constructor(options: EngineOptions) {
    this.limits = { ...DEFAULT_LIMITS, ...options.limits };
    this.stagingDir = options.stagingDir ?? path.join(tmpdir(), 'islet-staging');
    this.store = options.store;
    this.logs = options.logs;
    this.logReader = options.logReader ?? options.logs;
    const metrics = options.metrics ?? true;
    this.observer = metrics ? observers(logObserver(options.logs), metricsObserver()) : logObserver(options.logs);
    this.history = metrics ? new History(this.functionStats) : undefined;
    this.pool = new WarmPool(this.limits.maxWarmInstances, this.limits.maxWarmMemoryMb, {
      maxPerVersion: this.limits.maxInstancesPerVersion,
      idleMs: this.limits.instanceIdleMs,
    });
    this.catalog = new Catalog(
      this.store,
      (retired) => this.pool.retire(retired),
      (accountId) => this.admission?.accountChanged(accountId),
    );
    this.admission = new Admission(this.catalog, this.limits);
    // Each process holds its share of every account's log quota, as of its calls.
    this.logs.limitAccounts((account) => Math.floor((this.catalog.account(account)?.limits?.maxLogBytes ?? this.limits.accountMaxLogBytes) * this.limits.accountShare));
    this.keyUses = new KeyUseRecorder(this.catalog, this.store);
    this.heldRefusals = new HeldRefusals(this.limits.refusalHoldMs, this.limits.accountMaxInFlight);
    this.connections = new AccountConnections(Math.max(1, Math.floor(this.limits.webSockets.connectionsPerAccount * this.limits.accountShare)));
    this.logBudget = new LogBudget(this.limits.accountLogCharsPerSec, 4 * this.limits.accountLogCharsPerSec);
    this.manage = new Management(this.store, this.catalog, this.keyUses);
    this.background = new Background(this.store.jobs, this.catalog, this.admission, this.limits, (request, trigger) => this.runQueued(request, trigger));
    this.egress = new Egress({
      allowPrivate: options.allowPrivateEgress ?? false,
      selfPorts: () => this.selfPorts,
      maxResponseBytes: this.limits.responseBodyBytes,
      timeoutMs: this.limits.maxTimeoutMs,
      accountBytesPerSec: this.limits.accountEgressBytesPerSec,
    });
    this.hostWork = new HostWorkPool({ threads: this.limits.hostWorkThreads });
    const context: RuntimeContext = {
      limits: this.limits,
      onInstanceDeath: (instance) => this.pool.forget(instance),
      onInstanceSized: (instance) => this.pool.resize(instance),
    };
    for (const registration of options.runtimes) {
      const runtime = registration.create(context);
      this.runtimeNames.push(...registration.names);
      for (const name of registration.names) this.runtimes.set(name, runtime);
    }
  }

  static async open(options: EngineOptions): Promise<Engine> {
    checkNodeFlags();
    enableIsolateFeatures();
    const engine = new Engine(options);
    await engine.catalog.open();
    engine.keyUses.start();
    engine.history?.start();
    engine.background.start();
    return engine;
  }

  /** Tells the engine which port it serves on, so functions may call the service itself. */
  addSelfPort(port: number): void {
    this.selfPorts.push(port);
  }

  createAccount(): Promise<NewAccount> {
    return this.store.createAccount();
  }

  /**
   * Validates and stores a new version, and serves it (to `percent` of the calls when given). On any
   * error the previous version keeps serving.
   */
  async deploy(accountId: string, specInput: unknown, source: BundleSource, request: DeployRequest = {}): Promise<FunctionManifest> {
    if (!this.catalog.hasAccount(accountId)) throw new ServiceError('ERR_NOT_FOUND', `no account ${accountId}`);
    const spec = validateSpec(specInput, this.limits);
    const percent = request.percent === undefined ? undefined : checkPercent(request.percent);
    if (request.message !== undefined && (typeof request.message !== 'string' || request.message.length > 1000)) {
      throw new ServiceError('ERR_BAD_REQUEST', 'message must be a string of at most 1,000 characters');
    }
    const runtime = this.runtimeFor(spec.runtime);
    const own = this.catalog.account(accountId)?.limits ?? {};
    const quota: DeployQuota = { maxFunctions: own.maxFunctions ?? this.limits.accountMaxFunctions, maxCodeBytes: own.maxCodeBytes ?? this.limits.accountMaxCodeBytes };
    // One function too many is refused before its bundle is unpacked; the store checks again, under the account's lock.
    const functions = this.catalog.list(accountId).length;
    if (!this.catalog.function(accountId, spec.name) && functions >= quota.maxFunctions) throw functionsExceeded(accountId, functions, quota.maxFunctions);
    // What the check learns is kept in the manifest it checked, which the store then writes.
    const check = async (candidate: FunctionManifest, codeDir: string) => {
      candidate.style = (await runtime.validate(candidate, codeDir, this.servicesFor(candidate))).style;
    };
    return this.store.deploy(accountId, spec, source, check, {
      message: request.message || undefined,
      percent,
      quota,
      keepVersions: own.keepVersions === undefined ? undefined : Math.max(1, Math.floor(own.keepVersions)),
    });
  }

  async remove(accountId: string, name: string): Promise<FunctionManifest | undefined> {
    const removed = await this.store.remove(accountId, name);
    if (removed) await this.logs.remove(accountId, name);
    return removed;
  }

  /** The account's functions: each the version serving most calls, with the split. */
  list(accountId: string): FunctionDescription[] {
    return this.catalog.list(accountId).map((entry) => describeFunction(entry.primary, entry.record.traffic));
  }

  /** A function's logs, from every node that serves it. */
  readLogs(accountId: string, name: string, query: LogQuery, apiKey?: string): Promise<LogEntry[]> {
    return this.logReader.read(accountId, name, query, apiKey);
  }

  /** Whether other nodes keep logs too (several nodes on PostgreSQL): live views follow this node's files and ask the others. */
  get logsOnOtherNodes(): boolean {
    return this.logReader.readOthers !== undefined;
  }

  /** A function's logs written by the other nodes (none with one node). */
  readOtherNodesLogs(accountId: string, name: string, query: LogQuery, apiKey?: string): Promise<LogEntry[]> {
    return this.logReader.readOthers?.(accountId, name, query, apiKey) ?? Promise.resolve([]);
  }

  /** The version serving most calls of a function. */
  describe(accountId: string, name: string): FunctionManifest | undefined {
    return this.catalog.serving(accountId, name);
  }

  stats(): EngineStats {
    return {
      ...this.pool.stats(),
      store: this.store.health(),
      runtimes: this.runtimeNames,
      accounts: this.catalog.accountCount,
      functions: this.catalog.size,
      catastrophicOutOfMemory: catastrophes.count,
    };
  }

  /** The invocation contract of SPEC §2: auth order, lookup, limits, the handler, error shapes. */
  /**
   * `dispatch` for callers that take an answer whole (sdk.invoke, tests): a streamed body is read to
   * its end, up to the response body limit (past it, or when the stream fails, the answer is the
   * error).
   */
  invoke(request: InvokeRequest): Promise<WholeResponse> {
    return new Promise<InvokeResponse>((resolve) => this.dispatch(request, resolve)).then(async (res) => {
      if (!isBodyStream(res.body)) return res as WholeResponse;
      try {
        return { ...res, body: await readWhole(res.body, this.limits.responseBodyBytes) };
      } catch (err) {
        return errorResponse(err, res.requestId, res.durationUs, res.version);
      }
    });
  }

  /**
   * `invoke` for the HTTP server's hot path: `respond` is called exactly once, never with a throw.
   * Admission in SPEC §2's order: the key, the function (and the version this call runs), the
   * body's size, the function's calls in flight, the account's WebSocket connections (an
   * upgrade), the account's share.
   */
  dispatch(request: InvokeRequest, respond: (response: InvokeResponse) => void): void {
    this.admit(request, respond, undefined);
  }

  /**
   * A run the server starts itself: an attempt of an asynchronous invocation (its key was checked
   * when it was accepted) or a schedule's tick (which has none). Admitted as a call is, but for the
   * key; its call line in the logs names the trigger (`label`). `respond` also gets the error of a
   * run that failed or was refused.
   */
  dispatchQueued(request: InvokeRequest, trigger: RunTrigger, respond: (response: InvokeResponse, error?: ServiceError) => void): void {
    this.admit(request, respond, trigger);
  }

  /** `dispatchQueued` with its answer whole, as `invoke` reads it: a run's result is kept as text. */
  private runQueued(request: InvokeRequest, trigger: RunTrigger): Promise<RunOutcome> {
    return new Promise<{ response: InvokeResponse; error?: ServiceError }>((resolve) => this.dispatchQueued(request, trigger, (response, error) => resolve({ response, error }))).then(async ({ response, error }) => {
      if (!isBodyStream(response.body)) return { ...(response as WholeResponse), error };
      try {
        return { ...response, body: await readWhole(response.body, this.limits.responseBodyBytes), error };
      } catch (err) {
        return { ...errorResponse(err, response.requestId, response.durationUs, response.version), error: err instanceof ServiceError ? err : new ServiceError('ERR_INTERNAL', String(err)) };
      }
    });
  }

  private admit(request: InvokeRequest, respond: (response: InvokeResponse, error?: ServiceError) => void, trigger: RunTrigger | undefined): void {
    const requestId = request.requestId ?? newRequestId();
    const { accountId, functionName } = request;
    let manifest: FunctionManifest;
    let stats: FunctionStats;
    let caller: ApiKeyRecord | undefined;
    try {
      // A path that names no function is a mistake in the URL, whatever the key.
      if (functionName === '') throw new ServiceError('ERR_NO_SUCH_FUNCTION', `the path names no function: call /v2/run/${accountId || '<account>'}/<function>`);
      // A queued run's key was checked when it was accepted, and is not kept: it carries no caller.
      if (trigger === undefined) caller = isPublicName(functionName) ? this.admission.callerOf(accountId, request.apiKey) : this.admission.checkCallKey(accountId, request.apiKey, functionName);
      const entry = isFunctionName(functionName) ? this.catalog.function(accountId, functionName) : undefined;
      if (!entry) throw new ServiceError('ERR_NO_SUCH_FUNCTION', `no function ${functionName} in account ${accountId}`);
      // The sticky key is looked up only when two versions share the calls.
      manifest = entry.second === undefined ? entry.first : this.catalog.pick(entry, request.headers['x-service-version-key']);
      stats = this.functionStats.of(manifest);
    } catch (err) {
      respond(errorResponse(err, requestId, 0), err instanceof ServiceError ? err : undefined);
      return;
    }
    let gate: Gate;
    let connection: (() => void) | undefined;
    try {
      const { body } = request;
      if (isRequestBody(body)) {
        if (body.declaredBytes !== undefined && body.declaredBytes > this.limits.streamedRequestBodyBytes) throw streamedBodyTooLarge(this.limits.streamedRequestBodyBytes, body.declaredBytes);
      } else if (body.length > this.limits.requestBodyBytes) throw wholeBodyTooLarge(this.limits.requestBodyBytes, body.length);
      if (stats.inflight >= this.limits.maxInFlightPerFunction) {
        throw new ServiceError('ERR_OVERLOADED', `function ${manifest.name} already has ${stats.inflight} calls in flight (limit ${this.limits.maxInFlightPerFunction})`);
      }
      if (request.upgrade) connection = this.connections.take(accountId);
      gate = this.admission.enter(accountId);
    } catch (err) {
      connection?.();
      if (err instanceof ServiceError) this.observer.callRefused(stats, err);
      const refusal = errorResponse(err, requestId, 0, manifest.version);
      const error = err instanceof ServiceError ? err : undefined;
      if (trigger === undefined && error?.code === 'ERR_RATE_LIMITED') this.heldRefusals.hold(accountId, () => respond(refusal));
      else respond(refusal, error);
      return;
    }
    tellCaller(request.headers, caller);
    if (connection) {
      // The connection is the account's while the WebSocket lives, or until an answer without one.
      const release = connection;
      const answer = respond;
      respond = (response) => {
        if (response.webSocket) response.webSocket.onEnd(release);
        else release();
        answer(response);
      };
    }
    this.run(manifest, stats, gate, request, requestId, respond, trigger);
  }

  /**
   * Writes the pending logs and key uses and lets go of the spare isolates, while calls are still
   * served: a draining server runs it before `close`, so that a call arriving on a kept-alive
   * connection meanwhile is answered rather than cut off by the exit.
   */
  async quiesce(): Promise<void> {
    this.history?.stop();
    await this.background.stop(5_000);
    await Promise.all([...new Set(this.runtimes.values())].map((runtime) => runtime.close?.()));
    await this.keyUses.flush();
    await this.logs.flush();
  }

  /** Stops every instance and runtime and writes the pending logs and key uses; the store stays open (its owner closes it). */
  async close(): Promise<void> {
    this.heldRefusals.release(true);
    await this.quiesce();
    this.pool.clear();
    await this.keyUses.stop();
    await this.logs.flush();
    await this.egress.close();
    await this.hostWork.close();
  }

  private run(manifest: FunctionManifest, stats: FunctionStats, gate: Gate, request: InvokeRequest, requestId: string, respond: (response: InvokeResponse, error?: ServiceError) => void, trigger: RunTrigger | undefined): void {
    stats.inflight++;
    const input: CallInput = {
      requestId,
      method: request.method,
      path: request.path,
      rawQuery: request.rawQuery,
      headers: request.headers,
      body: request.body,
    };
    if (trigger?.scheduled) input.scheduled = trigger.scheduled;
    const logged = trigger === undefined ? request.method : trigger.label;
    let started = 0;
    /** When the call began waiting for a cold start (0: it found a warm instance). */
    let waitingSince = 0;
    const done = (outcome: CallOutcome) => {
      // A body over its limit makes the call's answer the 413, whatever the function made of the failed read (unless its answer streams already).
      const refusal = isRequestBody(request.body) ? request.body.refusal : undefined;
      if (refusal && !(outcome.ok && isBodyStream(outcome.response.body))) outcome = { ok: false, error: refusal };
      if (outcome.ok && outcome.response.webSocket && !request.upgrade) {
        outcome.response.webSocket.abandon('the request was not a WebSocket upgrade');
        outcome = { ok: false, error: new ServiceError('ERR_BAD_RESPONSE', 'the function answered with a WebSocket to a request that is not a WebSocket upgrade (ws://…, Upgrade: websocket)') };
      }
      const now = performance.now();
      const durationUs = started === 0 ? 0 : (now - started) * 1000;
      const waitedUs = waitingSince === 0 ? durationUs : (now - waitingSince) * 1000;
      if (outcome.ok && isBodyStream(outcome.response.body)) {
        // Answered now, over when its stream ends: counted, logged and measured then.
        const { status, headers } = outcome.response;
        const begun = started === 0 ? now : started;
        const body = watchStream(outcome.response.body, begun, (end) => {
          stats.inflight--;
          gate.inflight--;
          const totalUs = (performance.now() - (waitingSince === 0 ? begun : waitingSince)) * 1000;
          this.observer.callEnded(stats, manifest, requestId, logged, end.error?.status ?? status, end.error, (performance.now() - begun) * 1000, totalUs);
        });
        respond({ status, headers, body, requestId, durationUs, version: manifest.version });
        return;
      }
      stats.inflight--;
      gate.inflight--;
      if (waitingSince !== 0) this.loaded(requestId);
      if (outcome.ok) {
        const { status, headers, body, webSocket } = outcome.response;
        this.observer.callEnded(stats, manifest, requestId, logged, status, undefined, durationUs, waitedUs);
        respond({ status, headers, body, requestId, durationUs, version: manifest.version, webSocket });
        return;
      }
      // The function's own logs get what its caller gets: never a host path or host error text.
      const error = clientError(outcome.error, requestId);
      this.observer.callEnded(stats, manifest, requestId, logged, error.status, error, durationUs, waitedUs);
      respond(errorResponse(error, requestId, durationUs, manifest.version), error);
    };
    const start = (instance: Instance) => {
      started = performance.now();
      instance.call(input, done);
    };
    const acquire = () => {
      let acquired: Instance | Promise<Instance>;
      try {
        acquired = this.instanceFor(manifest, stats, requestId);
      } catch (err) {
        done({ ok: false, error: clientError(err, requestId) });
        return;
      }
      if (acquired instanceof Promise) {
        waitingSince = performance.now();
        acquired.then(start, (err: unknown) => done({ ok: false, error: clientError(err, requestId) }));
      } else start(acquired);
    };
    const body = input.body;
    if (isRequestBody(body) && this.runtimes.get(manifest.runtime)?.readsBodyStreams !== true) {
      // Python takes its body whole: read before an instance is asked for (the upload is not the handler's time).
      body.whole(this.limits.requestBodyBytes).then(
        (whole) => {
          input.body = whole;
          acquire();
        },
        (err: unknown) => done({ ok: false, error: clientError(err, requestId) }),
      );
      return;
    }
    acquire();
  }

  private instanceFor(manifest: FunctionManifest, stats: FunctionStats, requestId: string): Instance | Promise<Instance> {
    const runtime = this.runtimeFor(manifest.runtime);
    // The warm cache calls the factory again to scale the version out, for no call.
    let starter: string | undefined = requestId;
    return this.pool.acquire(
      manifest,
      () => {
        stats.coldStarts++;
        const attribution = starter === undefined ? undefined : { requestId: starter as string | undefined };
        if (starter !== undefined) this.loadingFor.set(starter, attribution!);
        starter = undefined;
        return this.store.codeDir(manifest).then((codeDir) => runtime.createInstance(manifest, codeDir, this.servicesFor(manifest, attribution)));
      },
      () => this.catalog.isServing(manifest),
    );
  }

  private runtimeFor(name: RuntimeName): Runtime {
    const runtime = this.runtimes.get(name);
    if (!runtime) throw new ServiceError('ERR_INVALID_FUNCTION', `the ${name} runtime is not available on this server`, { key: 'runtime' });
    return runtime;
  }

  /** The call whose cold start loads an instance ended: lines of no request are that instance's own again. */
  private loaded(requestId: string): void {
    const attribution = this.loadingFor.get(requestId);
    if (attribution === undefined) return;
    attribution.requestId = undefined;
    this.loadingFor.delete(requestId);
  }

  /**
   * The capabilities a function's sandbox gets: its logs, guarded fetch, and sdk.invoke. Lines
   * written while the instance loads for a call's cold start (module code, Python's import-time
   * warnings) belong to no request in the sandbox: `attribution` gives them that call's id.
   */
  private servicesFor(manifest: FunctionManifest, attribution?: { requestId: string | undefined }): InstanceServices {
    const logKey = `${manifest.account}/${manifest.name}`;
    const timeoutMs = manifest.timeoutMs ?? this.limits.timeoutMs;
    return {
      hostWork: (task) => this.hostWork.run(manifest.account, task, timeoutMs),
      log: (requestId, level, message) => {
        const id = requestId === '' && attribution?.requestId !== undefined ? attribution.requestId : requestId;
        // Colour codes (Hono's logger(), chalk) read as escapes in `islet logs` and boxes in the console: kept out of the logs.
        const text = message.includes('\x1b') || message.includes('\x9b') ? stripVTControlCharacters(message) : message;
        if (this.logBudget.take(manifest.account, text.length)) this.logs.appendLine(logKey, JSON.stringify({ t: Date.now(), requestId: id, level, message: text }));
        else this.logs.countDropped(logKey);
      },
      fetch: (request, body, budget, bodies) => this.egress.fetch(request, body, budget, manifest.account, bodies),
      // sdk.invoke (engine/capabilities/invoke): a POST of the body as JSON.
      invoke: async (call) => {
        const res = await this.invoke({
          accountId: call.accountId,
          functionName: call.functionName,
          apiKey: call.apiKey || undefined,
          method: 'POST',
          path: '/',
          rawQuery: '',
          headers: { 'content-type': 'application/json' },
          body: Buffer.from(call.body, 'utf8'),
        });
        const headers: Record<string, string> = {};
        // A Set-Cookie sent several times reads as fetch's Headers.get gives it: its values joined with `, `.
        for (const [name, value] of Object.entries(responseHeaders(res))) headers[name.toLowerCase()] = value.includes(HEADER_LINES) ? value.split(HEADER_LINES).join(', ') : value;
        const body = typeof res.body === 'string' ? res.body : Buffer.from(res.body).toString('utf8');
        return { statusCode: res.status, headers, body };
      },
    };
  }
}

/** The request headers that name the caller's key to the function (set by the server alone). */
export const CALLER_KEY_NAME = 'x-service-key-name';
export const CALLER_KEY_SCOPE = 'x-service-key-scope';

/**
 * What a function sees of who called it: never the key itself (header-logging middleware would
 * write it where others read it), but its name and scope, when the call came with a valid key of
 * the account. A caller's own headers of those names are dropped, so the function can trust them.
 */
function tellCaller(headers: Record<string, string>, caller: ApiKeyRecord | undefined): void {
  if (headers['x-service-api-key'] !== undefined) delete headers['x-service-api-key'];
  if (headers[CALLER_KEY_NAME] !== undefined) delete headers[CALLER_KEY_NAME];
  if (headers[CALLER_KEY_SCOPE] !== undefined) delete headers[CALLER_KEY_SCOPE];
  if (caller === undefined) return;
  headers[CALLER_KEY_NAME] = caller.name;
  headers[CALLER_KEY_SCOPE] = caller.scope;
}
