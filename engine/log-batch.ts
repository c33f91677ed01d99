const CHUNK_BYTES = 64 * 1024;
/** Chunks kept for reuse once written: allocating fresh ones at this rate costs the collector. */
const spareChunks: Buffer[] = [];
const MAX_SPARE_CHUNKS = 64;

interface Chunk {
  bytes: Buffer;
  used: number;
  lines: number;
}

/**
 * Log lines waiting for the next write, kept as UTF-8 in off-heap chunks: a line's string dies at
 * once instead of living through several garbage collections until the write (at tens of
 * thousands of calls per second, those survivors made the collector's pauses the slowest part of a
 * call). When the batch holds more than `limitBytes`, its oldest chunks are dropped and counted.
 */
export class LogBatch {
  private chunks: Chunk[] = [];
  private size = 0;
  /** Lines dropped to keep the batch under its limit. */
  dropped = 0;

  constructor(private readonly limitBytes: number) {}

  add(line: string): void {
    const room = line.length * 3 + 1;
    let last = this.chunks[this.chunks.length - 1];
    if (!last || last.bytes.length - last.used < room) {
      const bytes = room <= CHUNK_BYTES ? (spareChunks.pop() ?? Buffer.allocUnsafeSlow(CHUNK_BYTES)) : Buffer.allocUnsafeSlow(room);
      last = { bytes, used: 0, lines: 0 };
      this.chunks.push(last);
    }
    const written = last.bytes.write(line, last.used, 'utf8');
    last.bytes[last.used + written] = 0x0a;
    last.used += written + 1;
    last.lines++;
    this.size += written + 1;
    while (this.size > this.limitBytes && this.chunks.length > 1) {
      const oldest = this.chunks.shift()!;
      this.size -= oldest.used;
      this.dropped += oldest.lines;
      recycle(oldest.bytes);
    }
  }

  /** Takes the pending lines as one buffer of newline-terminated JSON lines; the batch is spent. */
  take(): Buffer {
    const data = Buffer.concat(
      this.chunks.map((c) => c.bytes.subarray(0, c.used)),
      this.size,
    );
    for (const c of this.chunks) recycle(c.bytes);
    this.chunks = [];
    this.size = 0;
    return data;
  }
}

function recycle(bytes: Buffer): void {
  if (bytes.length === CHUNK_BYTES && spareChunks.length < MAX_SPARE_CHUNKS) spareChunks.push(bytes);
}
