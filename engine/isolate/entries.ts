import type ivm from 'isolated-vm';
import type { HostMemory } from './host-memory';

/**
 * What may go into an isolate before its thread must go idle once (see `mayEnter`): text bytes up
 * to a sixteenth of the memory limit (at most 8 MB), and calls.
 */
const HANDED_BYTES = 8 * 1024 * 1024;
const HANDED_CALLS = 1024;

interface WaitingFire {
  args: unknown[];
  /** Text bytes it hands in (see HANDED_BYTES). */
  bytes: number;
  /** Host memory given back once it is in. */
  held: number;
  /** Called once it is in. */
  entered?: () => void;
}

/** What the entries into an instance's isolate need of the instance. */
export interface EntryHost {
  readonly fireRef: ivm.Reference<unknown>;
  readonly timeoutMs: number;
  readonly hostMemory: HostMemory;
  /** The instance is dead: nothing enters any more. */
  dead(): boolean;
  /** No call in flight, no code loading, no `waitUntil` window open: fires are held (see `frozen`). */
  idle(): boolean;
  /** An entry is over and the fires waiting went in: the calls waiting may go in. */
  afterEntry(): void;
  /** A fire's entry failed: a promise rejected with no handler, the timeout, the memory limit. */
  fireFailed(err: unknown): void;
}

/**
 * The entries into an instance's isolate (batches of calls, fires of timers, finished operations,
 * stream windows and WebSocket events), counted so that the isolate's thread goes idle now and
 * then (see `mayEnter`), and the fires held while the instance has nothing to do.
 */
export class IsolateEntries {
  /** Entries handed to the isolate and not finished yet. */
  private count = 0;
  /** Text bytes and calls handed to the isolate since its thread was last idle (see HANDED_BYTES). */
  private handedBytes = 0;
  private handedCalls = 0;
  private readonly handedBytesLimit: number;
  /** Fires waiting until the isolate may take more (see HANDED_BYTES), in order; `held` bytes of host memory go with each. */
  private waiting: WaitingFire[] = [];
  /**
   * Fires (timers that ran out, finished operations) held while the instance has nothing to do: no
   * call in flight, no code loading, no `waitUntil` window open. They enter with the next call, so
   * a function uses no CPU between calls (as a Lambda function is frozen), whatever it left behind.
   */
  private frozen: WaitingFire[] = [];

  constructor(
    private readonly host: EntryHost,
    memoryBytes: number,
  ) {
    this.handedBytesLimit = Math.min(HANDED_BYTES, memoryBytes / 16);
  }

  /**
   * Whether an entry carrying `bytes` of text for `calls` calls may go into the isolate now, and if
   * so counts it. isolated-vm lets go of what entries handed to an isolate (their arguments and
   * results) only when the isolate's thread finds no entry waiting. Under steady load entries
   * queue back to back and that never happens: a function taking 10 KB bodies at c=64 passed its
   * 128 MB in seconds (measured). So once `handedBytesLimit` or HANDED_CALLS have gone in since
   * the thread was last idle, the next entry waits until the ones in the isolate are done.
   */
  mayEnter(bytes: number, calls: number): boolean {
    if (this.count === 0) {
      this.handedBytes = 0;
      this.handedCalls = 0;
    } else if (this.handedBytes + bytes > this.handedBytesLimit || this.handedCalls + calls > HANDED_CALLS) {
      return false;
    }
    this.count++;
    this.handedBytes += bytes;
    this.handedCalls += calls;
    return true;
  }

  /** An entry that goes in whatever was handed before (a second ask for a batch's results). */
  enterAnyway(): void {
    this.count++;
  }

  /** An entry is over: waiting fires, then waiting calls, may go in. */
  readonly entered = (): void => {
    this.count--;
    if (this.host.dead()) return;
    while (this.waiting.length > 0 && this.mayEnter(this.waiting[0]!.bytes, 1)) {
      const fire = this.waiting.shift()!;
      this.enterFire(fire.args, fire.held, fire.entered);
    }
    this.host.afterEntry();
  };

  /**
   * Enters the isolate for a timer or a finished operation, bounded by the timeout; `held` bytes
   * of host memory are given back once it is in. Held while the instance is idle (see `frozen`).
   */
  fire(args: unknown[], bytes = 0, held = 0, entered?: () => void): void {
    if (this.host.dead()) return;
    if (this.host.idle()) this.frozen.push({ args, bytes, held, entered });
    else if (this.waiting.length > 0 || !this.mayEnter(bytes, 1)) this.waiting.push({ args, bytes, held, entered });
    else this.enterFire(args, held, entered);
  }

  /** Something to do besides calls: what was held while idle goes in. */
  thaw(): void {
    if (this.frozen.length === 0) return;
    const held = this.frozen;
    this.frozen = [];
    for (const fire of held) this.fire(fire.args, fire.bytes, fire.held, fire.entered);
  }

  /** The instance died: nothing held goes in. */
  clear(): void {
    this.waiting = [];
    this.frozen = [];
  }

  private enterFire(args: unknown[], held: number, entered?: () => void): void {
    this.host.fireRef.apply(undefined, args, { timeout: this.host.timeoutMs }).then(
      () => {
        this.host.hostMemory.release(held);
        this.entered();
        entered?.();
      },
      (err: unknown) => {
        this.host.hostMemory.release(held);
        this.entered();
        entered?.();
        this.host.fireFailed(err);
      },
    );
  }
}
