import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import type { InvocationRecord } from '../../jobs/records';
import { isAccountId } from '../keys';
import { listDirs, readJsonFile, writeFileAtomic } from './fsutil';
import { serverLog } from '../../server-log';

/** An invocation as the broker tracks it: enough to hand it out fairly, no body. */
export interface QueueEntry {
  id: string;
  account: string;
  runAt: number;
}

/**
 * The index of the file store's queue: which invocations wait, which run and for whom. The records
 * themselves are files (engine/store/file/jobs.ts); the broker only decides who runs what, so that
 * no two processes take the same invocation. With `islet serve` it lives in the supervisor and the
 * workers reach it over IPC (supervisor/queue.ts), which also hands back the invocations of a
 * worker that exits; a process alone holds its own. Every call is asynchronous for that reason.
 */
export interface QueueBroker {
  /** Reserves a place for one more invocation of `account`; false when it has `bound` already. */
  admit(account: string, bound: number): Promise<boolean>;
  /** Lets go of a reservation whose record could not be written. */
  cancel(account: string): Promise<void>;
  /** A reserved invocation's record is on disk: it waits from now on. */
  add(entry: QueueEntry): Promise<void>;
  /** Up to `limit` invocations due now, at most `perAccount` of one account, none of `full`'s, accounts in turn. */
  claim(limit: number, perAccount: number, full: string[]): Promise<QueueEntry[]>;
  /** A claimed invocation waits again (a retry, or a run that was refused for now). */
  requeue(entry: QueueEntry): Promise<void>;
  /** A claimed invocation is done. */
  finish(entry: QueueEntry): Promise<void>;
  /** Invocations of `account` queued or running. */
  pending(account: string): Promise<number>;
  /** Heard when invocations may be waiting (added, or requeued). */
  onWork(listener: () => void): void;
}

interface AccountQueue {
  /** Waiting, by `runAt` then id. */
  ready: QueueEntry[];
  /** Running, by id, with the owner that took them. */
  running: Map<string, { entry: QueueEntry; owner: string }>;
  reserved: number;
}

/** The invocations' folder of the data directory. */
export function invocationsDir(dataDir: string): string {
  return path.join(dataDir, 'invocations');
}

/**
 * The broker itself, in the memory of one process (the supervisor, or a process alone). `owner`
 * names who claims (a worker); `ownerGone` hands an owner's running invocations back to the queue.
 */
export class MemoryQueueBroker {
  private readonly accounts = new Map<string, AccountQueue>();
  /** Where the next claim starts among the accounts, so that each gets its turn. */
  private turn = 0;
  private readonly listeners: (() => void)[] = [];

  /**
   * Reads what waits from the data directory: every pending record (a process starting alone on
   * it: whatever was running then was cut short, and waits again). A pending record whose done
   * record exists was finished just before a crash: the pending one goes.
   */
  async open(dataDir: string): Promise<void> {
    const root = invocationsDir(dataDir);
    for (const account of await listDirs(root)) {
      if (!isAccountId(account)) continue;
      const pendingDir = path.join(root, account, 'pending');
      let names: string[] = [];
      try {
        names = await fsp.readdir(pendingDir);
      } catch {
        continue;
      }
      for (const name of names) {
        if (!name.endsWith('.json') || name.startsWith('.')) {
          if (name.startsWith('.tmp-')) await fsp.rm(path.join(pendingDir, name), { force: true });
          continue;
        }
        const file = path.join(pendingDir, name);
        const done = await fsp.stat(path.join(root, account, 'done', name)).then(
          () => true,
          () => false,
        );
        if (done) {
          await fsp.rm(file, { force: true });
          continue;
        }
        // Records are written by atomic renames: one that cannot be read is left where it is, and said.
        const record = await readJsonFile<Omit<InvocationRecord, 'body'>>(file).catch((err: unknown) => {
          serverLog.error({ code: 'ERR_INTERNAL', file, err }, `the queued invocation ${file} cannot be read; it is not run`);
          return undefined;
        });
        if (!record || record.account !== account) continue;
        if (record.status === 'running') await writeFileAtomic(file, JSON.stringify({ ...record, status: 'queued' }));
        this.insert(this.queueOf(account), { id: record.id, account, runAt: record.runAt });
      }
    }
  }

  admit(account: string, bound: number): boolean {
    const queue = this.queueOf(account);
    if (queue.ready.length + queue.running.size + queue.reserved >= bound) return false;
    queue.reserved++;
    return true;
  }

  cancel(account: string): void {
    const queue = this.queueOf(account);
    queue.reserved = Math.max(0, queue.reserved - 1);
  }

