import type { Admission } from '../admission';
import type { InvokeRequest } from '../engine';
import { ServiceError } from '../errors';
import type { Limits } from '../limits';
import { isFunctionName, isPublicName } from '../manifest';
import { newRequestId } from '../request-id';
import type { Catalog } from '../store/catalog';
import { Schedule } from './cron';
import { invocationView, newInvocationId, type InvocationRecord, type InvocationView, type JobStore, type Tick } from './records';
import { AsyncRunner, type RunOutcome } from './runner';
import { Scheduler } from './scheduler';

/** A call to accept for later (`POST /v2/async/…`), as `/v2/run` would take it. */
/** An asynchronous invocation's request: its body whole (it is kept until it runs). */
export type AsyncRequest = Pick<InvokeRequest, 'accountId' | 'functionName' | 'apiKey' | 'method' | 'path' | 'rawQuery' | 'headers'> & { body: Buffer };

/** What runs a call the server starts itself (the engine's dispatchQueued). */
export type RunQueued = (request: AsyncRequest & { requestId: string }, trigger: { label: string; scheduled?: { cron: string; scheduledTime: number } }) => Promise<RunOutcome>;

/** One schedule as `islet schedules` shows it. */
export interface ScheduleView {
  function: string;
  cron: string;
  timezone: string;
  /** The next tick (ISO), if the expression runs again. */
  next?: string;
  /** The last tick claimed: its time, when its run ended, its status and error code. */
  last?: { scheduledTime: string; finishedAt?: string; status?: number; errorCode?: string };
}

/** Headers a queued call keeps: the caller's key is checked at acceptance and never stored. */
const DROPPED_HEADERS = new Set(['x-service-api-key', 'connection', 'content-length', 'transfer-encoding']);

/**
 * What runs without a caller waiting, in each serving process: asynchronous invocations (accepted
 * here, run by the AsyncRunner) and schedules (the Scheduler), both on the store's JobStore so that
 * every process and node shares them.
 */
export class Background {
  readonly runner: AsyncRunner;
  readonly scheduler: Scheduler;

  constructor(
    private readonly jobs: JobStore,
    private readonly catalog: Catalog,
    private readonly admission: Admission,
    private readonly limits: Limits,
    run: RunQueued,
  ) {
    const serving = (account: string, fn: string) => catalog.serving(account, fn);
    this.runner = new AsyncRunner(jobs, serving, (record) => run(queuedCall(record), { label: `ASYNC ${record.request.method}` }), {
      concurrency: limits.asyncConcurrency,
      perAccount: Math.max(1, Math.ceil(limits.asyncConcurrency / 2)),
      keepMs: limits.asyncKeepMs,
    });
    this.scheduler = new Scheduler(
      jobs,
      serving,
      function* () {
        for (const entry of catalog.allFunctions()) yield [entry.primary.account, entry.primary.name];
      },
      async (tick) => {
        const outcome = await run(tickCall(tick), { label: 'SCHEDULED', scheduled: { cron: tick.cron, scheduledTime: tick.scheduledTime } });
        return { status: outcome.status, ...(outcome.error ? { errorCode: outcome.error.code } : {}) };
      },
    );
    catalog.watchFunctions((account, name) => this.scheduler.changed(account, name));
  }

  start(): void {
    this.scheduler.start();
    this.runner.start();
  }

  /** Stops scheduling and taking invocations; waits for the runs in flight (at most `waitMs`). */
  async stop(waitMs?: number): Promise<void> {
    this.scheduler.stop();
    await this.runner.stop(waitMs);
  }

