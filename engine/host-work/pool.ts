import * as path from 'node:path';
import { Worker } from 'node:worker_threads';
import { OpError } from '../capabilities/errors';
import type { HostTask, HostTaskAnswer, ThreadReply } from './task';

/**
 * Threads of islet's own for functions' host work (crypto, compression, key derivation), so that
 * none of it runs on the server's thread or in libuv's pool, where the server's file and DNS work
 * would wait behind it. Each account may hold at most its share of the threads; accounts with work
 * waiting take turns. A task runs within a deadline (the function's timeout): past it, its thread
 * is terminated and replaced, and the task fails. Threads start on first use and stop after a
 * while without work, so a server whose functions do none pays nothing.
 */
export interface HostWorkOptions {
  /** Threads in the pool. */
  threads: number;
  /** Threads one account may hold at once (default: half the pool, at least one). */
  accountShare?: number;
  /** Tasks one account may have waiting; past it, new ones fail at once. */
  maxQueuedPerAccount?: number;
  /** A thread without work for this long stops (ms). */
  idleMs?: number;
  /** The script a thread runs (default: thread.js beside this file). */
  script?: string;
}

/** Why a task did not run to its end, as data (`code`); the sandboxes make their own errors of it. */
export class HostWorkError extends Error {
  constructor(
    readonly code: 'ERR_HOST_WORK_TIMEOUT' | 'ERR_HOST_WORK_OVERLOADED' | 'ERR_HOST_WORK_FAILED' | 'ERR_HOST_WORK_CLOSED',
    message: string,
  ) {
    super(message);
  }
}

interface Job {
  account: string;
  task: HostTask;
  deadline: number;
  timeoutMs: number;
  resolve(answer: HostTaskAnswer): void;
  reject(err: Error): void;
}

interface Slot {
  worker: Worker | undefined;
  job: Job | undefined;
  timer: NodeJS.Timeout | undefined;
  idle: NodeJS.Timeout | undefined;
}

interface AccountQueue {
  waiting: Job[];
  running: number;
}

export interface HostWorkStats {
  threads: number;
  started: number;
  busy: number;
  queued: number;
  /** Tasks stopped at their deadline (their thread was replaced). */
  timedOut: number;
}

export class HostWorkPool {
  private readonly slots: Slot[];
  private readonly accounts = new Map<string, AccountQueue>();
  /** Accounts with work waiting, in the order they take turns. */
  private turn: string[] = [];
  private readonly share: number;
  private readonly maxQueued: number;
  private readonly idleMs: number;
  private readonly script: string;
  private closed = false;
  private timedOut = 0;

  constructor(options: HostWorkOptions) {
    const threads = Math.max(1, Math.floor(options.threads));
    this.slots = Array.from({ length: threads }, () => ({ worker: undefined, job: undefined, timer: undefined, idle: undefined }));
    this.share = Math.max(1, Math.min(threads, options.accountShare ?? Math.ceil(threads / 2)));
    this.maxQueued = options.maxQueuedPerAccount ?? 256;
    this.idleMs = options.idleMs ?? 60_000;
    this.script = options.script ?? path.join(__dirname, 'thread.js');
  }

  /** Runs `task` for `account` on a thread of the pool, within `timeoutMs` from now (waiting included). */
  run(account: string, task: HostTask, timeoutMs: number): Promise<HostTaskAnswer> {
    if (this.closed) return Promise.reject(new HostWorkError('ERR_HOST_WORK_CLOSED', 'the server is shutting down'));
    let queue = this.accounts.get(account);
    if (!queue) this.accounts.set(account, (queue = { waiting: [], running: 0 }));
    if (queue.waiting.length >= this.maxQueued) {
      return Promise.reject(new HostWorkError('ERR_HOST_WORK_OVERLOADED', `the account has ${queue.waiting.length} host operations waiting (limit ${this.maxQueued})`));
    }
    return new Promise<HostTaskAnswer>((resolve, reject) => {
      queue.waiting.push({ account, task, deadline: Date.now() + timeoutMs, timeoutMs, resolve, reject });
      if (queue.waiting.length === 1) this.turn.push(account);
      this.dispatch();
    });
  }

  stats(): HostWorkStats {
    let started = 0;
    let busy = 0;
    for (const slot of this.slots) {
      if (slot.worker) started++;
      if (slot.job) busy++;
    }
    let queued = 0;
    for (const queue of this.accounts.values()) queued += queue.waiting.length;
    return { threads: this.slots.length, started, busy, queued, timedOut: this.timedOut };
  }

