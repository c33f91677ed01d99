import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { containedPath } from './contained-path';
import { LogArena, type DrainedLog } from './log-arena';
import { accountLogNames, AccountLogBytes } from './log-quota';
import { backgroundFailed } from './server-log';

/**
 * One line of a function's logs: console output, the summary of a call (`level: 'call'`), or a
 * failed call's error (`level: 'error'` with its `code` and the user's `stack`).
 */
export interface LogEntry {
  /** Milliseconds since the epoch. */
  t: number;
  requestId: string;
  level: string;
  message: string;
  /** The node that wrote it, when logs come from several nodes. */
  node?: string;
  /** A failed call's error code (ERR_FUNCTION_FAILED, ERR_TIMEOUT…). */
  code?: string;
  /** A failed call's stack: the user's frames only. */
  stack?: string;
}

/** Where a function's logs are read from: this process's files, or every node's (supervisor/cluster-logs.ts). */
export interface LogReader {
  /** `apiKey` is the caller's, for reading other nodes on its behalf. */
  read(account: string, name: string, query: LogQuery, apiKey?: string): Promise<LogEntry[]>;
  /** With several nodes, only the other nodes' entries (live views follow this node's files themselves). */
  readOthers?(account: string, name: string, query: LogQuery, apiKey?: string): Promise<LogEntry[]>;
}

export interface LogQuery {
  /** Only entries at or after this time (ms since the epoch). */
  since?: number;
  limit?: number;
  /** Only entries at this level or a more severe one (see LOG_LEVELS). */
  level?: string;
}

/**
 * Levels by severity, for `level` filters: `--level warn` shows warnings and errors. Call lines
 * rank with info (console.log's level is `log`, console.info's `info`).
 */
export const LOG_LEVELS: Record<string, number> = { debug: 10, log: 20, info: 20, call: 20, warn: 30, error: 40 };

const FILE_LIMIT_BYTES = 1024 * 1024;
const FLUSH_MS = 250;
/** A batch keeps each function's newest lines that fit one file (with room for the drop notice). */
const BATCH_LIMIT_BYTES = FILE_LIMIT_BYTES - 512;
/** Pending lines of all functions together; a full arena is written at once. */
const ARENA_MAX_BYTES = 8 * 1024 * 1024;
/** Files appended at the same time during a flush (each append is an open, a write and a close). */
const WRITE_CONCURRENCY = 8;

export interface LogStoreOptions {
  /** Pending lines of all functions together before a write is forced (default 8 MB). */
  arenaBytes?: number;
  /**
   * This process's number among the processes writing the same folder (workers): it writes
   * `<name>.<writer>.log`, and reads merge every writer's files. Alone, it writes `<name>.log`.
   */
  writer?: number;
  /** Run before a read: the other writers write what they have pending. */
  beforeRead?: () => Promise<void>;
}

/**
 * Per-function logs, kept on disk as JSON lines: `logs/<account>/<name>.log` plus one rotated
 * `.log.1`, so each function keeps at most ~2 MB per writing process, and each account its share
 * of its log quota (`limitAccounts`). Writes are batched and appended every 250 ms
 * (sooner when 8 MB are pending); a function's burst beyond what fits one file drops the oldest
 * lines of its batch and records how many. One batch is written at a time, several files at once;
 * when the disk falls behind, lines wait in the arena, and those that do not fit there are
 * dropped and counted, so memory stays bounded.
 */
export class LogStore implements LogReader {
  private readonly root: string;
  private readonly pending: LogArena;
  /** Function keys (`account/name`) by the number the arena knows them by, and back. */
  private readonly keyIds = new Map<string, number>();
  private readonly keys: string[] = [];
  private readonly sizes = new Map<string, number>();
  /** Lines refused by a full arena while a batch was being written, or over a function's share of it, by key id. */
  private readonly overflow = new Map<number, number>();
  /**
   * Bytes (as the arena counts them) each function has pending, by key id: a function past what
   * one batch keeps of it has its further lines dropped and counted, so that one function's burst
   * cannot fill the arena that every function's lines share.
   */
  private pendingBytes = new Float64Array(64);
  private timer: NodeJS.Timeout | undefined;
  /** Lines dropped so far (bursts over what fits, or a backlog when the disk fell behind). */
  droppedLines = 0;
  /** The batch being written, if one is. */
  private writing: Promise<void> | undefined;
  /** The flush waiting for that write to end; it drains the arena when it starts. */
  private queued: Promise<void> | undefined;

  private readonly suffix: string;
  private readonly perKeyLimit: number;
  /** Each account's share of its log quota in this process, in bytes (undefined: no bound). */
  private shareOf: ((account: string) => number | undefined) | undefined;
  private readonly accountBytes: AccountLogBytes;

