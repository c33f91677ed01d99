import { SlotMap } from '../../../slot-map';
import type { HostBridge } from '../../../sandbox/protocol';
import { MAX_TIMERS, TimerOp } from '../ops';
import { current } from '../../../sandbox/guest/host';
import { promiseResolve, promiseThen } from '../../../sandbox/guest/intrinsics';

interface TimerEntry {
  fn: (...args: unknown[]) => void;
  args: unknown[];
  repeatMs: number | undefined;
  requestId: string;
}

/** Node-style timer handle: usable as a number, with the ref/unref methods libraries call. */
class Timeout {
  constructor(readonly id: number) {}
  ref(): this {
    return this;
  }
  unref(): this {
    return this;
  }
  hasRef(): boolean {
    return true;
  }
  [Symbol.toPrimitive](): number {
    return this.id;
  }
}

export interface Timers {
  globals: Record<string, (...args: never[]) => unknown> & { queueMicrotask: (fn: unknown) => void };
  /** Runs timer `id` (called when the host timer fires). */
  fire(id: number): void;
}

/** Timers over the host's `timer` callback, which only these closures hold. */
export function makeTimers(hostTimer: HostBridge['timer'], reportError: (err: unknown) => void): Timers {
  // Ids come from a SlotMap, which the host's side of the timers mirrors (see engine/slot-map.ts).
  const pending = new SlotMap<TimerEntry>();

  const schedule = (fn: unknown, ms: unknown, args: unknown[], repeat: boolean): Timeout => {
    if (typeof fn !== 'function') throw new TypeError('The "callback" argument must be of type function');
    if (pending.size >= MAX_TIMERS) throw new RangeError(`too many pending timers (limit ${MAX_TIMERS})`);
    let delay = Number(ms);
    if (!Number.isFinite(delay) || delay < 1) delay = repeat ? 1 : 0;
    delay = Math.min(delay, 2 ** 31 - 1);
    const id = pending.add({ fn: fn as TimerEntry['fn'], args, repeatMs: repeat ? delay : undefined, requestId: current.requestId });
    hostTimer(TimerOp.arm, id, delay);
    // One past the SlotMap's id, so that no timer's id is 0: `clearTimeout(null)` and
    // `clearTimeout(0)` cancel nothing (a SlotMap's first id is 0).
    return new Timeout(id + 1);
  };
  const clear = (handle: unknown): void => {
    const id = Number(handle) - 1;
    if (Number.isSafeInteger(id) && id >= 0 && pending.take(id) !== undefined) hostTimer(TimerOp.cancel, id, 0);
  };

  return {
    globals: {
      setTimeout: (fn: unknown, ms?: unknown, ...args: unknown[]) => schedule(fn, ms, args, false),
      setInterval: (fn: unknown, ms?: unknown, ...args: unknown[]) => schedule(fn, ms, args, true),
      setImmediate: (fn: unknown, ...args: unknown[]) => schedule(fn, 0, args, false),
      clearTimeout: clear,
      clearInterval: clear,
      clearImmediate: clear,
      queueMicrotask: (fn: unknown) => {
        if (typeof fn !== 'function') throw new TypeError('The "callback" argument must be of type function');
        promiseThen(
          promiseThen(promiseResolve(undefined), () => (fn as () => void)()),
          undefined,
          reportError,
        );
      },
    },
    fire(id: number): void {
      const entry = pending.get(id);
      if (!entry) return;
      if (entry.repeatMs === undefined) pending.take(id);
      else hostTimer(TimerOp.arm, id, entry.repeatMs);
      current.requestId = entry.requestId;
      try {
        entry.fn(...entry.args);
      } catch (err) {
        reportError(err);
      }
    },
  };
}
