import type { BodyStream } from './body-stream';
import type { FunctionSocket } from './capabilities/websockets/host';
import type { Limits } from './limits';
import type { LogReader, LogStore } from './logs';
import type { RuntimeName } from './manifest';
import type { PoolStats } from './pool';
import type { RequestBody } from './request-body';
import type { ClientGone, Instance, Runtime } from './runtime';
import type { ScheduledEvent } from './sandbox/protocol';
import type { Store, StoreHealth } from './store/store';

/* The engine's types: how it is built (its options, the runtimes plugged in) and what a call is. */

/** What the engine gives a runtime it creates: the limits, and where to report its instances' deaths and sizes. */
export interface RuntimeContext {
  limits: Limits;
  /**
   * An instance died on its own (memory limit, timeout): the warm cache drops it. `catastrophic`:
   * V8 parked its thread after a fatal out-of-memory, counted in `stats()` (its process is replaced).
   */
  onInstanceDeath(instance: Instance, catastrophic: boolean): void;
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
  /** Told when the client goes away before the answer ends (the HTTP server's calls). */
  clientGone?: ClientGone;
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
