import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { HeldRefusals } from './held-refusals';
import { Deployer } from './deploy';
import { SandboxServices } from './sandbox-services';
import type { DeployRequest, EngineOptions, EngineStats, InvokeRequest, RunTrigger, RuntimeContext, WholeResponse } from './engine-types';
import { HostWorkPool } from './host-work/pool';
import { Admission, KeyUseRecorder } from './admission';
import type { FunctionFigures, LogFollowing, ManagementApi, OtherNodesFollowing, ProcessCounters } from './api';
import { LogFollower } from './log-follow';
import { OtherNodesFollower } from './log-follow-nodes';
import { ServiceError } from './errors';
import { Egress } from './capabilities/fetch/egress';
import { AccountConnections } from './capabilities/websockets/accounts';
import { DEFAULT_LIMITS, type Limits } from './limits';
import type { LogEntry, LogQuery, LogReader, LogStore } from './logs';
import { describeFunction, type FunctionDescription, type FunctionManifest, type RuntimeName } from './manifest';
import { Management } from './manage';
import { channelObserver } from './events';
import { logObserver, metricsObserver, observers, type CallObserver } from './observer';
import { WarmPool } from './pool';
import type { Instance, Runtime } from './runtime';
import type { BundleSource } from './bundle';
import { FunctionStatsTable } from './stats/function-stats';
import { History } from './stats/history';
import { Catalog } from './store/catalog';
import { Background, type ScheduleView } from './jobs/background';
import type { RunOutcome } from './jobs/runner';
import type { ApiKeyRecord, FunctionRecord, KeyScope, NewAccount, NewKey, Store, TrafficShare, VersionList } from './store/store';
import type { KeyDescription } from './wire';
import type { InvocationView } from './jobs/records';

/**
 * The engine's parts, built from its options (catalog, admission, warm pool, logs, egress, host
 * work, background jobs, runtimes), and the management API's operations on them, each handed to
 * where it lives. Engine (engine.ts) adds the call path and the lifecycle.
 */
export abstract class EngineParts implements ManagementApi {
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
  protected readonly heldRefusals: HeldRefusals;
  /** The WebSocket connections each account holds in this process. */
  readonly connections: AccountConnections;
  /** What each instance's sandbox reaches: logs, fetch, sockets, host work, sdk.invoke. */
  protected readonly sandboxServices: SandboxServices;
  private readonly deployer: Deployer;
  /** Versions, traffic and keys (the management API's operations besides deploy and remove). */
  readonly manage: Management;
  /** Asynchronous invocations and schedules: what runs without a caller waiting. */
  readonly background: Background;
  readonly history: History | undefined;
  protected readonly observer: CallObserver;
  /** Isolates whose thread V8 parked after a fatal out-of-memory (see notes in README). */
  private catastrophicOutOfMemory = 0;
  private readonly logReader: LogReader;
  protected readonly runtimes = new Map<RuntimeName, Runtime>();
  /** Every runtime name served, aliases included (`/healthz`). */
  private readonly runtimeNames: string[] = [];
  protected readonly selfPorts: number[] = [];

  protected constructor(options: EngineOptions) {
    this.limits = { ...DEFAULT_LIMITS, ...options.limits };
    this.stagingDir = options.stagingDir ?? path.join(tmpdir(), 'islet-staging');
    this.store = options.store;
    this.logs = options.logs;
    this.logReader = options.logReader ?? options.logs;
    const metrics = options.metrics ?? true;
    this.observer = metrics ? observers(logObserver(options.logs), metricsObserver(), channelObserver()) : observers(logObserver(options.logs), channelObserver());
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
    this.sandboxServices = new SandboxServices(this);
    this.deployer = new Deployer({
      limits: this.limits,
      catalog: this.catalog,
      store: this.store,
      runtimeFor: (name) => this.runtimeFor(name),
      servicesFor: (manifest) => this.sandboxServices.of(manifest),
      adopt: (manifest, instance) => this.adoptChecked(manifest, instance),
    });
    const context: RuntimeContext = {
      limits: this.limits,
      onInstanceDeath: (instance, catastrophic) => {
        if (catastrophic) this.catastrophicOutOfMemory++;
        this.pool.forget(instance);
      },
      onInstanceSized: (instance) => this.pool.resize(instance),
    };
    for (const registration of options.runtimes) {
      const runtime = registration.create(context);
      this.runtimeNames.push(...registration.names);
      for (const name of registration.names) this.runtimes.set(name, runtime);
    }
  }

  /** A run the server starts itself (an asynchronous invocation's attempt, a schedule's tick), its answer whole. */
  protected abstract runQueued(request: InvokeRequest, trigger: RunTrigger): Promise<RunOutcome>;
  protected abstract adoptChecked(manifest: FunctionManifest, instance: Instance): Promise<void>;
  /** The invocation contract with its answer whole (what sdk.invoke calls). */
  abstract invoke(request: InvokeRequest): Promise<WholeResponse>;

