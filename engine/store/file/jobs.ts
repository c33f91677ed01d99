import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { containedPath } from '../../contained-path';
import { ServiceError } from '../../errors';
import { isInvocationId, type InvocationRecord, type JobStore, type Tick, type TickState } from '../../jobs/records';
import { isFunctionName } from '../../manifest';
import type { Coordinator } from '../coordinator';
import { isAccountId } from '../keys';
import { queueFull } from '../quota';
import { fsyncPath, listDirs, readJsonFile, writeFileAtomic } from './fsutil';
import { invocationsDir, type QueueBroker, type QueueEntry } from './queue-broker';

/** A record as its file holds it: the body as base64. */
type StoredRecord = Omit<InvocationRecord, 'body'> & { body: string };

/** A listing reads at most this many records to find a function's newest. */
const LIST_SCAN = 2000;

/**
 * The file store's queue and schedules, in the data directory:
 * - `invocations/<account>/pending/<id>.json`: an invocation accepted and not done (queued or
 *   running), written as deploys write (aside, fsync, rename, fsync the folder) before its 202;
 * - `invocations/<account>/done/<id>.json`: a done one, written the same way before its pending
 *   file goes (a crash in between leaves both: start-up drops the pending one);
 * - `schedules/<account>/<function>.json`: each schedule's last claimed tick and its outcome,
 *   changed under the supervisor's lock of that function's schedules.
 * Which process runs which invocation is the broker's to say (engine/store/file/queue-broker.ts).
 */
export class FileJobs implements JobStore {
  private readonly root: string;
  private readonly schedulesRoot: string;
  private readonly made = new Set<string>();

  constructor(
    dataDir: string,
    private readonly broker: QueueBroker,
    private readonly coordinator: Coordinator,
  ) {
    this.root = invocationsDir(dataDir);
    this.schedulesRoot = path.join(dataDir, 'schedules');
  }

  async enqueue(record: InvocationRecord, bound: number): Promise<void> {
    if (!(await this.broker.admit(record.account, bound))) throw queueFull(record.account, bound);
    try {
      await this.write('pending', record);
    } catch (err) {
      await this.broker.cancel(record.account);
      throw err;
    }
    await this.broker.add({ id: record.id, account: record.account, runAt: record.runAt });
  }

  async claim(limit: number, perAccount: number, full: ReadonlySet<string>): Promise<InvocationRecord[]> {
    const entries = await this.broker.claim(limit, perAccount, [...full]);
    // Each claimed record is marked running (its attempt counted) on disk before it runs, all at
    // once: one after another, their fsyncs held a queue of hellos to 69 runs a second.
    const marked = await Promise.allSettled(entries.map((entry) => this.markRunning(entry)));
    const claimed: InvocationRecord[] = [];
    let failure: unknown;
    for (const result of marked) {
      if (result.status === 'rejected') failure ??= result.reason;
      else if (result.value) claimed.push(result.value);
    }
    if (claimed.length === 0 && failure !== undefined) throw failure;
    return claimed;
  }

  /** A claimed invocation's record, marked running on disk; undefined when it is gone (and the broker told). */
  private async markRunning(entry: QueueEntry): Promise<InvocationRecord | undefined> {
    const record = await this.readFrom('pending', entry.account, entry.id);
    if (!record) {
      await this.broker.finish(entry);
      return undefined;
    }
    record.status = 'running';
    record.attempts++;
    record.startedAt = Date.now();
    try {
      await this.write('pending', record);
    } catch (err) {
      await this.broker.requeue(entry);
      throw err;
    }
    return record;
  }

  async settle(record: InvocationRecord): Promise<void> {
    const entry = { id: record.id, account: record.account, runAt: record.runAt };
    if (record.status === 'queued' || record.status === 'running') {
      await this.write('pending', { ...record, status: 'queued' });
      await this.broker.requeue(entry);
      return;
    }
    await this.write('done', record);
    const pending = this.fileOf('pending', record.account, record.id);
    await fsp.rm(pending, { force: true });
    await fsyncPath(path.dirname(pending));
    await this.broker.finish(entry);
  }

  async read(account: string, id: string): Promise<InvocationRecord | undefined> {
    if (!isAccountId(account) || !isInvocationId(id)) return undefined;
    return (await this.readFrom('pending', account, id)) ?? (await this.readFrom('done', account, id));
  }

  async list(account: string, fn: string, limit: number): Promise<InvocationRecord[]> {
    if (!isAccountId(account)) return [];
    const names: { name: string; state: 'pending' | 'done' }[] = [];
    for (const state of ['pending', 'done'] as const) {
      const dir = containedPath(this.root, account, state);
      for (const name of await fsp.readdir(dir).catch(() => [] as string[])) if (name.endsWith('.json') && !name.startsWith('.')) names.push({ name, state });
    }
    // Ids begin with their time: the newest sort last.
    names.sort((a, b) => (a.name < b.name ? 1 : a.name > b.name ? -1 : 0));
    const found: InvocationRecord[] = [];
    for (const { name, state } of names.slice(0, LIST_SCAN)) {
      const record = await this.readFrom(state, account, name.slice(0, -5));
      if (record?.function !== fn) continue;
      found.push({ ...record, body: Buffer.alloc(0) });
      if (found.length >= limit) break;
    }
    return found;
  }

