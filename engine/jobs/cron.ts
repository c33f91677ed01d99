import { Cron } from 'croner';

/** At most this many schedules per function. */
export const MAX_SCHEDULES = 16;
/** At most this many retries of an asynchronous invocation (`retries` in service.yml). */
export const MAX_RETRIES = 10;
/** Retries of an asynchronous invocation when service.yml says none. */
export const DEFAULT_RETRIES = 2;

/**
 * A cron expression, read by croner: standard 5-field cron (minute precision) or 6 fields with a
 * leading seconds field, day-of-month and day-of-week combined with OR as Vixie cron does, in a
 * time zone (UTC unless the function says otherwise). Croner has no dependency and reads time
 * zones through Intl; cron-parser needs luxon for them.
 */
export class Schedule {
  private readonly cron: Cron;

  constructor(
    readonly expression: string,
    readonly timezone: string = 'UTC',
  ) {
    this.cron = new Cron(expression, { timezone, mode: '5-or-6-parts', paused: true });
  }

  /** The first tick strictly after `afterMs` (ms since the epoch), or undefined when there is none. */
  next(afterMs: number): number | undefined {
    return this.cron.nextRun(new Date(afterMs))?.getTime();
  }

  /** The last tick at or before `atMs`, or undefined. */
  previous(atMs: number): number | undefined {
    return this.cron.previousRuns(1, new Date(atMs + 1))[0]?.getTime();
  }
}

/** Why `expression` is not a schedule islet can run, or undefined when it is. */
export function cronProblem(expression: unknown, timezone = 'UTC'): string | undefined {
  if (typeof expression !== 'string' || expression.trim() === '') return 'must be a cron expression (a string such as "0 3 * * *", or "*/2 * * * * *" with a seconds field)';
  if (expression.length > 200) return 'a cron expression of at most 200 characters';
  let schedule: Schedule;
  try {
    schedule = new Schedule(expression.trim(), timezone);
  } catch (err) {
    return `${JSON.stringify(expression)} is not a cron expression: ${String((err as Error).message).replace(/^CronPattern: /, '')}`;
  }
  if (schedule.next(Date.now()) === undefined) return `${JSON.stringify(expression)} never runs`;
  return undefined;
}

/** Why `timezone` is not an IANA time zone name, or undefined when it is. */
export function timezoneProblem(timezone: unknown): string | undefined {
  if (typeof timezone !== 'string' || timezone === '') return 'must be an IANA time zone name such as "Europe/Paris" (default UTC)';
  try {
    new Intl.DateTimeFormat('en', { timeZone: timezone });
    return undefined;
  } catch {
    return `${JSON.stringify(timezone)} is not an IANA time zone name (such as "Europe/Paris" or "UTC")`;
  }
}
