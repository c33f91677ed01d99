/**
 * The operations between the timers' guest half (guest/timers.ts, in both runtimes) and the host
 * (engine/isolate/instance.ts arms them): a callback to arm or cancel a timer, which later enters
 * the isolate with `fire(Fire.timer, id)`. Bundled into the runtimes: no imports.
 */

/** What `timer` asks of the host: cancel or arm the timer of an id. */
export const TimerOp = { cancel: 0, arm: 1 } as const;
export type TimerOpKind = (typeof TimerOp)[keyof typeof TimerOp];

/** Timers one sandbox may have armed at once (both sides enforce it). */
export const MAX_TIMERS = 10_000;

export interface TimersCallbacks {
  /** Arms or cancels a host timer, which later calls back with `fire(Fire.timer, id)`. */
  timer(op: TimerOpKind, id: number, ms: number): void;
}
