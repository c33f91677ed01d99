import { randomBytes } from 'node:crypto';

/** Where an asynchronous invocation is: waiting (or waiting to be tried again), running, or done. */
export type InvocationStatus = 'queued' | 'running' | 'succeeded' | 'failed';

/** The request an asynchronous invocation runs with: the call as it was accepted. */
export interface QueuedRequest {
  method: string;
  path: string;
  rawQuery: string;
  headers: Record<string, string>;
}

/** A function's answer, kept for its caller (`body` as text). */
export interface InvocationResult {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export interface InvocationError {
  errorCode: string;
  message: string;
  stack?: string;
}

/** An asynchronous invocation as the stores keep it. Times are ms since the epoch. */
export interface InvocationRecord {
  id: string;
  account: string;
  function: string;
  status: InvocationStatus;
  /** Runs started so far, the first one included. */
  attempts: number;
  createdAt: number;
  /** When it may run (next); a retry's backoff puts it later. */
  runAt: number;
  startedAt?: number;
  finishedAt?: number;
  /** The request id of its latest run (its lines in `islet logs`). */
  requestId?: string;
  request: QueuedRequest;
  body: Buffer;
  result?: InvocationResult;
  error?: InvocationError;
}

/** What `GET /v2/accounts/<account>/invocations/<id>` answers (the request itself is not shown). */
export interface InvocationView {
  invocationId: string;
  function: string;
  status: InvocationStatus;
  attempts: number;
  createdAt: string;
  finishedAt?: string;
  requestId?: string;
  result?: InvocationResult;
  error?: InvocationError;
}

export function invocationView(record: InvocationRecord, withResult = true): InvocationView {
  const view: InvocationView = {
    invocationId: record.id,
    function: record.function,
    status: record.status,
    attempts: record.attempts,
    createdAt: new Date(record.createdAt).toISOString(),
  };
  if (record.finishedAt !== undefined) view.finishedAt = new Date(record.finishedAt).toISOString();
  if (record.requestId !== undefined) view.requestId = record.requestId;
  if (withResult && record.result) view.result = record.result;
  if (record.error) view.error = record.error;
  return view;
}

/**
 * A new invocation id: 32 lower-case hex characters, the first 12 the time in ms, so that ids sort
 * by acceptance (the file store lists a function's newest by name alone).
 */
export function newInvocationId(now = Date.now()): string {
  return `${now.toString(16).padStart(12, '0')}${randomBytes(10).toString('hex')}`;
}

/** When an id was made (ms since the epoch). */
export function invocationTime(id: string): number {
  return parseInt(id.slice(0, 12), 16);
}

export function isInvocationId(value: string): boolean {
  return /^[0-9a-f]{32}$/.test(value);
}

/** The wait before attempt `attempts + 1`: 1 s, doubling, at most 30 s. */
export function backoffMs(attempts: number): number {
  return Math.min(30_000, 1000 * 2 ** Math.max(0, attempts - 1));
}

/** One tick of a schedule, as the stores claim it (exactly once) and record its outcome. */
export interface Tick {
  account: string;
  function: string;
  cron: string;
  /** The tick's nominal time, ms since the epoch. */
  scheduledTime: number;
  /** The version whose schedule it is: a tick is claimed only while that version still serves. */
  version: number;
}

/** The last tick claimed of a schedule, and how its run ended once it has. */
export interface TickState {
  function: string;
  cron: string;
  scheduledTime: number;
  claimedAt: number;
  finishedAt?: number;
  /** The run's HTTP status (as a call's); absent while it runs. */
  status?: number;
  errorCode?: string;
}

/**
 * Where asynchronous invocations wait and schedules' ticks are claimed: in the database on
 * PostgreSQL (engine/store/postgres/jobs.ts), on disk in the data directory
 * (engine/store/file/jobs.ts). Any number of processes (and, on PostgreSQL, nodes) share it.
 */
export interface JobStore {
  /**
   * Stores a new invocation durably (it survives a crash from the moment this resolves). Refused
   * with ERR_QUOTA_EXCEEDED when the account has `bound` invocations queued or running.
   */
  enqueue(record: InvocationRecord, bound: number): Promise<void>;
  /**
   * Takes up to `limit` invocations due now for this process to run (status `running`, attempts
   * counted), at most `perAccount` of any one account, none of the accounts in `full`, accounts
   * taken in turn so that one account's backlog does not hold the others back.
   */
  claim(limit: number, perAccount: number, full: ReadonlySet<string>): Promise<InvocationRecord[]>;
  /** Stores how a run ended: done (`succeeded`/`failed`), or queued again to run at `runAt`. */
  settle(record: InvocationRecord): Promise<void>;
  read(account: string, id: string): Promise<InvocationRecord | undefined>;
  /** A function's invocations, newest first, without their bodies. */
  list(account: string, fn: string, limit: number): Promise<InvocationRecord[]>;
  /** Deletes the records of invocations that finished more than `keepMs` ago. */
  prune(keepMs: number): Promise<void>;
  /** Invocations queued or running, by account (this store's view, for /healthz and tests). */
  pending(account: string): Promise<number>;
  /** Calls `listener` when new work may be waiting (another process or node queued some). */
  onWork(listener: () => void): void;
  /**
   * Queues again what its runner will never settle, where only the store can tell (PostgreSQL:
   * a dead node's, a gone worker's); answers how many. The file store's broker does it itself.
   */
  recover?(): Promise<number>;

  /**
   * Claims one tick of a schedule for this process, exactly once among every process and node:
   * true for the one that may run it. A tick older than the last one claimed of that schedule, or
   * of a version that no longer serves (`stillServing` is this process's catalog's view), is refused.
   */
  claimTick(tick: Tick, stillServing: () => boolean): Promise<boolean>;
  /** Records how a claimed tick's run ended. */
  tickDone(tick: Tick, status: number, errorCode: string | undefined): Promise<void>;
  /** The last tick claimed of each schedule of the account. */
  lastTicks(account: string): Promise<TickState[]>;
}
