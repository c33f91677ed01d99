import { promises as fsp } from 'node:fs';
import type { LogEntry } from './logs';

/** Where one log file was read up to. */
interface Cursor {
  ino: number;
  /** Bytes consumed: always just after a newline. */
  offset: number;
}

/**
 * Follows a function's logs as they are written, for live views: every process that writes them
 * (each worker has its own file) appends whole lines every 250 ms, so new lines are found by
 * reading each file from where the last read ended. A rotated file (renamed to `.1`, a new one
 * started) is read to its end before the new one. Nothing is kept in memory but a cursor per file,
 * and nothing is added to the call path: a server whose logs nobody follows does no more work.
 */
export class LogFollower {
  private readonly cursors = new Map<string, Cursor>();

  constructor(
    /** The function's log files, rotated ones (`.1`) included. */
    private readonly files: () => Promise<string[]>,
  ) {}

  /**
   * Starts following: answers the newest `backlog` entries written so far (at or after `since`,
   * when given) and places the cursors after them.
   */
  async start(backlog: number, since?: number): Promise<LogEntry[]> {
    const entries: LogEntry[] = [];
    for (const file of await this.files()) {
      const rotated = file.endsWith('.1');
      const read = await readFrom(file, 0);
      if (!read) continue;
      if (!rotated) this.cursors.set(file, { ino: read.ino, offset: read.consumed });
      if (backlog > 0) entries.push(...parse(read.text, since));
    }
    return backlog > 0 ? sortByTime(entries).slice(-backlog) : [];
  }

  /**
   * The entries written since the last read, oldest first. `gap` is set when a file rotated twice
   * since then (over 1 MB of one writer's lines between two reads), so some lines were not seen.
   */
  async read(): Promise<{ entries: LogEntry[]; gap: boolean }> {
    const entries: LogEntry[] = [];
    let gap = false;
    for (const file of await this.files()) {
      if (file.endsWith('.1')) continue;
      const cursor = this.cursors.get(file);
      const stat = await fsp.stat(file).catch(() => undefined);
      if (!stat) continue;
      if (cursor && cursor.ino === stat.ino && stat.size === cursor.offset) continue;
      if (cursor && cursor.ino !== stat.ino) {
        // Rotated since the last read: the rest of the old file is now `<file>.1`.
        const old = await readFrom(`${file}.1`, cursor.offset);
        if (old && old.ino === cursor.ino) entries.push(...parse(old.text));
        else gap = true;
      }
      const from = cursor && cursor.ino === stat.ino && stat.size >= cursor.offset ? cursor.offset : 0;
      const read = await readFrom(file, from);
      if (!read) continue;
      this.cursors.set(file, { ino: read.ino, offset: from + read.consumed });
      entries.push(...parse(read.text));
    }
    return { entries: sortByTime(entries), gap };
  }
}

/** The whole lines of a file from `offset` on, and how many bytes they are (undefined when it is gone). */
async function readFrom(file: string, offset: number): Promise<{ ino: number; text: string; consumed: number } | undefined> {
  let handle: fsp.FileHandle;
  try {
    handle = await fsp.open(file, 'r');
  } catch {
    return undefined;
  }
  try {
    const { ino, size } = await handle.stat();
    if (size <= offset) return { ino, text: '', consumed: 0 };
    const buffer = Buffer.allocUnsafe(size - offset);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, offset);
    // A line still being appended is left for the next read.
    const end = buffer.lastIndexOf(0x0a, bytesRead - 1) + 1;
    return { ino, text: buffer.toString('utf8', 0, end), consumed: end };
  } finally {
    await handle.close();
  }
}

function parse(text: string, since?: number): LogEntry[] {
  const entries: LogEntry[] = [];
  for (const line of text.split('\n')) {
    if (!line) continue;
    try {
      const entry = JSON.parse(line) as LogEntry;
      if (since === undefined || entry.t >= since) entries.push(entry);
    } catch {
      // a torn line after a crash
    }
  }
  return entries;
}

/** Each writer's lines are in order; a stable sort by time interleaves the writers. */
function sortByTime(entries: LogEntry[]): LogEntry[] {
  return entries.sort((a, b) => a.t - b.t);
}