  constructor(
    dataDir: string,
    private readonly options: LogStoreOptions = {},
  ) {
    const arenaBytes = options.arenaBytes ?? ARENA_MAX_BYTES;
    this.root = path.join(dataDir, 'logs');
    this.perKeyLimit = Math.min(BATCH_LIMIT_BYTES, arenaBytes);
    this.pending = new LogArena(arenaBytes, this.perKeyLimit);
    this.suffix = options.writer === undefined ? '.log' : `.${options.writer}.log`;
    const own = new RegExp(`^[^.]+${this.suffix.replace(/\./g, '\\.')}(\\.1)?$`);
    this.accountBytes = new AccountLogBytes(this.root, (file) => own.test(file));
  }

  /**
   * Holds every account's log files to `shareOf(account)` bytes in this process (its part of the
   * account's quota): past it, the account's oldest files are deleted, and each file is rotated at
   * half of it at most.
   */
  limitAccounts(shareOf: (account: string) => number | undefined): void {
    this.shareOf = shareOf;
  }

  /** Counts a line of `key` (`account/name`) that was dropped before it got here; its next batch says how many. */
  countDropped(key: string): void {
    this.overflow.set(this.idOf(key), (this.overflow.get(this.idOf(key)) ?? 0) + 1);
    this.timer ??= setTimeout(() => void this.flush(), FLUSH_MS);
  }

  append(account: string, name: string, entry: LogEntry): void {
    this.appendLine(`${account}/${name}`, JSON.stringify(entry));
  }

  /**
   * Appends an entry already written as one line of JSON (a LogEntry) to the logs of `key`,
   * `account/name` (on the call path: a key string kept by the caller is hashed only once).
   */
  appendLine(key: string, line: string): void {
    const id = this.idOf(key);
    const bytes = line.length + 1;
    if (this.pendingBytes[id]! + bytes > this.perKeyLimit) {
      this.overflow.set(id, (this.overflow.get(id) ?? 0) + 1);
      this.timer ??= setTimeout(() => void this.flush(), FLUSH_MS);
      return;
    }
    if (this.pending.add(id, line)) this.pendingBytes[id]! += bytes;
    else {
      // Full. With no write in progress, write what is pending now and keep the line (lines are
      // far smaller than the arena); while one is, the line is dropped and counted.
      if (this.writing === undefined && this.queued === undefined) {
        void this.drainNow();
        this.pending.add(id, line);
        this.pendingBytes[id] = bytes;
      } else {
        this.overflow.set(id, (this.overflow.get(id) ?? 0) + 1);
        void this.flush();
      }
    }
    this.timer ??= setTimeout(() => void this.flush(), FLUSH_MS);
  }