  /**
   * Accepts a call to run later: the key and the function as `/v2/run` checks them (ERR_NO_KEY,
   * ERR_BAD_KEY, ERR_NO_SUCH_FUNCTION), the body's size, then the account's bound
   * (ERR_QUOTA_EXCEEDED). Resolves with the invocation's id once it is stored durably.
   */
  async accept(request: AsyncRequest): Promise<string> {
    this.check(request);
    const headers: Record<string, string> = {};
    for (const name in request.headers) if (!DROPPED_HEADERS.has(name)) headers[name] = request.headers[name]!;
    const now = Date.now();
    const record: InvocationRecord = {
      id: newInvocationId(now),
      account: request.accountId,
      function: request.functionName,
      status: 'queued',
      attempts: 0,
      createdAt: now,
      runAt: now,
      request: { method: request.method, path: request.path, rawQuery: request.rawQuery, headers },
      body: request.body,
    };
    await this.jobs.enqueue(record, this.limits.asyncMaxQueued);
    this.runner.kick();
    return record.id;
  }

  /** The checks an asynchronous call passes before its body is read (keys before bodies). */
  check(request: Pick<AsyncRequest, 'accountId' | 'functionName' | 'apiKey'>): void {
    const { accountId, functionName } = request;
    if (!isPublicName(functionName)) this.admission.checkCallKey(accountId, request.apiKey, functionName);
    if (!isFunctionName(functionName) || !this.catalog.function(accountId, functionName)) throw new ServiceError('ERR_NO_SUCH_FUNCTION', `no function ${functionName} in account ${accountId}`);
  }

  async read(account: string, id: string): Promise<InvocationView> {
    const record = await this.jobs.read(account, id);
    if (!record) throw new ServiceError('ERR_NOT_FOUND', `no invocation ${id} in account ${account} (finished ones are kept ${Math.round(this.limits.asyncKeepMs / 3_600_000)} h)`);
    return invocationView(record);
  }

  async list(account: string, fn: string, limit: number): Promise<InvocationView[]> {
    return (await this.jobs.list(account, fn, limit)).map((record) => invocationView(record, false));
  }

  /** The account's schedules (of its functions' serving versions): each one's next tick and last run. */
  async schedules(account: string, fn?: string): Promise<ScheduleView[]> {
    const last = await this.jobs.lastTicks(account);
    const views: ScheduleView[] = [];
    const now = Date.now();
    for (const entry of this.catalog.list(account)) {
      const manifest = entry.primary;
      if (!manifest.schedules || (fn !== undefined && manifest.name !== fn)) continue;
      const timezone = manifest.timezone ?? 'UTC';
      for (const cron of manifest.schedules) {
        const next = this.scheduler.nextTick(account, manifest.name, cron) ?? new Schedule(cron, timezone).next(now);
        const tick = last.find((t) => t.function === manifest.name && t.cron === cron);
        views.push({
          function: manifest.name,
          cron,
          timezone,
          ...(next === undefined ? {} : { next: new Date(next).toISOString() }),
          ...(tick
            ? {
                last: {
                  scheduledTime: new Date(tick.scheduledTime).toISOString(),
                  ...(tick.finishedAt ? { finishedAt: new Date(tick.finishedAt).toISOString() } : {}),
                  ...(tick.status !== undefined ? { status: tick.status } : {}),
                  ...(tick.errorCode ? { errorCode: tick.errorCode } : {}),
                },
              }
            : {}),
        });
      }
    }
    return views;
  }
}

/** The call an invocation's attempt makes (a new request id each time). */
function queuedCall(record: InvocationRecord): AsyncRequest & { requestId: string } {
  return { accountId: record.account, functionName: record.function, apiKey: undefined, ...record.request, body: record.body, requestId: newRequestId() };
}

/** The call a tick makes, seed style: a POST whose JSON body is `{"cron", "scheduledTime"}`. */
function tickCall(tick: Tick): AsyncRequest & { requestId: string } {
  return {
    accountId: tick.account,
    functionName: tick.function,
    apiKey: undefined,
    method: 'POST',
    path: '/',
    rawQuery: '',
    headers: { 'content-type': 'application/json' },
    body: Buffer.from(JSON.stringify({ cron: tick.cron, scheduledTime: tick.scheduledTime })),
    requestId: newRequestId(),
  };
}
