import type { Limits } from '../engine/limits';
import type { LogLevel } from '../engine/server-log';
import type { StoreChange } from '../engine/store/store';

/**
 * What the supervisor and its workers say to each other over the IPC channel (supervisor/channel.ts).
 * A request that fails is answered with the error's message, and its code and details when it is a
 * ServiceError: the requester rejects with a ServiceError of that code.
 *
 * worker -> supervisor
 *   note  hello                     the worker listens for changes (sent before its store loads)
 *   note  ready {port, consolePort} it serves
 *   note  fatal {message}           it cannot start (the port is taken)
 *   note  stats WorkerStats         every second
 *   req   lock {name}               a store lock, granted in turn across workers
 *   note  unlock {name}
 *   req   publish {change}          answered once every other worker has applied the change
 *   req   flush-logs                answered once every other worker has written its pending logs
 *   req   health                    every worker's last stats
 *   req   gather {op, body}         every other worker's answer to `op` (metrics, stats), as a list
 *   req   queue {op, args}          the file store's queue broker (supervisor/queue.ts)
 *
 * supervisor -> worker
 *   note  listen                    start listening (when started with waitToListen)
 *   req   change {change}           apply a store change (answered once applied)
 *   req   flush-logs
 *   req   metrics {account}         its metrics (prom-client JSON)
 *   req   stats {account, name, windowSec}   its part of a function's figures
 *   note  drain {reason}            stop taking connections, finish the calls in flight, exit 0
 *   note  queue-wake                asynchronous invocations may be waiting
 */

/** Handed to a worker in ISLET_WORKER (JSON). */
export interface WorkerConfig {
  /** The worker's slot, 1..N (a replacement takes the slot of the worker it replaces). */
  slot: number;
  /** Its number among the processes writing logs now (unique while it lives). */
  logWriter: number;
  host: string;
  port: number;
  /** The console's port (undefined: no console). */
  consolePort: number | undefined;
  consoleOrigin: string | undefined;
  /** Check that no other program holds the ports before listening (no sibling holds them yet). */
  probe: boolean;
  /** Open the engine, then wait for `listen` before listening (the first worker checks the port first). */
  waitToListen: boolean;
  dataDir: string;
  /** A shared store (postgres://…) instead of the data directory. */
  storeUrl?: string;
  /** How other nodes reach this one (logs across nodes); default http://<host>:<port>. */
  advertiseUrl?: string;
  allowPrivateEgress: boolean;
  limits: Partial<Limits>;
  keepVersions: number | undefined;
  metrics: boolean;
  metricsToken: string | undefined;
  /** The server log's level. */
  logLevel: LogLevel;
}

export interface WorkerStats {
  pid: number;
  slot: number;
  rssMb: number;
  /** Requests being answered. */
  active: number;
  catastrophicOutOfMemory: number;
  warm: number;
  warmMb: number;
  functions: number;
  uptimeS: number;
}

export interface WorkerReport extends Partial<WorkerStats> {
  slot: number;
  pid: number | undefined;
  state: 'starting' | 'ready' | 'draining';
  /** Times this slot's worker was replaced. */
  restarts: number;
}

export interface PublishRequest {
  change: StoreChange;
}
