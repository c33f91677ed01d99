import type { QueueBroker } from './file/queue-broker';
import type { StoreChange } from './store';

/**
 * What the processes of one machine sharing a store agree through (the supervisor's workers, over
 * their IPC channel; a process alone uses LocalCoordinator). Every change reaches the other
 * processes before the write that made it returns. The file store also takes named locks for the
 * writes that read before they write (a key added to an account, a deploy switching `current`);
 * PostgreSQL has its own transactions for that.
 */
export interface Coordinator {
  /** Runs `work` while no other process sharing the data directory holds the lock `name`. */
  withLock<T>(name: string, work: () => Promise<T>): Promise<T>;
  /** Tells every other process of a change; resolves once each has applied it (or is gone). */
  publish(change: StoreChange): Promise<void>;
  /** Changes published by the other processes. */
  subscribe(listener: (change: StoreChange) => Promise<void>): void;
  /** The file store's queue, shared by the processes (the supervisor's); none: the process has its own. */
  readonly queue?: QueueBroker;
}

/** The coordinator of a process that has the data directory to itself: locks within the process, no one to tell. */
export class LocalCoordinator implements Coordinator {
  private readonly locks = new Map<string, Promise<unknown>>();

  withLock<T>(name: string, work: () => Promise<T>): Promise<T> {
    return chainLock(this.locks, name, work);
  }

  publish(): Promise<void> {
    return Promise.resolve();
  }

  subscribe(): void {}
}

/** Runs `work` after the work queued under `name` before it; the entry goes when the queue empties. */
export function chainLock<T>(locks: Map<string, Promise<unknown>>, name: string, work: () => Promise<T>): Promise<T> {
  const prior = locks.get(name) ?? Promise.resolve();
  const run = prior.then(work, work);
  const tail = run.then(noop, noop);
  locks.set(name, tail);
  void tail.then(() => {
    if (locks.get(name) === tail) locks.delete(name);
  });
  return run;
}

function noop(): void {}
