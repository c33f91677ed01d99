import { fork, type ChildProcess } from 'node:child_process';
import * as path from 'node:path';
import type { Limits } from '../engine/limits';
import { SERVER_V8_FLAGS } from '../engine/node-flags';
import type { StoreChange } from '../engine/store/store';
import { MemoryQueueBroker } from '../engine/store/file/queue-broker';
import { backgroundFailed, serverLog } from '../engine/server-log';
import { Channel } from './channel';
import { answerQueue, type QueueRequest } from './queue';
import type { WorkerConfig, WorkerReport, WorkerStats } from './messages';
import type { ServeOptions } from './options';

const WORKER_SCRIPT = path.join(__dirname, 'worker.js');
/** A worker that exits sooner than this after starting counts as a crash loop: the next start waits. */
const STABLE_MS = 30_000;
const BACKOFF_FIRST_MS = 250;
const BACKOFF_MAX_MS = 30_000;
/** How long a worker may take to apply a change or write its logs before the others stop waiting for it. */
const ANSWER_MS = 10_000;
/** A draining worker is killed if it is still there this long after its calls' longest timeout. */
const DRAIN_GRACE_MS = 15_000;

interface Worker {
  slot: Slot;
  logWriter: number;
  child: ChildProcess;
  channel: Channel;
  state: 'starting' | 'ready' | 'draining';
  /** It listens for messages (changes, drain, listen): they reach it from now on. */
  hello: boolean;
  helloed: Promise<void>;
  startedAt: number;
  stats: WorkerStats | undefined;
  /** Why it is being replaced, once it is. */
  recycling: string | undefined;
  /** The worker it is starting to replace (until it is ready). */
  replacing: Worker | undefined;
  fatal: string | undefined;
  ready: Promise<Ports>;
  exited: Promise<void>;
}

/** The ports a worker listens on (the console's undefined when there is no console). */
interface Ports {
  port: number;
  consolePort: number | undefined;
}

interface Slot {
  index: number;
  worker: Worker | undefined;
  restarts: number;
  /** Crashes in a row, each soon after its start. */
  failures: number;
  timer: NodeJS.Timeout | undefined;
}

interface Lock {
  holder: Worker;
  queue: { worker: Worker; grant: () => void }[];
}

/**
 * The primary process of `islet serve`: runs N workers on one port (and the console's) and keeps
 * them running. It replaces a worker that exits (with backoff when it crash-loops), drains and
 * replaces one that had a fatal out-of-memory or passed the RSS ceiling, drains them all on
 * SIGTERM/SIGINT, and replaces them one at a time on SIGHUP. It also carries what the workers share: the store's
 * locks, its changes (a write returns once every worker has applied it), log flushes and health.
 */
export class Supervisor {
  private readonly slots: Slot[];
  private readonly live = new Set<Worker>();
  private readonly locks = new Map<string, Lock>();
  private readonly workerLimits: Partial<Limits>;
  private port: number;
  private consolePort: number | undefined;
  private stopping: Promise<void> | undefined;
  private rolling: Promise<void> | undefined;
  /** The file store's queue of asynchronous invocations (none on PostgreSQL, where the database is the broker). */
  private readonly queue: MemoryQueueBroker | undefined;

  constructor(
    private readonly options: ServeOptions,
    private readonly maxTimeoutMs: number,
  ) {
    this.port = options.port;
    this.consolePort = options.consolePort;
    this.slots = Array.from({ length: options.workers }, (_, i) => ({ index: i + 1, worker: undefined, restarts: 0, failures: 0, timer: undefined }));
    this.workerLimits = {
      maxWarmMemoryMb: Math.floor(options.warmMemoryMb / options.workers),
      maxInstancesPerVersion: Math.max(1, Math.ceil(options.maxInstances / options.workers)),
      ...options.limits,
      // Each worker counts the calls it serves: it holds its share of every account's bounds.
      accountShare: 1 / options.workers,
    };
    if (options.storeUrl === undefined) {
      this.queue = new MemoryQueueBroker();
      this.queue.onWork(() => {
        for (const worker of this.live) if (worker.hello) worker.channel.notify('queue-wake');
      });
    }
  }

