/**
 * How much of its functions' log text an account may hand the server per second: a token bucket
 * per account. Logging is work of the server's own thread (each line is copied out of the isolate,
 * written as JSON and buffered), so an account logging without pause took that thread from every
 * other (400 lines of 16 KB per call, in a loop: another account's hello went from a p99 of 7 ms to
 * 154 ms). Past its share, an account's lines are dropped and counted in its functions' logs.
 */
export class LogBudget {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  constructor(
    /** Characters per second each account may log. */
    private readonly ratePerSec: number,
    /** Characters an account may log at once (a burst). */
    private readonly burst: number,
  ) {}

  /** Takes `chars` from the account's budget; false when it has not that many left now. */
  take(account: string, chars: number): boolean {
    const now = performance.now();
    let bucket = this.buckets.get(account);
    if (!bucket) {
      if (this.buckets.size >= 100_000) this.buckets.clear();
      this.buckets.set(account, (bucket = { tokens: this.burst, at: now }));
    } else {
      bucket.tokens = Math.min(this.burst, bucket.tokens + ((now - bucket.at) / 1000) * this.ratePerSec);
      bucket.at = now;
    }
    if (bucket.tokens < chars) return false;
    bucket.tokens -= chars;
    return true;
  }
}
