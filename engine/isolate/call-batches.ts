import ivm from 'isolated-vm';
import type { ServiceError } from '../errors';
import type { CallOutcome } from '../runtime';
import { META_SEPARATOR, RESEND_RESULTS, requestIdOfMeta } from '../sandbox/protocol';
import { SlotMap } from '../slot-map';
import type { IsolateEntries } from './entries';
import { textArgument, type RawResult } from './results';

/** Calls sent into the isolate together: they share one timeout timer. */
export interface Batch {
  ids: number[];
  /** Calls of the batch not answered yet. */
  left: number;
  timer: NodeJS.Timeout | undefined;
  /**
   * The entry is still in the isolate: its calls may all be answered while their code goes on
   * (a microtask loop after the answer), so the timer stays until both are over.
   */
  running: boolean;
}

export interface QueuedCall {
  meta: string;
  /** The body: text, bytes, none, or the id of a body still arriving (in the instance's request bodies). */
  raw: string | ArrayBuffer | number | undefined;
  done: (outcome: CallOutcome) => void;
  /** Text bytes of the meta and body. */
  bytes: number;
}

export interface RunningCall {
  done: (outcome: CallOutcome) => void;
  batch: Batch;
  /** Its meta (whose head holds its request id: see requestIdOfMeta). */
  meta: string;
  /** The id of its request body still arriving, forgotten when the call ends. */
  bodyId: number | undefined;
  /** Answered with a body that still streams: the call runs until its stream ends. */
  streaming?: boolean;
}

/** What the call batches of an instance need of it. */
export interface BatchHost {
  readonly callRef: ivm.Reference<unknown>;
  readonly timeoutMs: number;
  readonly entries: IsolateEntries;
  /** The load of the code, while it is in progress: the calls' entry queues behind it. */
  loading(): Promise<void> | undefined;
  dead(): boolean;
  /** A call's result (an answer, the head of a streamed one, a WebSocket given). */
  answer(id: number, result: RawResult): void;
  /** Answers a running call once with `outcome` (see IsolateInstance.finish). */
  finish(id: number, outcome: () => CallOutcome): void;
  /** A batch's timeout passed. */
  timedOut(batch: Batch): void;
  /** An entry's failure that is a promise rejected with no handler is logged as request `requestId`'s: true (see IsolateInstance.rejected). */
  rejected(err: unknown, requestId: string): boolean;
  failure(err: unknown): ServiceError;
}

/**
 * The calls of an instance: queued during a turn of the event loop, sent into the isolate
 * together in one entry (under load, one thread hand-off and one timeout timer serve many
 * requests), and running until answered.
 */
export class CallBatches {
  /** Calls sent into the isolate and not answered yet, by id. */
  readonly running = new SlotMap<RunningCall>();
  /** Calls waiting for this turn's flush. */
  private queue: QueuedCall[] = [];
  /** Text bytes of the queued calls (metas and bodies). */
  private queuedBytes = 0;
  /** Calls one entry may carry (1 once the sandbox asked for it, see unbatch). */
  private maxBatch = Infinity;
  private flushScheduled = false;

  constructor(private readonly host: BatchHost) {}

  add(call: QueuedCall): void {
    this.queue.push(call);
    this.queuedBytes += call.bytes;
    this.scheduleFlush();
  }

  /** An entry is over: calls waiting may go in. */
  flushLater(): void {
    if (this.queue.length > 0) this.scheduleFlush();
  }

  /** From now on, one call per entry (the sandbox asked: its promise jobs must not mix requests). */
  unbatch(): void {
    this.maxBatch = 1;
  }

  /** The calls not sent in yet, taken from the queue (the instance died). */
  takeQueued(): QueuedCall[] {
    const queued = this.queue;
    this.queue = [];
    this.queuedBytes = 0;
    return queued;
  }

  /** Takes request `requestId`'s call from the queue when it is not sent in yet (undefined when it was). */
  dropQueued(requestId: string): QueuedCall | undefined {
    const index = this.queue.findIndex((c) => c.meta.startsWith(requestId, 2));
    if (index === -1) return undefined;
    const [call] = this.queue.splice(index, 1);
    this.queuedBytes -= call!.bytes;
    return call;
  }