  /**
   * Starts every worker at once; resolves with the ports once all serve. The others open their
   * engines meanwhile, but listen only after the first has checked that the ports are free and
   * holds them.
   */
  async start(): Promise<{ port: number; consolePort: number | undefined }> {
    // No worker runs yet: what the queue says was running was cut short, and waits again.
    await this.queue?.open(this.options.dataDir);
    const [first, ...rest] = this.slots;
    const firstWorker = this.spawn(first!, true);
    const others = rest.map((slot) => this.spawn(slot, false, undefined, true));
    ({ port: this.port, consolePort: this.consolePort } = await firstWorker.ready.catch((err: Error) => this.abort(err)));
    for (const worker of others) void worker.helloed.then(() => worker.channel.notify('listen'));
    await Promise.all(others.map((w) => w.ready)).catch((err: Error) => this.abort(err));
    return { port: this.port, consolePort: this.consolePort };
  }

  /** SIGTERM/SIGINT: every worker stops taking connections, finishes its calls, writes its logs and exits. */
  stop(reason: string): Promise<void> {
    this.stopping ??= (async () => {
      for (const slot of this.slots) clearTimeout(slot.timer);
      const workers = [...this.live];
      for (const worker of workers) this.drain(worker, reason);
      await Promise.all(workers.map((w) => w.exited));
    })();
    return this.stopping;
  }

  /** SIGHUP: each worker in turn is replaced by a fresh one (new code is picked up), then drained. */
  rollingRestart(): Promise<void> {
    this.rolling ??= (async () => {
      for (const slot of this.slots) {
        const old = slot.worker;
        if (!old || this.stopping) continue;
        await this.recycle(old, 'rolling restart (SIGHUP)');
        await old.exited;
      }
    })().finally(() => (this.rolling = undefined));
    return this.rolling;
  }

  /** Kills every worker at once (a second signal while stopping). */
  kill(): void {
    for (const worker of this.live) worker.child.kill('SIGKILL');
  }

  private async abort(err: Error): Promise<never> {
    this.stopping ??= Promise.resolve();
    this.kill();
    await Promise.all([...this.live].map((w) => w.exited));
    throw err;
  }

