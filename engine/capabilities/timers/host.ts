import { TimerOp, type TimerOpKind } from './ops';

/**
 * The timers' host half: what the guest's `timer` callback asks, as the instance arms it
 * (engine/isolate/instance.ts keeps the timers, up to MAX_TIMERS, and fires them into the isolate).
 */
export function timerRequest(op: unknown, id: unknown, ms: unknown): [op: TimerOpKind, id: number, ms: number] {
  return [op === TimerOp.arm ? TimerOp.arm : TimerOp.cancel, Number(id), Number(ms)];
}
