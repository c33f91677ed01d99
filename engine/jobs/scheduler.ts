import type { FunctionManifest } from '../manifest';
import { Schedule } from './cron';
import type { JobStore, Tick } from './records';
import { backgroundFailed } from '../server-log';

/** One schedule of one function, as this process follows it. */
interface Plan {
  key: string;
  account: string;
  fn: string;
  cron: string;
  schedule: Schedule;
  /** The serving version whose schedule it is (a tick is claimed only while it serves). */
  version: number;
  /** The next tick to run, ms since the epoch (undefined: the expression runs no more). */
  next: number | undefined;
}

/** A tick found this late (the process was busy, or asleep) still runs; an older one is let go. */
const GRACE_MS = 60_000;
/** At most this many late ticks of one schedule are run at one wake-up. */
const MAX_LATE_TICKS = 10;
/** The timer never sleeps longer, so that a change of the clock is noticed. */
const MAX_SLEEP_MS = 30_000;

/**
 * Runs the functions' schedules. Every process follows every schedule of the functions it serves
 * (the serving version's `schedules`, with the most calls in a split) and, at each tick, asks the
 * job store to claim it: one process among all of them (and all nodes on PostgreSQL) gets it and
 * runs it. So no process is the scheduler: a tick runs while any process is up, whichever died.
 * A change of a function (deploy, rollback, remove) reaches `changed` before the write that made
 * it returns, so the next tick already follows the new schedule.
 */
export class Scheduler {
  private readonly plans = new Map<string, Plan>();
  private timer: NodeJS.Timeout | undefined;
  private stopped = true;

  constructor(
    private readonly jobs: JobStore,
    /** The version serving most calls of a function now, undefined when it is gone. */
    private readonly serving: (account: string, fn: string) => FunctionManifest | undefined,
    /** Every function this process serves, as (account, name). */
    private readonly functions: () => Iterable<[string, string]>,
    /** Runs a claimed tick; resolves with its status and error code. */
    private readonly run: (tick: Tick) => Promise<{ status: number; errorCode?: string }>,
  ) {}

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    for (const [account, fn] of this.functions()) this.follow(account, fn, true);
    this.arm();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  /** A function changed: its schedules are read again. */
  changed(account: string, fn: string): void {
    if (this.stopped) return;
    this.follow(account, fn, false);
    this.arm();
  }

  /** The next tick of a schedule this process follows (for `islet schedules`). */
  nextTick(account: string, fn: string, cron: string): number | undefined {
    for (const plan of this.plans.values()) if (plan.account === account && plan.fn === fn && plan.cron === cron) return plan.next;
    return undefined;
  }

  private follow(account: string, fn: string, starting: boolean): void {
    const manifest = this.serving(account, fn);
    const timezone = manifest?.timezone ?? 'UTC';
    const wanted = new Set((manifest?.schedules ?? []).map((cron) => planKey(account, fn, cron, timezone)));
    for (const [key, plan] of this.plans) if (plan.account === account && plan.fn === fn && !wanted.has(key)) this.plans.delete(key);
    if (!manifest?.schedules) return;
    const now = Date.now();
    for (const cron of manifest.schedules) {
      const key = planKey(account, fn, cron, timezone);
      const known = this.plans.get(key);
      if (known) {
        // The same schedule in a new version goes on where it was: no tick twice, none skipped.
        known.version = manifest.version;
        continue;
      }
      const schedule = new Schedule(cron, timezone);
      const plan: Plan = { key, account, fn, cron, schedule, version: manifest.version, next: schedule.next(now) };
      this.plans.set(key, plan);
      if (starting && manifest.catchup) void this.catchUp(plan, now);
    }
  }

  /**
   * A function with `catchup: true`, when this process starts: if the schedule's latest tick
   * before now was missed (its last claimed tick is older; no node was up), that one tick runs
   * once, claimed like any other so that one process among all runs it.
   */
  private async catchUp(plan: Plan, now: number): Promise<void> {
    const missed = plan.schedule.previous(now);
    if (missed === undefined) return;
    const last = (await this.jobs.lastTicks(plan.account).catch(() => [])).find((t) => t.function === plan.fn && t.cron === plan.cron);
    if (!last || last.scheduledTime >= missed) return;
    await this.runTicks(plan, [missed]);
  }

  private arm(): void {
    clearTimeout(this.timer);
    if (this.stopped) return;
    let earliest = Infinity;
    for (const plan of this.plans.values()) if (plan.next !== undefined && plan.next < earliest) earliest = plan.next;
    const wait = Math.min(MAX_SLEEP_MS, Math.max(0, earliest - Date.now()));
    this.timer = setTimeout(() => this.fire(), wait);
    this.timer.unref();
  }

  private fire(): void {
    const now = Date.now();
    for (const plan of this.plans.values()) {
      const due: number[] = [];
      while (plan.next !== undefined && plan.next <= now) {
        if (now - plan.next <= GRACE_MS && due.length < MAX_LATE_TICKS) due.push(plan.next);
        plan.next = plan.schedule.next(plan.next);
      }
      if (due.length > 0) void this.runTicks(plan, due);
    }
    this.arm();
  }

  /** Claims a schedule's ticks in order (a claim of an older tick than the last one is refused), and runs each one won. */
  private async runTicks(plan: Plan, ticks: number[]): Promise<void> {
    for (const scheduledTime of ticks) {
      const tick: Tick = { account: plan.account, function: plan.fn, cron: plan.cron, scheduledTime, version: plan.version };
      const won = await this.jobs
        .claimTick(tick, () => this.isCurrent(plan))
        .catch((err: unknown) => {
          backgroundFailed('schedule-tick', err, `the tick ${new Date(scheduledTime).toISOString()} of ${plan.account}/${plan.fn} could not be claimed (it does not run here)`);
          return false;
        });
      if (!won) continue;
      void this.run(tick)
        .then(({ status, errorCode }) => this.jobs.tickDone(tick, status, errorCode))
        .catch((err: unknown) => backgroundFailed('schedule-tick', err, `the outcome of the tick ${new Date(scheduledTime).toISOString()} of ${plan.account}/${plan.fn} was not recorded`));
    }
  }

  /** The plan still stands: same schedule, same version serving most calls. */
  private isCurrent(plan: Plan): boolean {
    if (this.stopped || this.plans.get(plan.key) !== plan) return false;
    const manifest = this.serving(plan.account, plan.fn);
    return manifest !== undefined && manifest.version === plan.version && (manifest.schedules?.includes(plan.cron) ?? false);
  }
}

function planKey(account: string, fn: string, cron: string, timezone: string): string {
  return `${account}/${fn}\n${cron}\n${timezone}`;
}