  /** Running call `id` is over: taken, and its batch's timer stopped once the whole batch is. */
  take(id: number): RunningCall | undefined {
    const call = this.running.take(id);
    if (call && --call.batch.left === 0 && !call.batch.running) clearTimeout(call.batch.timer);
    return call;
  }

  private scheduleFlush(): void {
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    setImmediate(this.flush);
  }

  /**
   * Sends the calls queued during this turn of the event loop into the isolate in one entry: under
   * load, one thread hand-off (and one timeout timer) serves many requests. Results of synchronous
   * handlers come back with the entry; the others arrive through `deliver`.
   */
  private readonly flush = (): void => {
    this.flushScheduled = false;
    while (this.queue.length > 0 && !this.host.dead()) {
      // All waiting calls in one entry, or one per entry once the sandbox asked (see unbatch).
      const taking = Math.min(this.queue.length, this.maxBatch);
      const bytes = taking === this.queue.length ? this.queuedBytes : this.queue.slice(0, taking).reduce((n, c) => n + c.bytes, 0);
      // Otherwise `entered` flushes again.
      if (!this.host.entries.mayEnter(bytes, taking)) return;
      const queued = taking === this.queue.length ? this.queue : this.queue.slice(0, taking);
      this.queue = taking === this.queue.length ? [] : this.queue.slice(taking);
      this.queuedBytes -= bytes;
      this.enter(queued);
    }
  };

  /** Sends calls into the isolate in one entry; they share one timeout timer. */
  private enter(queued: QueuedCall[]): void {
    const batch: Batch = { ids: [], left: queued.length, timer: undefined, running: true };
    for (const c of queued) batch.ids.push(this.running.add({ done: c.done, batch, meta: c.meta, bodyId: typeof c.raw === 'number' ? c.raw : undefined }));
    const loading = this.host.loading();
    const armTimer = () => {
      if (batch.left > 0 || batch.running) batch.timer = setTimeout(() => this.host.timedOut(batch), this.host.timeoutMs);
    };
    if (loading) void loading.then(armTimer);
    else armTimer();
    const metas = queued.length === 1 ? queued[0]!.meta : queued.map((c) => c.meta).join(META_SEPARATOR);
    // Bodies go as arguments of their own: strings are copied as they are, bytes as one copy each
    // (a structured clone of an array of bodies would serialise every string again).
    const bodies = queued.map((c) => (c.raw instanceof ArrayBuffer ? new ivm.ExternalCopy(c.raw).copyInto({ release: true }) : typeof c.raw === 'number' ? c.raw : textArgument(c.raw)));
    const entry = this.host.callRef.apply(undefined, [textArgument(metas), batch.ids.join(','), ...bodies], { result: { copy: true } });
    const over = () => {
      batch.running = false;
      if (batch.left === 0) clearTimeout(batch.timer);
      this.host.entries.entered();
    };
    entry.then(over, over);
    // A failed load answers the batch first (its calls found no handler).
    (loading ? loading.then(() => entry) : entry).then(
      (results) => this.answerBatch(batch, results),
      (err: unknown) => {
        if (this.host.rejected(err, queued.length === 1 ? requestIdOfMeta(queued[0]!.meta) : '-')) {
          this.resendResults(batch);
          return;
        }
        const error = this.host.failure(err);
        for (const id of batch.ids) this.host.finish(id, () => ({ ok: false, error }));
      },
    );
  }

  /** An entry's results: a call's answer, or 0 for a call whose answer comes later (`deliver`). */
  private answerBatch(batch: Batch, results: unknown): void {
    const list = Array.isArray(results) ? (results as unknown[]) : [];
    for (let i = 0; i < batch.ids.length; i++) {
      const result = list[i];
      if (result !== undefined && result !== 0) this.host.answer(batch.ids[i]!, result as RawResult);
    }
  }

  /** Asks the sandbox again for the results of a batch whose entry threw a rejection in place of them. */
  private resendResults(batch: Batch): void {
    if (this.host.dead()) return;
    this.host.entries.enterAnyway();
    this.host.callRef.apply(undefined, [RESEND_RESULTS, batch.ids.join(',')], { result: { copy: true }, timeout: this.host.timeoutMs }).then(
      (results) => {
        this.host.entries.entered();
        this.answerBatch(batch, results);
      },
      () => this.host.entries.entered(),
    );
  }
}
