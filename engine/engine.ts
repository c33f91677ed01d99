import { checkNodeFlags } from './node-flags';
import { ServiceError } from './errors';
import { Egress } from './egress';
import { DEFAULT_LIMITS, type Limits } from './limits';
import type { LogEntry, LogQuery, LogReader, LogStore } from './logs';
import { isFunctionName, isPublicName, keyPerManifest, validateSpec, type FunctionManifest, type RuntimeName } from './manifest';
import { catastrophes } from './isolate/instance';
import { WarmPool, type PoolStats } from './pool';
import { newRequestId } from './request-id';
import type { CallInput, CallOutcome, Instance, InstanceServices, Runtime } from './runtime';
import type { BundleSource } from './bundle';
import { Catalog } from './store/catalog';
import type { NewAccount, Store, StoreHealth } from './store/store';

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
  body: Buffer;
  requestId?: string;
}

export interface InvokeResponse {
  status: number;
  headers: Record<string, string>;
  body: string | Uint8Array;
  requestId: string;
  /** Microseconds spent in the handler. */
  durationUs: number;
}

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
  readonly logs: LogStore;
  private readonly logReader: LogReader;
  private readonly store: Store;
  private readonly pool: WarmPool;
  private readonly runtimes = new Map<RuntimeName, Runtime>();
  /** The first name of each runtime (`/healthz`). */
  private readonly runtimeNames: string[] = [];
  /** Calls in flight per function (`account/name`). */
  private readonly inflight = new Map<string, number>();
  private readonly egress: Egress;
  private readonly selfPorts: number[] = [];

  private constructor(options: EngineOptions) {
    this.limits = { ...DEFAULT_LIMITS, ...options.limits };
    this.store = options.store;
    this.logs = options.logs;
    this.logReader = options.logReader ?? options.logs;
    this.pool = new WarmPool(this.limits.maxWarmInstances, this.limits.maxWarmMemoryMb, {
      maxPerVersion: this.limits.maxInstancesPerVersion,
      idleMs: this.limits.instanceIdleMs,
    });
    this.catalog = new Catalog(this.store, (retired) => this.pool.retire(retired));
    this.egress = new Egress({
      allowPrivate: options.allowPrivateEgress ?? false,
      selfPorts: () => this.selfPorts,
      maxResponseBytes: this.limits.responseBodyBytes,
      timeoutMs: this.limits.maxTimeoutMs,
    });
    const context: RuntimeContext = {
      limits: this.limits,
      onInstanceDeath: (instance) => this.pool.forget(instance),
      onInstanceSized: (instance) => this.pool.resize(instance),
    };
    for (const registration of options.runtimes) {
      const runtime = registration.create(context);
      this.runtimeNames.push(registration.names[0]!);
      for (const name of registration.names) this.runtimes.set(name, runtime);
    }
  }

  static async open(options: EngineOptions): Promise<Engine> {
    checkNodeFlags();
    const engine = new Engine(options);
    await engine.catalog.open();
    return engine;
  }

  /** Tells the engine which port it serves on, so functions may call the service itself. */
  addSelfPort(port: number): void {
    this.selfPorts.push(port);
  }

  createAccount(): Promise<NewAccount> {
    return this.store.createAccount();
  }

  /** Validates, stores and switches to a new version. On any error the previous version keeps serving. */
  async deploy(accountId: string, specInput: unknown, source: BundleSource): Promise<FunctionManifest> {
    if (!this.catalog.hasAccount(accountId)) throw new ServiceError('ERR_NOT_FOUND', `no account ${accountId}`);
    const spec = validateSpec(specInput, this.limits);
    const runtime = this.runtimeFor(spec.runtime);
    return this.store.deploy(accountId, spec, source, (candidate, codeDir) => runtime.validate(candidate, codeDir, this.servicesFor(candidate)));
  }

  async remove(accountId: string, name: string): Promise<FunctionManifest | undefined> {
    const removed = await this.store.remove(accountId, name);
    if (removed) await this.logs.remove(accountId, name);
    return removed;
  }

  /** A function's logs, from every node that serves it. */
  readLogs(accountId: string, name: string, query: LogQuery, apiKey?: string): Promise<LogEntry[]> {
    return this.logReader.read(accountId, name, query, apiKey);
  }

  list(accountId: string): FunctionManifest[] {
    return this.catalog.list(accountId);
  }

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
  invoke(request: InvokeRequest): Promise<InvokeResponse> {
    return new Promise((resolve) => this.dispatch(request, resolve));
  }

  /** `invoke` for the HTTP server's hot path: `respond` is called exactly once, never with a throw. */
  dispatch(request: InvokeRequest, respond: (response: InvokeResponse) => void): void {
    const requestId = request.requestId ?? newRequestId();
    let manifest: FunctionManifest;
    try {
      manifest = this.admit(request);
    } catch (err) {
      respond(errorResponse(err, requestId, 0));
      return;
    }
    this.run(manifest, request, requestId, respond);
  }

  /** Checks a call against SPEC §2 in its order (key, function, size) and returns the function to run. */
  private admit(request: InvokeRequest): FunctionManifest {
    const { accountId, functionName } = request;
    if (!isPublicName(functionName)) {
      if (!request.apiKey) throw new ServiceError('ERR_NO_KEY', `function ${functionName} is secured: send the account API key in the X-Service-Api-Key header`);
      if (!this.catalog.verifyKey(accountId, request.apiKey)) throw new ServiceError('ERR_BAD_KEY', `the API key is not valid for account ${accountId}`);
    }
    const manifest = isFunctionName(functionName) ? this.catalog.serving(accountId, functionName) : undefined;
    if (!manifest) throw new ServiceError('ERR_NO_SUCH_FUNCTION', `no function ${functionName} in account ${accountId}`);
    if (request.body.length > this.limits.requestBodyBytes) {
      throw new ServiceError('ERR_PAYLOAD_TOO_LARGE', `the request body is over the limit of ${this.limits.requestBodyBytes} bytes`);
    }
    const running = this.inflight.get(functionKey(manifest)) ?? 0;
    if (running >= this.limits.maxInFlightPerFunction) {
      throw new ServiceError('ERR_OVERLOADED', `function ${manifest.name} already has ${running} calls in flight (limit ${this.limits.maxInFlightPerFunction})`);
    }
    return manifest;
  }

  /** Stops every instance and runtime and writes the pending logs; the store stays open (its owner closes it). */
  async close(): Promise<void> {
    this.pool.clear();
    await Promise.all([...new Set(this.runtimes.values())].map((runtime) => runtime.close?.()));
    await this.logs.flush();
    await this.egress.close();
  }

  private run(manifest: FunctionManifest, request: InvokeRequest, requestId: string, respond: (response: InvokeResponse) => void): void {
    const key = functionKey(manifest);
    this.inflight.set(key, (this.inflight.get(key) ?? 0) + 1);
    const input: CallInput = {
      requestId,
      method: request.method,
      path: request.path,
      rawQuery: request.rawQuery,
      headers: request.headers,
      body: request.body,
    };
    let started = 0;
    const done = (outcome: CallOutcome) => {
      const durationUs = started === 0 ? 0 : (performance.now() - started) * 1000;
      const left = (this.inflight.get(key) ?? 1) - 1;
      if (left === 0) this.inflight.delete(key);
      else this.inflight.set(key, left);
      const status = outcome.ok ? outcome.response.status : outcome.error.status;
      const message = `${request.method} ${status} ${durationUs.toFixed(3)} us${outcome.ok ? '' : ` ${outcome.error.code}`}`;
      // The call line, written as JSON directly: it is on every call's path.
      this.logs.appendLine(key, `{"t":${Date.now()},"requestId":${JSON.stringify(requestId)},"level":"call","message":${JSON.stringify(message)}}`);
      if (!outcome.ok) respond(errorResponse(outcome.error, requestId, durationUs));
      else respond({ status, headers: outcome.response.headers, body: outcome.response.body, requestId, durationUs });
    };
    const start = (instance: Instance) => {
      started = performance.now();
      instance.call(input, done);
    };
    let acquired: Instance | Promise<Instance>;
    try {
      acquired = this.instanceFor(manifest);
    } catch (err) {
      done({ ok: false, error: asServiceError(err) });
      return;
    }
    if (acquired instanceof Promise) acquired.then(start, (err: unknown) => done({ ok: false, error: asServiceError(err) }));
    else start(acquired);
  }

  private instanceFor(manifest: FunctionManifest): Instance | Promise<Instance> {
    const runtime = this.runtimeFor(manifest.runtime);
    return this.pool.acquire(
      manifest,
      () => this.store.codeDir(manifest).then((codeDir) => runtime.createInstance(manifest, codeDir, this.servicesFor(manifest))),
      () => this.catalog.serving(manifest.account, manifest.name)?.version === manifest.version,
    );
  }

  private runtimeFor(name: RuntimeName): Runtime {
    const runtime = this.runtimes.get(name);
    if (!runtime) throw new ServiceError('ERR_INVALID_FUNCTION', `the ${name} runtime is not available on this server`, { key: 'runtime' });
    return runtime;
  }

  /** The capabilities a function's sandbox gets: its logs, guarded fetch, and sdk.invoke. */
  private servicesFor(manifest: FunctionManifest): InstanceServices {
    const logKey = functionKey(manifest);
    return {
      log: (requestId, level, message) => this.logs.appendLine(logKey, JSON.stringify({ t: Date.now(), requestId, level, message })),
      fetch: (request, body) => this.egress.fetch(request, body),
      invoke: async (payload) => {
        const call = JSON.parse(payload) as { accountId: string; functionName: string; apiKey: string; body: string };
        const res = await this.invoke({
          accountId: String(call.accountId),
          functionName: String(call.functionName),
          apiKey: call.apiKey ? String(call.apiKey) : undefined,
          method: 'POST',
          path: '/',
          rawQuery: '',
          headers: { 'content-type': 'application/json' },
          body: Buffer.from(String(call.body ?? ''), 'utf8'),
        });
        const headers: Record<string, string> = {};
        for (const [name, value] of Object.entries(responseHeaders(res))) headers[name.toLowerCase()] = value;
        const body = typeof res.body === 'string' ? res.body : Buffer.from(res.body).toString('utf8');
        return JSON.stringify({ statusCode: res.status, headers, body });
      },
    };
  }
}

/** All headers of a response as the client receives them, the X-Service-* ones included. */
export function responseHeaders(res: InvokeResponse): Record<string, string> {
  return {
    ...res.headers,
    'X-Service-Request-ID': res.requestId,
    'X-Service-Duration-Usecs': res.durationUs.toFixed(3),
  };
}

/** `account/name`: the key of calls in flight per function. */
const functionKey = keyPerManifest<FunctionManifest>((m) => `${m.account}/${m.name}`);

function asServiceError(err: unknown): ServiceError {
  return err instanceof ServiceError ? err : new ServiceError('ERR_INTERNAL', `internal error: ${(err as Error)?.message ?? String(err)}`);
}

/** The JSON error body of SPEC §2: `{errorCode, message, requestId}` plus details (the user's `stack`; a deploy error's `key`, `file`, `line`). */
export function errorResponse(err: unknown, requestId: string, durationUs: number): InvokeResponse {
  if (!(err instanceof ServiceError)) console.error(`[islet] internal error in request ${requestId}:`, err);
  const error = asServiceError(err);
  const body: Record<string, unknown> = { errorCode: error.code, message: error.message, requestId, ...error.details };
  return { status: error.status, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), requestId, durationUs };
}
