import type { BundleSource } from './bundle';
import type { DeployRequest, EngineStats, InvokeRequest, InvokeResponse, WholeResponse } from './engine';
import type { EgressCounts } from './capabilities/fetch/egress';
import type { AsyncRequest, ScheduleView } from './jobs/background';
import type { InvocationView } from './jobs/records';
import type { Limits } from './limits';
import type { LogEntry, LogQuery } from './logs';
import type { LogFollower } from './log-follow';
import type { OtherNodesFollower } from './log-follow-nodes';
import type { FunctionDescription, FunctionManifest } from './manifest';
import type { FunctionStats } from './stats/function-stats';
import type { RawWindow } from './stats/history';
import type { ApiKeyRecord, FunctionRecord, KeyScope, NewKey, TrafficShare, VersionList } from './store/store';
import type { KeyDescription } from './wire';
import type { FunctionSocket, SocketPeer } from './capabilities/websockets/host';

/** The types http/ names: the engine's own, re-exported here so that http/ imports none of its modules but this one's. */
export type { AsyncRequest, DeployRequest, InvokeRequest, InvokeResponse, WholeResponse, LogEntry, ApiKeyRecord, FunctionRecord, KeyScope, FunctionSocket, SocketPeer };
export type { ClientGone } from './runtime';

/**
 * What http/ may ask of the engine: two narrow interfaces, one for calls and one for management,
 * which Engine implements. http/ holds the engine by these types, never by `Engine`, so it cannot
 * reach the engine's internals (its catalog, store, warm pool, admission…).
 */

/** A call's needs: admission and invocation, synchronous or queued. */
export interface CallApi {
  /** The limits a request is read under (its body's size, WebSocket frames). */
  readonly limits: Readonly<Limits>;
  /** The invocation contract (SPEC §2); `respond` is called exactly once, never with a throw. */
  dispatch(request: InvokeRequest, respond: (response: InvokeResponse) => void): void;
  /** `dispatch` with its answer whole (a streamed body read to its end). */
  invoke(request: InvokeRequest): Promise<WholeResponse>;
  /** The checks an asynchronous call passes before its body is read (keys before bodies). */
  checkAsync(request: Pick<AsyncRequest, 'accountId' | 'functionName' | 'apiKey'>): void;
  /** Stores a call to run later; resolves with its invocation id once it is stored durably. */
  acceptAsync(request: AsyncRequest): Promise<string>;
  /** The port the server listens on, so that functions may call the service itself. */
  addSelfPort(port: number): void;
}

/** One process's part of a function's recent figures (workers add theirs up). */
export interface FunctionFigures {
  window: RawWindow;
  inFlight: number;
  coldStarts: number;
  warmInstances: number;
  warmMb: number;
}

/** What a process counted, as `/metrics` reads it. */
export interface ProcessCounters {
  /** Every called function's counters (removed functions' forgotten first). */
  functions: Iterable<FunctionStats>;
  /** Every function's serving split. */
  splits: Iterable<FunctionRecord>;
  egress: EgressCounts;
  droppedLogLines: number;
}

/** What the management API, the console, `/healthz`, `/metrics` and live logs ask of the engine. */
export interface ManagementApi {
  readonly limits: Readonly<Limits>;
  /** Where uploads wait while they arrive (deploy bundles). */
  readonly stagingDir: string;

  /** An admin's or caller's key of the account, of `scope` (ERR_NO_KEY, ERR_BAD_KEY, ERR_FORBIDDEN). */
  authorize(accountId: string, apiKey: string | undefined, scope: KeyScope): ApiKeyRecord;
  /** Whose key this is (any valid key of any account). */
  identify(apiKey: string | undefined): { accountId: string; key: ApiKeyRecord };

  list(accountId: string): FunctionDescription[];
  /** The version serving most calls of a function. */
  describe(accountId: string, name: string): FunctionManifest | undefined;
  /** A function's description; ERR_NO_SUCH_FUNCTION when the account has none of that name. */
  existing(accountId: string, name: string): FunctionDescription;
  /** How a function's calls are shared between its versions (undefined: no such function). */
  traffic(accountId: string, name: string): TrafficShare[] | undefined;
  deploy(accountId: string, specInput: unknown, source: BundleSource, request?: DeployRequest): Promise<FunctionManifest>;
  remove(accountId: string, name: string): Promise<FunctionManifest | undefined>;

  versions(account: string, name: string): Promise<VersionList>;
  rollback(account: string, name: string, to?: unknown): Promise<FunctionRecord>;
  setTraffic(account: string, name: string, traffic: unknown): Promise<FunctionRecord>;
  promote(account: string, name: string): Promise<FunctionRecord>;

  keys(accountId: string, all?: boolean): Promise<KeyDescription[]>;
  createKey(accountId: string, options: { name?: unknown; scope?: unknown }): Promise<NewKey>;
  revokeKey(accountId: string, name: string): Promise<ApiKeyRecord>;

  /** A function's logs, from every node that serves it. */
  readLogs(accountId: string, name: string, query: LogQuery, apiKey?: string): Promise<LogEntry[]>;
  /** A function's logs written by this node alone (how one node reads another's). */
  readLocalLogs(accountId: string, name: string, query: LogQuery): Promise<LogEntry[]>;
  /** Whether other nodes keep logs too (several nodes on PostgreSQL). */
  readonly otherNodesKeepLogs: boolean;
  readOtherNodesLogs(accountId: string, name: string, query: LogQuery, apiKey?: string): Promise<LogEntry[]>;
  /** This node's log files of a function, oldest first (what a live view follows). */
  logFiles(accountId: string, name: string): Promise<string[]>;
  /** What a live view of a function's logs reads: this node's files as they grow, and the other nodes' lines when they keep logs too. */
  followLogs(accountId: string, name: string, apiKey: string | undefined): { own: LogFollowing; others: OtherNodesFollowing | undefined };

  readInvocation(accountId: string, id: string): Promise<InvocationView>;
  listInvocations(accountId: string, name: string, limit: number): Promise<InvocationView[]>;
  schedules(accountId: string, name?: string): Promise<ScheduleView[]>;

  /** Whether this server counts calls (off with --no-metrics). */
  readonly countsMetrics: boolean;
  /** This process's figures of a function over the last `windowSec` seconds (undefined when it counts none). */
  recentFigures(accountId: string, name: string, windowSec: number): FunctionFigures | undefined;
  /** Warm instances and their memory, by `account/function`. */
  warmByFunction(): Map<string, { instances: number; mb: number }>;
  counters(): ProcessCounters;
  stats(): EngineStats;
}

/** A live view's reader of this node's log files (engine/log-follow.ts). */
export type LogFollowing = Pick<LogFollower, 'start' | 'read'>;
/** A live view's reader of the other nodes' lines (engine/log-follow-nodes.ts). */
export type OtherNodesFollowing = Pick<OtherNodesFollower, 'start' | 'next'>;

/** Both: what an HTTP server serves. */
export type EngineApi = CallApi & ManagementApi;
