import { promises as fsp } from 'node:fs';
import type { LogEntry } from './logs';

/**
 * A file is known by its inode and its first bytes: after two rotations the newest file may get
 * the inode of one that was deleted, but not its first line (each starts with a time and an id).
 */
const HEAD_BYTES = 64;

/** Where one log file was read up to. */
interface Cursor {
  ino: number;
  head: Buffer;
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
      const read = await withFile(file, (f) => f.readFrom(0));
      if (!read) continue;
      if (!file.endsWith('.1')) this.cursors.set(file, read.cursor);
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
      const read = await withFile(file, async (f) => {
        if (cursor && f.ino === cursor.ino && f.size === cursor.offset) return undefined;
        if (cursor && f.size >= cursor.offset && (await f.startsWith(cursor))) return f.readFrom(cursor.offset);
        if (cursor) {
          // Rotated since the last read: the rest of the old file is now `<file>.1`.
          const old = await withFile(`${file}.1`, async (o) => ((await o.startsWith(cursor)) ? o.readFrom(cursor.offset) : undefined));
          if (old) entries.push(...parse(old.text));
          else gap = true;
        }
        return f.readFrom(0);
      });
      if (!read) continue;
      this.cursors.set(file, read.cursor);
      entries.push(...parse(read.text));
    }
    return { entries: sortByTime(entries), gap };
  }
}

interface OpenLog {
  ino: number;
  size: number;
  /** Whether this is the file `cursor` was reading (same inode, same first bytes). */
  startsWith(cursor: Cursor): Promise<boolean>;
  /** The whole lines from `offset` on (a line still being appended is left for the next read), and the cursor after them. */
  readFrom(offset: number): Promise<{ text: string; cursor: Cursor }>;
}

/** Runs `use` on an open log file; undefined when the file does not exist (any more). */
async function withFile<T>(file: string, use: (f: OpenLog) => Promise<T | undefined>): Promise<T | undefined> {
  let handle: fsp.FileHandle;
  try {
    handle = await fsp.open(file, 'r');
  } catch {
    return undefined;
  }
  try {
    const { ino, size } = await handle.stat();
    const readHead = async (length: number) => {
      const head = Buffer.alloc(Math.min(length, size));
      await handle.read(head, 0, head.length, 0);
      return head;
    };
    return await use({
      ino,
      size,
      startsWith: async (cursor) => cursor.ino === ino && (await readHead(cursor.head.length)).equals(cursor.head),
      readFrom: async (offset) => {
        const head = await readHead(HEAD_BYTES);
        if (size <= offset) return { text: '', cursor: { ino, head, offset } };
        const buffer = Buffer.allocUnsafe(size - offset);
        const { bytesRead } = await handle.read(buffer, 0, buffer.length, offset);
        const end = buffer.lastIndexOf(0x0a, bytesRead - 1) + 1;
        return { text: buffer.toString('utf8', 0, end), cursor: { ino, head, offset: offset + end } };
      },
    });
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
