const INITIAL_BYTES = 256 * 1024;
const INITIAL_LINES = 4096;

/** What one function's pending lines come to when the arena is drained. */
export interface DrainedLog {
  /** Newline-terminated JSON lines, oldest first (a copy: the arena is reused). */
  data: Buffer;
  /** Lines left out to keep the function within `perKeyLimitBytes`. */
  dropped: number;
}

/**
 * Log lines of every function waiting for the next write, as UTF-8 in one buffer that is reused
 * from write to write. A line's string dies at once: kept as strings until the write, call lines
 * lived through several garbage collections and made the collector's pauses the slowest part of
 * a call; one buffer per function instead left garbage ArrayBuffers that V8 was slow to reclaim.
 */
export class LogArena {
  private bytes = Buffer.allocUnsafeSlow(INITIAL_BYTES);
  private used = 0;
  /** Per line: key, start, end. */
  private lines = new Int32Array(INITIAL_LINES * 3);
  private count = 0;

  constructor(
    /** The arena never grows past this; `add` answers false when a line does not fit. */
    private readonly maxBytes: number,
    /** Each function keeps at most this many bytes of its newest lines per drain. */
    private readonly perKeyLimitBytes: number,
  ) {}

  /** Appends a line for `key`; false when the arena is full (drain it, then add again). */
  add(key: number, line: string): boolean {
    const room = line.length * 3 + 1;
    if (this.bytes.length - this.used < room && !this.grow(this.used + room)) return false;
    if ((this.count + 1) * 3 > this.lines.length) {
      const lines = new Int32Array(this.lines.length * 2);
      lines.set(this.lines);
      this.lines = lines;
    }
    const start = this.used;
    const written = this.bytes.write(line, start, 'utf8');
    this.bytes[start + written] = 0x0a;
    this.used = start + written + 1;
    const at = this.count++ * 3;
    this.lines[at] = key;
    this.lines[at + 1] = start;
    this.lines[at + 2] = this.used;
    return true;
  }

  /** Takes every pending line, grouped by key, and empties the arena. */
  drain(): Map<number, DrainedLog> {
    const lines = this.lines;
    // Newest to oldest: each key keeps its newest lines that fit its limit.
    const kept = new Map<number, { size: number; dropped: number; oldest: number }>();
    for (let i = this.count - 1; i >= 0; i--) {
      const key = lines[i * 3]!;
      const length = lines[i * 3 + 2]! - lines[i * 3 + 1]!;
      let k = kept.get(key);
      if (!k) kept.set(key, (k = { size: 0, dropped: 0, oldest: this.count }));
      if (k.dropped === 0 && k.size + length <= this.perKeyLimitBytes) {
        k.size += length;
        k.oldest = i;
      } else k.dropped++;
    }
    // Oldest to newest: copy each key's kept lines, a run of adjacent lines at a time.
    const runs = new Map<number, { data: Buffer; offset: number; start: number; end: number }>();
    const copyRun = (run: { data: Buffer; offset: number; start: number; end: number }) => {
      run.offset += this.bytes.copy(run.data, run.offset, run.start, run.end);
    };
    for (let i = 0; i < this.count; i++) {
      const key = lines[i * 3]!;
      const k = kept.get(key)!;
      if (i < k.oldest) continue;
      const start = lines[i * 3 + 1]!;
      const end = lines[i * 3 + 2]!;
      const run = runs.get(key);
      if (!run) runs.set(key, { data: Buffer.allocUnsafe(k.size), offset: 0, start, end });
      else if (run.end === start) run.end = end;
      else {
        copyRun(run);
        run.start = start;
        run.end = end;
      }
    }
    const out = new Map<number, DrainedLog>();
    for (const [key, k] of kept) {
      const run = runs.get(key);
      if (run) copyRun(run);
      out.set(key, { data: run ? run.data : Buffer.alloc(0), dropped: k.dropped });
    }
    this.used = 0;
    this.count = 0;
    return out;
  }

  private grow(needed: number): boolean {
    if (needed > this.maxBytes) return false;
    let size = this.bytes.length * 2;
    while (size < needed) size *= 2;
    const bytes = Buffer.allocUnsafeSlow(Math.min(size, this.maxBytes));
    this.bytes.copy(bytes, 0, 0, this.used);
    this.bytes = bytes;
    return true;
  }
}