  async prune(keepMs: number): Promise<void> {
    const before = Date.now() - keepMs;
    for (const account of await listDirs(this.root)) {
      if (!isAccountId(account)) continue;
      const dir = path.join(this.root, account, 'done');
      for (const name of await fsp.readdir(dir).catch(() => [] as string[])) {
        const file = path.join(dir, name);
        // Benign: a record another worker pruned since the listing.
        const stat = await fsp.stat(file).catch(() => undefined);
        if (stat && stat.mtimeMs < before) await fsp.rm(file, { force: true });
      }
    }
  }

  pending(account: string): Promise<number> {
    return this.broker.pending(account);
  }

  onWork(listener: () => void): void {
    this.broker.onWork(listener);
  }

  claimTick(tick: Tick, stillServing: () => boolean): Promise<boolean> {
    return this.coordinator.withLock(tickLock(tick), async () => {
      const states = await this.readTicks(tick.account, tick.function);
      const last = states[tick.cron];
      if ((last && last.scheduledTime >= tick.scheduledTime) || !stillServing()) return false;
      states[tick.cron] = { function: tick.function, cron: tick.cron, scheduledTime: tick.scheduledTime, claimedAt: Date.now() };
      await this.writeTicks(tick.account, tick.function, states);
      return true;
    });
  }

  tickDone(tick: Tick, status: number, errorCode: string | undefined): Promise<void> {
    return this.coordinator.withLock(tickLock(tick), async () => {
      const states = await this.readTicks(tick.account, tick.function);
      const last = states[tick.cron];
      if (!last || last.scheduledTime !== tick.scheduledTime) return;
      Object.assign(last, { finishedAt: Date.now(), status, ...(errorCode ? { errorCode } : {}) });
      await this.writeTicks(tick.account, tick.function, states);
    });
  }

  /** A removed function's schedules start afresh if it comes back. */
  async forgetSchedules(account: string, fn: string): Promise<void> {
    await fsp.rm(containedPath(this.schedulesRoot, account, `${fn}.json`), { force: true });
  }

  async lastTicks(account: string): Promise<TickState[]> {
    if (!isAccountId(account)) return [];
    const dir = containedPath(this.schedulesRoot, account);
    const all: TickState[] = [];
    for (const name of await fsp.readdir(dir).catch(() => [] as string[])) {
      if (!name.endsWith('.json') || name.startsWith('.')) continue;
      const fn = name.slice(0, -5);
      if (!isFunctionName(fn)) continue;
      all.push(...Object.values(await this.readTicks(account, fn)));
    }
    return all;
  }

  private async readTicks(account: string, fn: string): Promise<Record<string, TickState>> {
    return (await readJsonFile<Record<string, TickState>>(containedPath(this.schedulesRoot, account, `${fn}.json`))) ?? {};
  }

  private async writeTicks(account: string, fn: string, states: Record<string, TickState>): Promise<void> {
    const dir = containedPath(this.schedulesRoot, account);
    await this.ensureDir(dir);
    await writeFileAtomic(containedPath(dir, `${fn}.json`), JSON.stringify(states));
  }

  private fileOf(state: 'pending' | 'done', account: string, id: string): string {
    if (!isAccountId(account) || !isInvocationId(id)) throw new ServiceError('ERR_BAD_REQUEST', `no invocation ${id}`);
    return containedPath(this.root, account, state, `${id}.json`);
  }

  private async readFrom(state: 'pending' | 'done', account: string, id: string): Promise<InvocationRecord | undefined> {
    if (!isInvocationId(id)) return undefined;
    // No such file is no such record (readJsonFile answers undefined); a file that cannot be read is an error, not a 404.
    const stored = await readJsonFile<StoredRecord>(this.fileOf(state, account, id));
    return stored && { ...stored, body: Buffer.from(stored.body ?? '', 'base64') };
  }

  private async write(state: 'pending' | 'done', record: InvocationRecord): Promise<void> {
    const file = this.fileOf(state, record.account, record.id);
    await this.ensureDir(path.dirname(file));
    // A done record keeps no request body: only its result is read again.
    const stored: StoredRecord = { ...record, body: state === 'done' ? '' : record.body.toString('base64') };
    await writeFileAtomic(file, JSON.stringify(stored));
  }

  private async ensureDir(dir: string): Promise<void> {
    if (this.made.has(dir)) return;
    await fsp.mkdir(dir, { recursive: true });
    // The folders' own entries must be durable too before a record in them counts.
    await fsyncPath(path.dirname(dir));
    await fsyncPath(path.dirname(path.dirname(dir)));
    this.made.add(dir);
  }
}

function tickLock(tick: Tick): string {
  return `schedule:${tick.account}/${tick.function}`;
}
