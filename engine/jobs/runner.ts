import type { ServiceError } from '../errors';
import { retriesOf, type FunctionManifest } from '../manifest';
import { backgroundFailed, serverLog } from '../server-log';
import { backoffMs, type InvocationRecord, type JobStore } from './records';

/** How a run ended, as the engine answered it. */
export interface RunOutcome {
  status: number;
  headers: Record<string, string>;
  body: string | Uint8Array;
  requestId: string;
  /** Set when the run failed or was refused (the function threw, timed out, was over a limit…). */
  error?: ServiceError;
}

export interface RunnerOptions {
  /** Invocations this process runs at once. */
  concurrency: number;
  /** Of which one account may hold at most this many. */
  perAccount: number;
  /** Finished invocations are kept this long (ms). */
  keepMs: number;
  /** Looks for due work this often besides being told of it (retries come due, missed notices). */
  pollMs?: number;
}

/** Refusals before the handler ran: the invocation waits and tries again, with no attempt spent. */
const REFUSED = new Set(['ERR_RATE_LIMITED', 'ERR_OVERLOADED']);
const PRUNE_MS = 10 * 60_000;
const RECOVER_MS = 5_000;

/**
 * Runs this process's share of the asynchronous invocations: it takes due ones from the job store
 * while it has free slots (never more than `perAccount` of one account, so that one account's
 * backlog leaves the other slots to the others), runs each as a call, and stores how it ended:
 * succeeded (any answer below 500), queued again after a backoff (it threw, timed out or answered
 * 5xx, with retries left: 1 s, doubling, at most 30 s), or failed.
 */
export class AsyncRunner {
  private running = 0;
  private readonly byAccount = new Map<string, number>();
  private readonly inFlight = new Set<Promise<void>>();
  private claiming = false;
  private again = false;
  private stopped = true;
  private readonly timers: NodeJS.Timeout[] = [];
  /** A wake-up for the earliest retry this process queued. */
  private retryTimer: NodeJS.Timeout | undefined;
  private retryAt = Infinity;

