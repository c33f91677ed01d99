/**
 * Refusals of an account over its limits, answered after a short hold instead of at once.
 *
 * Refusing costs the HTTP thread about what serving a warm call does (reading the request, writing
 * the answer), so a client that sends again as soon as it is refused would take that thread from
 * every other account however cheap the refusal is made. Held, each of its connections brings at
 * most one call per hold. The hold is short beside the `Retry-After` second the answer carries.
 *
 * All holds last the same, so deadlines come in the order the refusals do: one queue and one timer
 * for the whole server, and none per refusal.
 */
export class HeldRefusals {
  private readonly queue: { at: number; answer: () => void }[] = [];
  private head = 0;
  private timer: NodeJS.Timeout | undefined;
  /** Refusals held now, by account: past `maxPerAccount` an account's refusals are answered at once. */
  private readonly perAccount = new Map<string, number>();

  constructor(
    private readonly holdMs: number,
    private readonly maxPerAccount: number,
  ) {}

  /** Calls `answer` after the hold (at once when holds are off or the account holds its most). */
  hold(accountId: string, answer: () => void): void {
    const held = this.perAccount.get(accountId) ?? 0;
    if (this.holdMs <= 0 || held >= this.maxPerAccount) {
      answer();
      return;
    }
    this.perAccount.set(accountId, held + 1);
    this.queue.push({
      at: performance.now() + this.holdMs,
      answer: () => {
        const left = this.perAccount.get(accountId)! - 1;
        if (left === 0) this.perAccount.delete(accountId);
        else this.perAccount.set(accountId, left);
        answer();
      },
    });
    this.timer ??= setTimeout(() => this.release(false), this.holdMs);
  }

  /** Answers the refusals whose hold is over (all of them when `all`: the server is closing). */
  release(all: boolean): void {
    this.timer = undefined;
    const now = performance.now();
    while (this.head < this.queue.length && (all || this.queue[this.head]!.at <= now)) this.queue[this.head++]!.answer();
    if (this.head === this.queue.length) {
      this.queue.length = 0;
      this.head = 0;
      return;
    }
    // Compacted now and then, not on every release: the queue is read from `head`.
    if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue.splice(0, this.head);
      this.head = 0;
    }
    this.timer = setTimeout(() => this.release(false), Math.max(1, this.queue[this.head]!.at - now));
  }

  get size(): number {
    return this.queue.length - this.head;
  }
}
