import ivm from 'isolated-vm';
import { toArrayBuffer } from '../bytes';
import { hostErrorText } from '../capabilities/errors';
import type { OpAnswer } from '../capabilities/host-ops';
import { MAX_TIMERS, TimerOp, type TimerOpKind } from '../capabilities/timers/ops';
import { Fire, MAX_PENDING_OPS } from '../sandbox/protocol';
import { SlotMirror } from '../slot-map';
import type { HostMemory } from './host-memory';
import { textArgument } from './results';

/** What an instance's operations and timers need of it. */
export interface OperationHost {
  readonly hostMemory: HostMemory;
  dead(): boolean;
  /** Enters the isolate with `args` (see IsolateEntries.fire). */
  fire(args: unknown[], bytes?: number, held?: number): void;
}

/**
 * The sandbox's asynchronous operations (fetch, sdk.invoke, WebCrypto…) and timers, each answered
 * by an entry into the isolate: a finished operation's reply, a timer that ran out.
 */
export class IsolateOperations {
  /** Host timers of the sandbox's timers, by the sandbox's timer id (at most MAX_TIMERS). */
  private readonly timers = new SlotMirror<NodeJS.Timeout>(MAX_TIMERS);
  private pending = 0;

  constructor(private readonly host: OperationHost) {}

  setTimer(op: TimerOpKind, id: number, ms: number): void {
    if (this.host.dead() || !Number.isInteger(id)) return;
    const existing = this.timers.take(id);
    if (existing) clearTimeout(existing);
    if (op !== TimerOp.arm) return;
    const delay = Number.isFinite(ms) ? Math.min(Math.max(ms, 0), 2 ** 31 - 1) : 0;
    const timer = setTimeout(() => {
      this.timers.take(id);
      this.host.fire([Fire.timer, id]);
    }, delay);
    timer.unref();
    if (!this.timers.set(id, timer)) clearTimeout(timer);
  }

  /** The instance died: no timer fires any more. */
  clearTimers(): void {
    for (const timer of this.timers.takeAll()) clearTimeout(timer);
  }

  /**
   * Runs an operation and enters the isolate with its reply (see HostReply): its answer, or its
   * failure as a HostError. The instance's own refusals (too many in flight, no memory left for the
   * result) are TypeErrors, as a web API's.
   */
  run(id: number, work: () => Promise<OpAnswer>): void {
    if (this.host.dead() || !Number.isInteger(id)) return;
    const refuse = (message: string) => JSON.stringify({ message, name: 'TypeError' });
    const settle = (ok: boolean, resultPayload: string, resultBody?: Uint8Array, transfer = false) => {
      this.pending--;
      const bytes = resultPayload.length + (resultBody?.byteLength ?? 0);
      // A result waits for its turn to go in: the host holds it meanwhile, within the instance's memory.
      if (!this.host.dead() && !this.host.hostMemory.reserve(bytes)) {
        const refusal = refuse(this.host.hostMemory.refusal("the operation's result was dropped"));
        this.host.fire([Fire.op, id, false, refusal], refusal.length);
        return;
      }
      const args: unknown[] = [Fire.op, id, ok, textArgument(resultPayload)];
      if (resultBody) args.push(transfer ? movedBytes(resultBody) : new ivm.ExternalCopy(toArrayBuffer(resultBody)).copyInto({ release: true }));
      this.host.fire(args, bytes, bytes);
    };
    this.pending++;
    if (this.pending > MAX_PENDING_OPS) {
      settle(false, refuse(`too many operations in flight (limit ${MAX_PENDING_OPS})`));
      return;
    }
    work().then(
      (r) => settle(true, r.payload, r.body, r.transfer),
      (err: unknown) => settle(false, hostErrorText(err)),
    );
  }
}

/**
 * Bytes moved into an isolate without a copy: their ArrayBuffer is detached on the host (a view of
 * part of one is copied first, so that the rest stays whole).
 */
function movedBytes(bytes: Uint8Array): ivm.Copy<ArrayBuffer> {
  return new ivm.ExternalCopy(toArrayBuffer(bytes), { transferOut: true }).copyInto({ release: true, transferIn: true });
}