  /** Fails the waiting tasks and stops every thread (running tasks fail too). */
  async close(): Promise<void> {
    this.closed = true;
    const closing = new HostWorkError('ERR_HOST_WORK_CLOSED', 'the server is shutting down');
    for (const queue of this.accounts.values()) for (const job of queue.waiting.splice(0)) job.reject(closing);
    this.accounts.clear();
    this.turn = [];
    await Promise.all(
      this.slots.map((slot) => {
        const job = slot.job;
        if (job) this.release(slot);
        job?.reject(closing);
        clearTimeout(slot.idle);
        const worker = slot.worker;
        slot.worker = undefined;
        return worker?.terminate();
      }),
    );
  }

  /** Gives free threads the next tasks, one account after another, each within its share. */
  private dispatch(): void {
    for (const slot of this.slots) {
      if (slot.job) continue;
      const job = this.next();
      if (!job) return;
      this.start(slot, job);
    }
  }

  /** The next task to run: the first account in turn with work waiting and a thread to spare. */
  private next(): Job | undefined {
    for (let i = 0; i < this.turn.length; i++) {
      const account = this.turn[i]!;
      const queue = this.accounts.get(account)!;
      if (queue.running >= this.share) continue;
      const job = queue.waiting.shift()!;
      this.turn.splice(i, 1);
      if (queue.waiting.length > 0) this.turn.push(account);
      if (Date.now() >= job.deadline) {
        job.reject(this.timeoutError(job));
        i--;
        if (queue.waiting.length === 0 && queue.running === 0) this.accounts.delete(account);
        continue;
      }
      queue.running++;
      return job;
    }
    return undefined;
  }

  private start(slot: Slot, job: Job): void {
    clearTimeout(slot.idle);
    slot.idle = undefined;
    const worker = (slot.worker ??= this.spawn(slot));
    slot.job = job;
    slot.timer = setTimeout(() => this.expire(slot), Math.max(0, job.deadline - Date.now()));
    slot.timer.unref();
    const transfer = job.task.body ? [job.task.body] : [];
    worker.postMessage(job.task, transfer);
  }

  private spawn(slot: Slot): Worker {
    // No flags or loaders of the server's own (a test runner's, say): the thread runs plain Node.
    const worker = new Worker(this.script, { stdout: false, stderr: false, execArgv: [] });
    worker.unref();
    worker.on('message', (reply: ThreadReply) => {
      if (slot.worker !== worker) return;
      const job = slot.job;
      if (!job) return;
      this.release(slot);
      if (reply.ok) job.resolve({ payload: reply.payload, body: reply.body });
      else job.reject(new OpError(reply.error.code, reply.error.message, reply.error.name));
      this.afterTask(slot);
    });
    const lost = (why: string) => {
      if (slot.worker !== worker) return;
      slot.worker = undefined;
      const job = slot.job;
      if (!job) return;
      this.release(slot);
      job.reject(new HostWorkError('ERR_HOST_WORK_FAILED', `host work failed: ${why}`));
      this.afterTask(slot);
    };
    worker.on('error', (err) => lost(err.message));
    worker.on('exit', (code) => lost(`its thread exited (${code})`));
    return worker;
  }

  /** A task ran past its deadline: its thread is terminated (the work cannot be interrupted otherwise) and replaced on next need. */
  private expire(slot: Slot): void {
    const job = slot.job;
    if (!job) return;
    this.timedOut++;
    const worker = slot.worker;
    slot.worker = undefined;
    void worker?.terminate();
    this.release(slot);
    job.reject(this.timeoutError(job));
    this.afterTask(slot);
  }

  private release(slot: Slot): void {
    const job = slot.job!;
    clearTimeout(slot.timer);
    slot.timer = undefined;
    slot.job = undefined;
    const queue = this.accounts.get(job.account);
    if (queue) {
      queue.running--;
      if (queue.running === 0 && queue.waiting.length === 0) this.accounts.delete(job.account);
    }
  }

  private afterTask(slot: Slot): void {
    if (this.closed) return;
    this.dispatch();
    if (!slot.job && slot.worker) {
      const worker = slot.worker;
      slot.idle = setTimeout(() => {
        if (slot.worker === worker && !slot.job) {
          slot.worker = undefined;
          void worker.terminate();
        }
      }, this.idleMs);
      slot.idle.unref();
    }
  }

  private timeoutError(job: Job): HostWorkError {
    return new HostWorkError('ERR_HOST_WORK_TIMEOUT', `host work (${job.task.kind}) did not finish within the function's timeout of ${job.timeoutMs} ms and was stopped`);
  }
}
