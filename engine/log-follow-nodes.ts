import type { LogEntry } from './logs';

/**
 * How far back each read of the other nodes reaches past the newest line seen: a line is written
 * up to 250 ms after its time, and nodes' clocks differ a little.
 */
const LOOKBACK_MS = 2_000;
/** Lines asked of the other nodes at most per read. */
const READ_LIMIT = 2_000;

/** Reads the other nodes' lines at or after `since` (ms), the newest `limit` of them. */
export type OtherNodesRead = (since: number, limit: number) => Promise<LogEntry[]>;

/**
 * Follows the lines other nodes write (several nodes on the PostgreSQL store each keep their own
 * files): each read asks them for what they wrote since a little before the newest line seen, and
 * leaves out the lines already passed on, known by node, time, request and text.
 */
export class OtherNodesFollower {
  private since = 0;
  /** When following began: older lines belong to the backlog, not to the reads after it. */
  private startedAt = 0;
  /** Lines passed on that a later read may return again, by key, with their times. */
  private readonly seen = new Map<string, number>();

  constructor(private readonly read: OtherNodesRead) {}

  /** Starts following at `startedAt`: the newest `backlog` lines written before (at or after `since`, when given). */
  async start(startedAt: number, backlog: number, since?: number): Promise<LogEntry[]> {
    this.since = startedAt;
    this.startedAt = startedAt;
    if (backlog === 0) return [];
    const entries = await this.read(since ?? 0, backlog);
    return this.fresh(entries);
  }

  /** The lines written since the last read, oldest first. */
  async next(): Promise<LogEntry[]> {
    const entries = await this.read(this.since - LOOKBACK_MS, READ_LIMIT);
    return this.fresh(entries.filter((e) => e.t >= this.startedAt));
  }

  private fresh(entries: LogEntry[]): LogEntry[] {
    const out: LogEntry[] = [];
    for (const entry of entries) {
      const key = `${entry.node ?? ''}\n${entry.t}\n${entry.requestId}\n${entry.message}`;
      if (this.seen.has(key)) continue;
      this.seen.set(key, entry.t);
      out.push(entry);
      if (entry.t > this.since) this.since = entry.t;
    }
    for (const [key, t] of this.seen) if (t < this.since - 2 * LOOKBACK_MS) this.seen.delete(key);
    return out;
  }
}
