// The rest of the web platform for node8 functions: structuredClone (structured-clone.ts),
// MessageChannel, performance and navigator.
import { INTERNAL, type Internal } from '../../../node8/sandbox/internal';
import { structuredCopy } from './structured-clone';

declare const require: (id: string) => unknown;
const internal = require(INTERNAL) as Internal;
const { Event, EventTarget, DOMException } = internal.library<{
  Event: new (type: string, init?: object) => object;
  EventTarget: new () => { dispatchEvent(event: object): boolean };
  DOMException: new (message: string, name: string) => Error;
}>('web/events');

/**
 * A deep copy of a value, as a message would carry it (functions and symbols refused, as in
 * browsers). ArrayBuffers in `transfer` are copied like the rest, then the originals detached
 * (the copy is what moves: the isolate has one heap).
 */
export function structuredClone<T>(value: T, options?: { transfer?: unknown[] }): T {
  const transfer = [...(options?.transfer ?? [])] as { detached?: boolean; transfer?: () => ArrayBuffer }[];
  for (const [i, item] of transfer.entries()) {
    if (!(item instanceof ArrayBuffer)) throw new DOMException('structuredClone: only ArrayBuffers can be transferred in islet functions', 'DataCloneError');
    if (item.detached === true) throw new DOMException('structuredClone: a detached ArrayBuffer cannot be transferred', 'DataCloneError');
    if (transfer.indexOf(item) !== i) throw new DOMException('structuredClone: an ArrayBuffer is listed twice in transfer', 'DataCloneError');
  }
  const copy = structuredCopy(value, (message) => new DOMException(message, 'DataCloneError')) as T;
  // Once the value is copied, the transferred buffers are detached (ArrayBuffer.prototype.transfer, see engine/node-flags.ts).
  for (const item of transfer) item.transfer?.();
  return copy;
}

export class MessageEvent extends Event {
  readonly data: unknown;
  readonly origin = '';
  readonly lastEventId = '';
  readonly source = null;
  readonly ports: unknown[] = [];
  constructor(type: string, init: { data?: unknown } = {}) {
    super(type, init);
    this.data = init.data;
  }
}

export class MessagePort extends EventTarget {
  onmessage: ((event: MessageEvent) => void) | null = null;
  private other: MessagePort | undefined;
  private closed = false;
  static pair(): [MessagePort, MessagePort] {
    const a = new MessagePort();
    const b = new MessagePort();
    a.other = b;
    b.other = a;
    return [a, b];
  }
  /** `transfer` (a list, or `{ transfer }`) detaches the ArrayBuffers in it, as structuredClone's. */
  postMessage(message: unknown, transfer?: unknown[] | { transfer?: unknown[] }): void {
    const target = this.other;
    if (this.closed || !target || target.closed) return;
    const data = structuredClone(message, { transfer: Array.isArray(transfer) ? transfer : transfer?.transfer });
    setTimeout(() => {
      if (target.closed) return;
      const event = new MessageEvent('message', { data });
      if (typeof target.onmessage === 'function') target.onmessage(event);
      target.dispatchEvent(event);
    }, 0);
  }
  start(): void {}
  close(): void {
    this.closed = true;
  }
}

export class MessageChannel {
  readonly port1: MessagePort;
  readonly port2: MessagePort;
  constructor() {
    [this.port1, this.port2] = MessagePort.pair();
  }
}

const timeOrigin = Date.now();
const entries: PerformanceEntry[] = [];

export class PerformanceEntry {
  constructor(
    readonly name: string,
    readonly entryType: string,
    readonly startTime: number,
    readonly duration: number,
    readonly detail: unknown = null,
  ) {}
  toJSON() {
    return { name: this.name, entryType: this.entryType, startTime: this.startTime, duration: this.duration, detail: this.detail };
  }
}
export class PerformanceMark extends PerformanceEntry {
  constructor(name: string, options: { startTime?: number; detail?: unknown } = {}) {
    super(name, 'mark', options.startTime ?? performance.now(), 0, options.detail ?? null);
  }
}
export class PerformanceMeasure extends PerformanceEntry {}

/** Milliseconds since the isolate started, at the clock's resolution here (1 ms, as Date.now). */
export class Performance {
  readonly timeOrigin = timeOrigin;
  now(): number {
    return Date.now() - timeOrigin;
  }
  mark(name: string, options?: { startTime?: number; detail?: unknown }): PerformanceMark {
    const mark = new PerformanceMark(name, options);
    entries.push(mark);
    return mark;
  }
  measure(name: string, start?: string | { start?: number | string; end?: number | string }, end?: string): PerformanceMeasure {
    const at = (ref: unknown, fallback: number) => (typeof ref === 'number' ? ref : typeof ref === 'string' ? ([...entries].reverse().find((e) => e.name === ref)?.startTime ?? fallback) : fallback);
    const from = typeof start === 'object' ? at(start.start, 0) : at(start, 0);
    const to = typeof start === 'object' ? at(start.end, this.now()) : at(end, this.now());
    const measure = new PerformanceMeasure(name, 'measure', from, to - from);
    entries.push(measure);
    return measure;
  }
  getEntries(): PerformanceEntry[] {
    return [...entries];
  }
  getEntriesByName(name: string, type?: string): PerformanceEntry[] {
    return entries.filter((e) => e.name === name && (type === undefined || e.entryType === type));
  }
  getEntriesByType(type: string): PerformanceEntry[] {
    return entries.filter((e) => e.entryType === type);
  }
  clearMarks(name?: string): void {
    for (let i = entries.length - 1; i >= 0; i--) if (entries[i]!.entryType === 'mark' && (name === undefined || entries[i]!.name === name)) entries.splice(i, 1);
  }
  clearMeasures(name?: string): void {
    for (let i = entries.length - 1; i >= 0; i--) if (entries[i]!.entryType === 'measure' && (name === undefined || entries[i]!.name === name)) entries.splice(i, 1);
  }
  toJSON() {
    return { timeOrigin: this.timeOrigin };
  }
}
export const performance = new Performance();

export class Navigator {
  readonly userAgent = 'islet';
  readonly language = 'en-US';
  readonly languages = ['en-US'];
  readonly hardwareConcurrency = 1;
  readonly onLine = true;
}
export const navigator = new Navigator();