  add(entry: QueueEntry): void {
    const queue = this.queueOf(entry.account);
    queue.reserved = Math.max(0, queue.reserved - 1);
    this.insert(queue, entry);
    this.wake();
  }

  claim(owner: string, limit: number, perAccount: number, full: readonly string[], now = Date.now()): QueueEntry[] {
    const taken: QueueEntry[] = [];
    const accounts = [...this.accounts.keys()];
    if (accounts.length === 0 || limit <= 0) return taken;
    const skip = new Set(full);
    const counts = new Map<string, number>();
    // One invocation per account per round, starting where the last claim left off.
    for (let progress = true; progress && taken.length < limit; ) {
      progress = false;
      for (let i = 0; i < accounts.length && taken.length < limit; i++) {
        const account = accounts[(this.turn + i) % accounts.length]!;
        if (skip.has(account) || (counts.get(account) ?? 0) >= perAccount) continue;
        const queue = this.accounts.get(account)!;
        const next = queue.ready[0];
        if (!next || next.runAt > now) continue;
        queue.ready.shift();
        queue.running.set(next.id, { entry: next, owner });
        counts.set(account, (counts.get(account) ?? 0) + 1);
        taken.push(next);
        progress = true;
      }
    }
    this.turn = (this.turn + 1) % Math.max(1, accounts.length);
    return taken;
  }

  requeue(entry: QueueEntry): void {
    const queue = this.queueOf(entry.account);
    queue.running.delete(entry.id);
    this.insert(queue, entry);
    this.wake();
  }

  finish(entry: QueueEntry): void {
    const queue = this.accounts.get(entry.account);
    if (!queue) return;
    queue.running.delete(entry.id);
    this.forgetIfEmpty(entry.account, queue);
  }

  pending(account: string): number {
    const queue = this.accounts.get(account);
    return queue ? queue.ready.length + queue.running.size : 0;
  }

  /** An owner went away (a worker exited): what it was running waits again, at once. */
  ownerGone(owner: string): number {
    let handedBack = 0;
    for (const queue of this.accounts.values()) {
      for (const [id, held] of queue.running) {
        if (held.owner !== owner) continue;
        queue.running.delete(id);
        this.insert(queue, { ...held.entry, runAt: Date.now() });
        handedBack++;
      }
    }
    if (handedBack > 0) this.wake();
    return handedBack;
  }

  onWork(listener: () => void): void {
    this.listeners.push(listener);
  }

  /** This broker as a process alone on the data directory sees it. */
  local(owner = 'local'): QueueBroker {
    return {
      admit: async (account, bound) => this.admit(account, bound),
      cancel: async (account) => this.cancel(account),
      add: async (entry) => this.add(entry),
      claim: async (limit, perAccount, full) => this.claim(owner, limit, perAccount, full),
      requeue: async (entry) => this.requeue(entry),
      finish: async (entry) => this.finish(entry),
      pending: async (account) => this.pending(account),
      onWork: (listener) => this.onWork(listener),
    };
  }

  private wake(): void {
    for (const listener of this.listeners) listener();
  }

  private queueOf(account: string): AccountQueue {
    let queue = this.accounts.get(account);
    if (!queue) this.accounts.set(account, (queue = { ready: [], running: new Map(), reserved: 0 }));
    return queue;
  }

  private forgetIfEmpty(account: string, queue: AccountQueue): void {
    if (queue.ready.length === 0 && queue.running.size === 0 && queue.reserved === 0) this.accounts.delete(account);
  }

  /** Inserts in `runAt` order (most arrive due now, so at the end: a search from the back is short). */
  private insert(queue: AccountQueue, entry: QueueEntry): void {
    let i = queue.ready.length;
    while (i > 0 && queue.ready[i - 1]!.runAt > entry.runAt) i--;
    queue.ready.splice(i, 0, entry);
  }
}

/**
 * The broker of a process alone on a data directory: its own, read from the directory on first
 * use (a short-lived process, such as `islet account create`, never reads it).
 */
export function localBroker(dataDir: string): QueueBroker {
  const broker = new MemoryQueueBroker();
  let opened: Promise<void> | undefined;
  const ready = () => (opened ??= broker.open(dataDir));
  const local = broker.local();
  return {
    admit: async (account, bound) => (await ready(), local.admit(account, bound)),
    cancel: async (account) => (await ready(), local.cancel(account)),
    add: async (entry) => (await ready(), local.add(entry)),
    claim: async (limit, perAccount, full) => (await ready(), local.claim(limit, perAccount, full)),
    requeue: async (entry) => (await ready(), local.requeue(entry)),
    finish: async (entry) => (await ready(), local.finish(entry)),
    pending: async (account) => (await ready(), local.pending(account)),
    onWork: (listener) => local.onWork(listener),
  };
}