  constructor(
    private readonly jobs: JobStore,
    /** The version that would run the function now (its `retries`), undefined when it is gone. */
    private readonly serving: (account: string, fn: string) => FunctionManifest | undefined,
    private readonly run: (record: InvocationRecord) => Promise<RunOutcome>,
    private readonly options: RunnerOptions,
  ) {}

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.jobs.onWork(() => this.kick());
    const every = (ms: number, work: () => unknown) => this.timers.push(setInterval(work, ms).unref());
    every(this.options.pollMs ?? 1000, () => this.kick());
    every(PRUNE_MS, () => void this.jobs.prune(this.options.keepMs).catch((err: unknown) => backgroundFailed('job-prune', err, 'finished asynchronous invocations could not be pruned')));
    if (this.jobs.recover)
      every(
        RECOVER_MS,
        () =>
          void this.jobs.recover!().then(
            (n) => n > 0 && this.kick(),
            (err: unknown) => backgroundFailed('job-recover', err, 'the invocations of nodes that went away could not be queued again'),
          ),
      );
    this.kick();
  }

  /** Stops taking work and waits for the runs in flight (at most `waitMs`); what is left is queued again by the store. */
  async stop(waitMs = 10_000): Promise<void> {
    this.stopped = true;
    for (const timer of this.timers.splice(0)) clearInterval(timer);
    clearTimeout(this.retryTimer);
    let timeout: NodeJS.Timeout | undefined;
    await Promise.race([Promise.all(this.inFlight), new Promise((resolve) => (timeout = setTimeout(resolve, waitMs)))]);
    clearTimeout(timeout);
  }

  /** Runs in flight in this process, by account (tests, /healthz). */
  get active(): number {
    return this.running;
  }

  /** Looks for due work now (new work was queued, a slot freed up). */
  kick(): void {
    if (this.stopped) return;
    if (this.claiming) {
      this.again = true;
      return;
    }
    this.claiming = true;
    void this.fill()
      // The next poll claims again.
      .catch((err: unknown) => backgroundFailed('job-claim', err, 'asynchronous invocations could not be claimed'))
      .finally(() => {
        this.claiming = false;
        if (this.again) {
          this.again = false;
          this.kick();
        }
      });
  }

  private async fill(): Promise<void> {
    const { concurrency, perAccount } = this.options;
    while (!this.stopped && this.running < concurrency) {
      const full = new Set<string>();
      let busiest = 0;
      for (const [account, n] of this.byAccount) {
        if (n >= perAccount) full.add(account);
        else busiest = Math.max(busiest, n);
      }
      // No account may pass its share, whichever of them the store hands out.
      const claimed = await this.jobs.claim(concurrency - this.running, perAccount - busiest, full);
      if (claimed.length === 0) return;
      for (const record of claimed) this.launch(record);
    }
  }

  private launch(record: InvocationRecord): void {
    this.running++;
    this.byAccount.set(record.account, (this.byAccount.get(record.account) ?? 0) + 1);
    const work = this.execute(record)
      .catch((err: unknown) =>
        serverLog.error({ code: 'ERR_INTERNAL', invocationId: record.id, requestId: record.requestId, err }, `invocation ${record.id}: ${(err as Error)?.message ?? String(err)}`),
      )
      .finally(() => {
        this.running--;
        const left = (this.byAccount.get(record.account) ?? 1) - 1;
        if (left === 0) this.byAccount.delete(record.account);
        else this.byAccount.set(record.account, left);
        this.inFlight.delete(work);
        this.kick();
      });
    this.inFlight.add(work);
  }

  private async execute(record: InvocationRecord): Promise<void> {
    const manifest = this.serving(record.account, record.function);
    const attemptsAllowed = retriesOf(manifest ?? {}) + 1;
    if (record.attempts > attemptsAllowed) {
      // Its last attempt was cut short (the process running it stopped): it is not run again.
      return this.finish(record, 'failed', { errorCode: 'ERR_INTERNAL', message: `its last attempt (${attemptsAllowed}) was cut short: the process running it stopped` });
    }
    const outcome = await this.run(record);
    record.requestId = outcome.requestId;
    const code = outcome.error?.code;
    if (code !== undefined && REFUSED.has(code)) {
      // Refused before it ran (the account or the function was at a limit): no attempt spent.
      record.attempts--;
      const retryAfter = Number(outcome.error?.details?.retryAfter) || 1;
      return this.requeue(record, Date.now() + retryAfter * 1000);
    }
    const result = outcome.error ? undefined : { status: outcome.status, headers: outcome.headers, body: typeof outcome.body === 'string' ? outcome.body : Buffer.from(outcome.body).toString('utf8') };
    const error = outcome.error && {
      errorCode: outcome.error.code,
      message: outcome.error.message,
      ...(typeof outcome.error.details?.stack === 'string' ? { stack: outcome.error.details.stack } : {}),
    };
    record.result = result;
    record.error = error;
    if (outcome.status < 500) return this.finish(record, 'succeeded');
    if (code === 'ERR_NO_SUCH_FUNCTION' || record.attempts >= attemptsAllowed) return this.finish(record, 'failed');
    return this.requeue(record, Date.now() + backoffMs(record.attempts));
  }

  private async finish(record: InvocationRecord, status: 'succeeded' | 'failed', error?: InvocationRecord['error']): Promise<void> {
    record.status = status;
    record.finishedAt = Date.now();
    if (error) record.error = error;
    await this.jobs.settle(record);
  }

  private async requeue(record: InvocationRecord, runAt: number): Promise<void> {
    record.status = 'queued';
    record.runAt = runAt;
    await this.jobs.settle(record);
    if (runAt < this.retryAt && !this.stopped) {
      clearTimeout(this.retryTimer);
      this.retryAt = runAt;
      this.retryTimer = setTimeout(
        () => {
          this.retryAt = Infinity;
          this.kick();
        },
        Math.max(0, runAt - Date.now()) + 5,
      ).unref();
    }
  }
}