  createAccount(): Promise<NewAccount> {
    return this.store.createAccount();
  }

  /**
   * Validates and stores a new version, and serves it (to `percent` of the calls when given). On any
   * error the previous version keeps serving.
   */
  deploy(accountId: string, specInput: unknown, source: BundleSource, request: DeployRequest = {}): Promise<FunctionManifest> {
    return this.deployer.deploy(accountId, specInput, source, request);
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
  get otherNodesKeepLogs(): boolean {
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

  existing(accountId: string, name: string): FunctionDescription {
    const entry = this.catalog.function(accountId, name);
    if (!entry) throw new ServiceError('ERR_NO_SUCH_FUNCTION', `no function ${name} in account ${accountId}`);
    return describeFunction(entry.primary, entry.record.traffic);
  }

  traffic(accountId: string, name: string): TrafficShare[] | undefined {
    return this.catalog.function(accountId, name)?.record.traffic;
  }

  // The management API's operations (engine/api.ts), each where it lives.
  authorize(accountId: string, apiKey: string | undefined, scope: KeyScope): ApiKeyRecord {
    return this.admission.authorize(accountId, apiKey, scope);
  }
  identify(apiKey: string | undefined): { accountId: string; key: ApiKeyRecord } {
    return this.admission.identify(apiKey);
  }
  versions(account: string, name: string): Promise<VersionList> {
    return this.manage.versions(account, name);
  }
  rollback(account: string, name: string, to?: unknown): Promise<FunctionRecord> {
    return this.manage.rollback(account, name, to);
  }
  setTraffic(account: string, name: string, traffic: unknown): Promise<FunctionRecord> {
    return this.manage.setTraffic(account, name, traffic);
  }
  promote(account: string, name: string): Promise<FunctionRecord> {
    return this.manage.promote(account, name);
  }
  keys(accountId: string, all?: boolean): Promise<KeyDescription[]> {
    return this.manage.keys(accountId, all);
  }
  createKey(accountId: string, options: { name?: unknown; scope?: unknown }): Promise<NewKey> {
    return this.manage.createKey(accountId, options);
  }
  revokeKey(accountId: string, name: string): Promise<ApiKeyRecord> {
    return this.manage.revokeKey(accountId, name);
  }
  readLocalLogs(accountId: string, name: string, query: LogQuery): Promise<LogEntry[]> {
    return this.logs.read(accountId, name, query);
  }
  logFiles(accountId: string, name: string): Promise<string[]> {
    return this.logs.filesOf(accountId, name);
  }
  followLogs(accountId: string, name: string, apiKey: string | undefined): { own: LogFollowing; others: OtherNodesFollowing | undefined } {
    const own = new LogFollower(() => this.logFiles(accountId, name));
    const others = this.otherNodesKeepLogs ? new OtherNodesFollower((since, limit) => this.readOtherNodesLogs(accountId, name, { since, limit }, apiKey)) : undefined;
    return { own, others };
  }
  readInvocation(accountId: string, id: string): Promise<InvocationView> {
    return this.background.read(accountId, id);
  }
  listInvocations(accountId: string, name: string, limit: number): Promise<InvocationView[]> {
    return this.background.list(accountId, name, limit);
  }
  schedules(accountId: string, name?: string): Promise<ScheduleView[]> {
    return this.background.schedules(accountId, name);
  }

  get countsMetrics(): boolean {
    return this.history !== undefined;
  }

  recentFigures(accountId: string, name: string, windowSec: number): FunctionFigures | undefined {
    if (!this.history) return undefined;
    const stats = this.functionStats.get(accountId, name);
    const warm = this.pool.warmByFunction().get(`${accountId}/${name}`);
    return { window: this.history.window(stats, windowSec), inFlight: stats?.inflight ?? 0, coldStarts: stats?.coldStarts ?? 0, warmInstances: warm?.instances ?? 0, warmMb: warm?.mb ?? 0 };
  }

  warmByFunction(): Map<string, { instances: number; mb: number }> {
    return this.pool.warmByFunction();
  }

  counters(): ProcessCounters {
    this.functionStats.prune();
    const catalog = this.catalog;
    return {
      functions: this.functionStats.all(),
      splits: (function* () {
        for (const entry of catalog.allFunctions()) yield entry.record;
      })(),
      egress: this.egress.counts,
      droppedLogLines: this.logs.droppedLines,
    };
  }

  stats(): EngineStats {
    return {
      ...this.pool.stats(),
      store: this.store.health(),
      runtimes: this.runtimeNames,
      accounts: this.catalog.accountCount,
      functions: this.catalog.size,
      catastrophicOutOfMemory: this.catastrophicOutOfMemory,
    };
  }

  protected runtimeFor(name: RuntimeName): Runtime {
    const runtime = this.runtimes.get(name);
    if (!runtime) throw new ServiceError('ERR_INVALID_FUNCTION', `the ${name} runtime is not available on this server`, { key: 'runtime' });
    return runtime;
  }
}