  /**
   * Writes every line appended so far. The flushes asked for while a batch is being written are
   * one: it drains the arena when that write ends.
   */
  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.queued ??= (this.writing ?? Promise.resolve()).then(() => {
      this.queued = undefined;
      return this.drainNow();
    });
    return this.queued;
  }

  /** The number the arena knows a function's lines by. */
  private idOf(key: string): number {
    let id = this.keyIds.get(key);
    if (id === undefined) {
      id = this.keys.push(key) - 1;
      this.keyIds.set(key, id);
      if (id >= this.pendingBytes.length) {
        const grown = new Float64Array(this.pendingBytes.length * 2);
        grown.set(this.pendingBytes);
        this.pendingBytes = grown;
      }
    }
    return id;
  }

  /** Takes the pending lines and writes them, several files at once (only when no write is in progress). */
  private drainNow(): Promise<void> {
    const batches = this.pending.drain();
    this.pendingBytes.fill(0);
    for (const [id, count] of this.overflow) {
      const batch = batches.get(id);
      if (batch) batch.dropped += count;
      else batches.set(id, { data: Buffer.alloc(0), dropped: count });
    }
    this.overflow.clear();
    const queue = [...batches];
    const worker = async (): Promise<void> => {
      for (let next = queue.pop(); next; next = queue.pop()) await this.write(this.keys[next[0]]!, next[1]);
    };
    const writing = Promise.all(Array.from({ length: Math.min(WRITE_CONCURRENCY, queue.length) }, worker)).then(() => {
      this.writing = undefined;
    });
    this.writing = writing;
    return writing;
  }

  /** The entries of a function from every writer, oldest first. */
  async read(account: string, name: string, query: LogQuery = {}): Promise<LogEntry[]> {
    const minLevel = query.level === undefined ? 0 : (LOG_LEVELS[query.level] ?? 0);
    // Without the other workers' pending lines (the supervisor is going away), the read has what is written.
    await Promise.all([this.flush(), this.options.beforeRead?.().catch((err: unknown) => backgroundFailed('log-flush', err, "the other workers' pending log lines were not written before a read"))]);
    const lists: LogEntry[][] = [];
    for (const file of await this.filesOf(account, name)) {
      let text: string;
      try {
        text = await fsp.readFile(file, 'utf8');
      } catch {
        continue;
      }
      const entries: LogEntry[] = [];
      for (const line of text.split('\n')) {
        if (!line) continue;
        try {
          const entry = JSON.parse(line) as LogEntry;
          if ((query.since === undefined || entry.t >= query.since) && (minLevel === 0 || (LOG_LEVELS[entry.level] ?? 20) >= minLevel)) entries.push(entry);
        } catch {
          // a torn last line after a crash
        }
      }
      lists.push(entries);
    }
    // Each writer's lines are in order; a stable sort by time interleaves the writers.
    const entries = lists.length === 1 ? lists[0]! : lists.flat().sort((a, b) => a.t - b.t);
    return query.limit !== undefined ? entries.slice(-query.limit) : entries;
  }

  async remove(account: string, name: string): Promise<void> {
    const key = `${account}/${name}`;
    await this.flush();
    this.sizes.delete(key);
    this.accountBytes.forget(account);
    for (const file of await this.filesOf(account, name)) await fsp.rm(file, { force: true });
  }

  /** The function's log files of every writer, each rotated one before the current one. */
  async filesOf(account: string, name: string): Promise<string[]> {
    const dir = containedPath(this.root, account);
    const names = await accountLogNames(this.root, account);
    // Function names have no dots: `<name>.log`, `<name>.<writer>.log`, and `.1` after either.
    const own = names.filter((f) => f.startsWith(`${name}.`) && /^\.(\d+\.)?log(\.1)?$/.test(f.slice(name.length))).sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
    return own.map((f) => containedPath(dir, f));
  }

  /** `<root>/<account>/<name><suffix>` for the key `account/name`. */
  private file(key: string): string {
    const slash = key.indexOf('/');
    return containedPath(this.root, key.slice(0, slash), `${key.slice(slash + 1)}${this.suffix}`);
  }

  private async write(key: string, batch: DrainedLog): Promise<void> {
    const account = key.slice(0, key.indexOf('/'));
    const share = this.shareOf?.(account);
    const fileLimit = share === undefined ? FILE_LIMIT_BYTES : AccountLogBytes.fileLimit(share, FILE_LIMIT_BYTES);
    let { data, dropped } = batch;
    if (data.length > fileLimit - 512) ({ data, dropped } = newestLines(data, fileLimit - 512, dropped));
    this.droppedLines += dropped;
    if (dropped) {
      const notice = JSON.stringify({ t: Date.now(), requestId: '', level: 'warn', message: `${dropped} log lines dropped (more than fit in ${FLUSH_MS} ms, or the disk fell behind)` });
      data = Buffer.concat([data, Buffer.from(`${notice}\n`)]);
    }
    try {
      const file = this.file(key);
      if (share !== undefined) await this.accountBytes.total(account);
      let added = data.length;
      let size = this.sizes.get(key);
      if (size === undefined)
        size = await fsp.stat(file).then(
          (s) => s.size,
          () => 0,
        );
      if (size + data.length > fileLimit) {
        // The rotated file the rename replaces no longer counts.
        if (share !== undefined)
          added -= await fsp.stat(`${file}.1`).then(
            (s) => s.size,
            () => 0,
          );
        // A file the account's quota just deleted has nothing to rotate; one that cannot be renamed grows on.
        await fsp.rename(file, `${file}.1`).catch((err: NodeJS.ErrnoException) => {
          if (err.code !== 'ENOENT') backgroundFailed('log-write', err, `the log file of ${key} was not rotated`);
        });
        size = 0;
      }
      // The folder is made only when the append finds it missing (the first write, or after an
      // account's removal), not before every write: with 1,000 busy functions that is a write each
      // per function every 250 ms.
      await fsp.appendFile(file, data).catch(async (err: NodeJS.ErrnoException) => {
        if (err.code !== 'ENOENT') throw err;
        await fsp.mkdir(path.dirname(file), { recursive: true });
        await fsp.appendFile(file, data);
      });
      this.sizes.set(key, size + data.length);
      if (share !== undefined) {
        this.accountBytes.add(account, added);
        if ((await this.accountBytes.total(account)) > share) {
          for (const gone of await this.accountBytes.trim(account, share, file)) {
            const name = path.basename(gone);
            if (name.endsWith(this.suffix)) this.sizes.delete(`${account}/${name.slice(0, -this.suffix.length)}`);
          }
        }
      }
    } catch (err) {
      // Logs are best effort: a full disk must not fail invocations; it is logged and counted.
      backgroundFailed('log-write', err, `${data.length} bytes of log lines of ${key} were not written`);
    }
  }
}

/** The newest whole lines of `data` that fit in `max` bytes, and how many were left out (besides `dropped`). */
function newestLines(data: Buffer, max: number, dropped: number): { data: Buffer; dropped: number } {
  let cut = data.indexOf(10, data.length - max - 1) + 1;
  if (cut === 0) cut = data.length;
  let left = 0;
  for (let i = data.indexOf(10); i !== -1 && i < cut; i = data.indexOf(10, i + 1)) left++;
  return { data: data.subarray(cut), dropped: dropped + left };
}

/** Rotated files (`.1`) before current ones, so that one writer's lines stay in order. */
function rank(file: string): number {
  return file.endsWith('.1') ? 0 : 1;
}