  private spawn(slot: Slot, probe: boolean, replacing?: Worker, waitToListen = false): Worker {
    const config: WorkerConfig = {
      slot: slot.index,
      logWriter: this.freeLogWriter(),
      host: this.options.host,
      port: this.port,
      consolePort: this.consolePort,
      consoleOrigin: this.options.consoleOrigin,
      probe,
      waitToListen,
      dataDir: this.options.dataDir,
      storeUrl: this.options.storeUrl,
      advertiseUrl: this.options.advertiseUrl,
      allowPrivateEgress: this.options.allowPrivateEgress,
      limits: this.workerLimits,
      keepVersions: this.options.keepVersions,
      metrics: this.options.metrics,
      metricsToken: this.options.metricsToken,
      logLevel: this.options.logLevel,
    };
    const child = fork(WORKER_SCRIPT, [], {
      // The supervisor's own flags come last, so that an operator's choice wins.
      execArgv: [...new Set(['--no-node-snapshot', ...SERVER_V8_FLAGS, ...process.execArgv])],
      env: { ...process.env, ISLET_WORKER: JSON.stringify(config) },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    let markReady: (ports: Ports) => void = () => undefined;
    let failStart: (err: Error) => void = () => undefined;
    let markExited: () => void = () => undefined;
    let markHello: () => void = () => undefined;
    const worker: Worker = {
      slot,
      logWriter: config.logWriter,
      child,
      channel: new Channel(child),
      state: 'starting',
      hello: false,
      helloed: new Promise<void>((resolve) => (markHello = resolve)),
      startedAt: Date.now(),
      stats: undefined,
      recycling: undefined,
      replacing,
      fatal: undefined,
      ready: new Promise<Ports>((resolve, reject) => {
        markReady = resolve;
        failStart = reject;
      }),
      exited: new Promise<void>((resolve) => (markExited = resolve)),
    };
    // Benign: only marks the rejection as handled; start() and recycle() await it and say why it failed.
    worker.ready.catch(() => undefined);
    this.live.add(worker);
    if (!replacing) slot.worker = worker;
    this.listen(worker, markReady, markHello);
    child.once('exit', (code, signal) => {
      failStart(new Error(worker.fatal ?? `worker ${slot.index} exited with ${signal ?? `code ${code}`} before it was ready`));
      this.onExit(worker, code, signal);
      markExited();
    });
    return worker;
  }

  private listen(worker: Worker, markReady: (ports: Ports) => void, markHello: () => void): void {
    const { channel } = worker;
    channel.handle('hello', () => {
      worker.hello = true;
      markHello();
    });
    channel.handle('ready', (ports: Ports) => {
      worker.state = 'ready';
      worker.replacing = undefined;
      markReady(ports);
    });
    channel.handle('fatal', ({ message }: { message: string }) => void (worker.fatal = message));
    channel.handle('stats', (stats: WorkerStats) => {
      const before = worker.stats?.catastrophicOutOfMemory ?? 0;
      worker.stats = stats;
      if (stats.catastrophicOutOfMemory > before) void this.recycle(worker, 'a fatal out-of-memory parked one of its isolates');
      else if (stats.rssMb > this.options.maxWorkerRssMb) void this.recycle(worker, `its memory (${stats.rssMb} MB) passed the ceiling of ${this.options.maxWorkerRssMb} MB`);
    });
    channel.handle('lock', ({ name }: { name: string }) => this.lock(worker, name));
    channel.handle('unlock', ({ name }: { name: string }) => this.unlock(worker, name));
    channel.handle('publish', ({ change }: { change: StoreChange }) => this.askOthers(worker, 'change', { change }));
    channel.handle('flush-logs', () => this.askOthers(worker, 'flush-logs', null));
    channel.handle('health', () => this.health());
    channel.handle('gather', ({ op, body }: { op: string; body: unknown }) => this.gather(worker, op, body));
    const queue = this.queue;
    if (queue) channel.handle('queue', (request: QueueRequest) => answerQueue(queue, String(worker.child.pid), request));
  }

  private onExit(worker: Worker, code: number | null, signal: NodeJS.Signals | null): void {
    this.live.delete(worker);
    // What it was running waits again (it runs again: at least once).
    this.queue?.ownerGone(String(worker.child.pid));
    for (const [name, lock] of this.locks) {
      lock.queue = lock.queue.filter((entry) => entry.worker !== worker);
      if (lock.holder === worker) this.passOn(name, lock);
    }
    const { slot } = worker;
    const expected = worker.state === 'draining';
    if (slot.worker !== worker || this.stopping) return;
    slot.worker = undefined;
    if (expected) return;
    const quick = Date.now() - worker.startedAt < STABLE_MS;
    slot.failures = quick ? slot.failures + 1 : 0;
    const delay = slot.failures === 0 ? 0 : Math.min(BACKOFF_MAX_MS, BACKOFF_FIRST_MS * 2 ** (slot.failures - 1));
    serverLog.error(
      { code: 'ERR_WORKER_EXITED', slot: slot.index, workerPid: worker.child.pid, exitCode: code, signal, delayMs: delay },
      `worker ${slot.index} (pid ${worker.child.pid}) exited with ${signal ?? `code ${code}`}; starting a new one${delay ? ` in ${delay} ms (it keeps crashing)` : ''}`,
    );
    slot.timer = setTimeout(() => {
      slot.timer = undefined;
      if (this.stopping || slot.worker) return;
      slot.restarts++;
      this.spawn(slot, !this.listening()).ready.then(
        () => undefined,
        (err: Error) => serverLog.error({ code: 'ERR_WORKER_START', slot: slot.index, err }, err.message),
      );
    }, delay);
  }

  /** Starts a replacement for `worker`, and drains `worker` once the replacement serves. */
  private async recycle(worker: Worker, reason: string): Promise<void> {
    if (worker.recycling || worker.state === 'draining' || this.stopping || worker.slot.worker !== worker) return;
    worker.recycling = reason;
    serverLog.warn({ slot: worker.slot.index, workerPid: worker.child.pid, reason }, `replacing worker ${worker.slot.index} (pid ${worker.child.pid}): ${reason}`);
    const slot = worker.slot;
    const next = this.spawn(slot, !this.listening(), worker);
    try {
      await next.ready;
    } catch (err) {
      serverLog.error({ code: 'ERR_WORKER_START', slot: slot.index, err }, `the replacement of worker ${slot.index} did not start (${(err as Error).message}); the old one keeps serving`);
      worker.recycling = undefined;
      return;
    }
    if (slot.worker === worker) slot.worker = next;
    slot.restarts++;
    this.drain(worker, reason);
  }

  private drain(worker: Worker, reason: string): void {
    if (worker.state === 'draining') return;
    worker.state = 'draining';
    // Before its hello a worker may not hear the note yet; SIGTERM drains it too (or ends it while it starts).
    if (worker.hello) worker.channel.notify('drain', { reason });
    else worker.child.kill('SIGTERM');
    const kill = setTimeout(() => worker.child.kill('SIGKILL'), this.maxTimeoutMs + DRAIN_GRACE_MS);
    void worker.exited.then(() => clearTimeout(kill));
  }

  /** Some worker holds the ports (a new one then joins them instead of checking that they are free). */
  private listening(): boolean {
    for (const worker of this.live) if (worker.state === 'ready') return true;
    return false;
  }

  private freeLogWriter(): number {
    const used = new Set([...this.live].map((w) => w.logWriter));
    let n = 1;
    while (used.has(n)) n++;
    return n;
  }

  private lock(worker: Worker, name: string): Promise<void> | void {
    const lock = this.locks.get(name);
    if (!lock) {
      this.locks.set(name, { holder: worker, queue: [] });
      return;
    }
    return new Promise<void>((grant) => lock.queue.push({ worker, grant }));
  }

  private unlock(worker: Worker, name: string): void {
    const lock = this.locks.get(name);
    if (lock && lock.holder === worker) this.passOn(name, lock);
  }

  private passOn(name: string, lock: Lock): void {
    const next = lock.queue.shift();
    if (!next) {
      this.locks.delete(name);
      return;
    }
    lock.holder = next.worker;
    next.grant();
  }

  /** Asks every other worker that listens for changes; resolves when all answered, went away, or took too long. */
  private async askOthers(from: Worker, op: string, body: unknown): Promise<void> {
    const others = [...this.live].filter((w) => w !== from && w.hello);
    await Promise.all(
      others.map((w) =>
        Promise.race([w.channel.request(op, body).catch((err: unknown) => this.peerFailed(w, 'change-broadcast', op, err)), new Promise<void>((resolve) => setTimeout(resolve, ANSWER_MS).unref())]),
      ),
    );
  }

  /** Every other ready worker's answer to `op` (a worker that does not answer in time is left out). */
  private async gather(from: Worker, op: string, body: unknown): Promise<unknown[]> {
    const others = [...this.live].filter((w) => w !== from && w.state === 'ready');
    const answers = await Promise.all(
      others.map((w) =>
        Promise.race([
          w.channel.request(op, body).catch((err: unknown) => this.peerFailed(w, 'peer-figures', op, err)),
          new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), ANSWER_MS).unref()),
        ]),
      ),
    );
    return answers.filter((a) => a !== undefined && a !== null);
  }

  /** A worker did not answer `op`: logged and counted, unless it went away meanwhile (its exit is logged on its own). */
  private peerFailed(worker: Worker, task: 'change-broadcast' | 'peer-figures', op: string, err: unknown): undefined {
    if (worker.channel.open) backgroundFailed(task, err, `worker ${worker.slot.index} (pid ${worker.child.pid}) failed ${op}`, { slot: worker.slot.index });
    return undefined;
  }

  private health(): WorkerReport[] {
    return [...this.live]
      .sort((a, b) => a.slot.index - b.slot.index || a.startedAt - b.startedAt)
      .map((w) => ({ ...w.stats, slot: w.slot.index, pid: w.child.pid, state: w.state, restarts: w.slot.restarts }));
  }
}
