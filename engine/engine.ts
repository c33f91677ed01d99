import { clientError, errorResponse, responseHeaders } from './error-answer';
import { checkNodeFlags, enableIsolateFeatures } from './node-flags';
import { tellCaller } from './caller';
import type { EngineOptions, InvokeRequest, InvokeResponse, RunTrigger, WholeResponse } from './engine-types';
import { EngineParts } from './engine-parts';
import type { Gate } from './admission';
import type { EngineApi } from './api';
import { ServiceError } from './errors';
import { isFunctionName, isPublicName, type FunctionManifest } from './manifest';
import { newRequestId } from './request-id';
import { versionKey } from './pool';
import type { CallInput, CallOutcome, Instance } from './runtime';
import { isBodyStream, readWhole, watchStream } from './body-stream';
import { isRequestBody, streamedBodyTooLarge, wholeBodyTooLarge } from './request-body';
import { wholeOrStream } from './whole-or-stream';
import type { FunctionStats } from './stats/function-stats';
import type { AsyncRequest } from './jobs/background';
import type { RunOutcome } from './jobs/runner';
import type { ApiKeyRecord } from './store/store';

export { clientError, errorResponse, responseHeaders };
export { CALLER_KEY_NAME, CALLER_KEY_SCOPE } from './caller';
export type { DeployRequest, EngineOptions, EngineStats, InvokeRequest, InvokeResponse, RunTrigger, RuntimeContext, RuntimeRegistration, WholeResponse } from './engine-types';

/**
 * The core of islet: accounts, deployed functions, warm instances and the invocation contract
 * (auth order, limits, error shapes). The HTTP server and the in-process sdk both call `invoke`,
 * so both behave the same. What it serves comes from a Store through the in-memory Catalog; which
 * store and which runtimes is the composition root's choice (supervisor/compose.ts). This file is
 * the call path and the engine's lifecycle; its parts and the management API are in engine-parts.ts.
 */
export class Engine extends EngineParts implements EngineApi {
  /** Cold starts in progress, by the call that started each (see servicesFor). */
  private readonly loadingFor = new Map<string, { requestId: string | undefined }>();

  private constructor(options: EngineOptions) {
    super(options);
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

  checkAsync(request: Pick<AsyncRequest, 'accountId' | 'functionName' | 'apiKey'>): void {
    this.background.check(request);
  }
  acceptAsync(request: AsyncRequest): Promise<string> {
    return this.background.accept(request);
  }

  /** The invocation contract of SPEC §2: auth order, lookup, limits, the handler, error shapes. */
  /**
   * `dispatch` for callers that take an answer whole (sdk.invoke, tests): a streamed body is read to
   * its end, up to the response body limit (past it, or when the stream fails, the answer is the
   * error).
   */
  override invoke(request: InvokeRequest): Promise<WholeResponse> {
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
  protected override runQueued(request: InvokeRequest, trigger: RunTrigger): Promise<RunOutcome> {
    return new Promise<{ response: InvokeResponse; error?: ServiceError }>((resolve) => this.dispatchQueued(request, trigger, (response, error) => resolve({ response, error }))).then(
      async ({ response, error }) => {
        if (!isBodyStream(response.body)) return { ...(response as WholeResponse), error };
        try {
          return { ...response, body: await readWhole(response.body, this.limits.responseBodyBytes), error };
        } catch (err) {
          return { ...errorResponse(err, response.requestId, response.durationUs, response.version), error: err instanceof ServiceError ? err : new ServiceError('ERR_INTERNAL', String(err)) };
        }
      },
    );
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
        body.holdUpTo?.((manifest.memoryMb ?? this.limits.memoryMb) * 1024 * 1024);
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

  private run(
    manifest: FunctionManifest,
    stats: FunctionStats,
    gate: Gate,
    request: InvokeRequest,
    requestId: string,
    respond: (response: InvokeResponse, error?: ServiceError) => void,
    trigger: RunTrigger | undefined,
  ): void {
    stats.inflight++;
    const input: CallInput = {
      requestId,
      method: request.method,
      path: request.path,
      rawQuery: request.rawQuery,
      headers: request.headers,
      body: request.body,
      clientGone: request.clientGone,
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
          const ended = performance.now();
          const totalUs = (ended - (waitingSince === 0 ? begun : waitingSince)) * 1000;
          const handlerUs = (ended - begun) * 1000;
          const streamed = { firstByteUs: end.firstByteMs === undefined ? undefined : end.firstByteMs * 1000, endUs: handlerUs };
          this.observer.callEnded(stats, manifest, requestId, logged, end.error?.status ?? status, end.error, handlerUs, totalUs, streamed);
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
    const streams = this.runtimes.get(manifest.runtime)?.readsBodyStreams;
    if (isRequestBody(body) && streams !== true) {
      // Python takes its body whole, read before an instance is asked for (the upload is not the
      // handler's time), or as a stream past the limit of a body read whole.
      const limit = this.limits.requestBodyBytes;
      (streams === 'past-whole-limit' ? wholeOrStream(body, limit) : body.whole(limit)).then(
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
    // The warm cache calls the factory again to scale the version out, for no call.
    let starter: string | undefined = requestId;
    return this.pool.acquire(
      manifest,
      () => {
        const attribution = starter === undefined ? undefined : { requestId: starter as string | undefined };
        if (starter !== undefined) this.loadingFor.set(starter, attribution!);
        starter = undefined;
        return this.coldStart(manifest, stats, attribution);
      },
      () => this.catalog.isServing(manifest),
    );
  }

  /** A new instance of the version; its module code's lines are the starting call's while `attribution` names one. */
  private coldStart(manifest: FunctionManifest, stats: FunctionStats, attribution?: { requestId: string | undefined }): Promise<Instance> {
    stats.coldStarts++;
    const runtime = this.runtimeFor(manifest.runtime);
    return this.store.codeDir(manifest).then((codeDir) => runtime.createInstance(manifest, codeDir, this.sandboxServices.of(manifest, attribution)));
  }

  /**
   * The instance a deploy's check loaded becomes its version's first warm one, once its files are
   * where the store keeps them: the first call after a deploy is not a cold start.
   */
  protected adoptChecked(published: FunctionManifest, instance: Instance): Promise<void> {
    return this.store.codeDir(published).then(
      (codeDir) => {
        // The catalog's own manifest of the version: calls find instances by it.
        const entry = this.catalog.function(published.account, published.name);
        const manifest = [entry?.first, entry?.second].find((m) => m !== undefined && versionKey(m) === versionKey(published));
        if (!manifest) return instance.dispose();
        instance.relocate?.(codeDir);
        const stats = this.functionStats.of(manifest);
        this.pool.adopt(
          manifest,
          instance,
          () => this.coldStart(manifest, stats),
          () => this.catalog.isServing(manifest),
        );
      },
      () => instance.dispose(),
    );
  }

  /** The call whose cold start loads an instance ended: lines of no request are that instance's own again. */
  private loaded(requestId: string): void {
    const attribution = this.loadingFor.get(requestId);
    if (attribution === undefined) return;
    attribution.requestId = undefined;
    this.loadingFor.delete(requestId);
  }
}
