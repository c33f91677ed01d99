// node8's `events`: the events package (Node's EventEmitter as a plain constructor function, so the
// `EventEmitter.call(this)` of older packages works), with what Node added since: `on` (an async
// iterator of events), errorMonitor, captureRejectionSymbol, getEventListeners, setMaxListeners
// and addAbortListener.
import EventEmitter from 'events/';

type Emitter = {
  on(event: string | symbol, fn: (...args: unknown[]) => void): unknown;
  off?(event: string | symbol, fn: (...args: unknown[]) => void): unknown;
  removeListener(event: string | symbol, fn: (...args: unknown[]) => void): unknown;
  listeners?(event: string | symbol): unknown[];
  setMaxListeners?(n: number): unknown;
};
type EventTargetLike = { addEventListener(type: string, fn: (e: unknown) => void, options?: object): void; removeEventListener(type: string, fn: (e: unknown) => void): void };

const E = EventEmitter as unknown as Record<string, unknown> & { defaultMaxListeners: number };

E.errorMonitor ??= Symbol('events.errorMonitor');
E.captureRejectionSymbol ??= Symbol.for('nodejs.rejection');
E.captureRejections ??= false;
E.usingDomains = false;

/** Events of `emitter` named `event`, as an async iterator (Node's events.on). */
E.on = function on(emitter: Emitter, event: string | symbol, options: { signal?: { aborted: boolean; reason: unknown; addEventListener(t: string, f: () => void): void } } = {}) {
  const queue: unknown[][] = [];
  const waiting: { resolve: (r: IteratorResult<unknown[]>) => void; reject: (e: unknown) => void }[] = [];
  let error: unknown;
  let finished = false;
  const onEvent = (...args: unknown[]) => {
    const next = waiting.shift();
    if (next) next.resolve({ value: args, done: false });
    else queue.push(args);
  };
  const onError = (err: unknown) => {
    finished = true;
    const next = waiting.shift();
    if (next) next.reject(err);
    else error = err;
    stop();
  };
  const stop = () => {
    emitter.removeListener(event, onEvent);
    if (event !== 'error') emitter.removeListener('error', onError);
    for (const next of waiting.splice(0)) next.resolve({ value: undefined, done: true } as IteratorResult<unknown[]>);
  };
  emitter.on(event, onEvent);
  if (event !== 'error') emitter.on('error', onError);
  options.signal?.addEventListener('abort', () => onError(options.signal!.reason));
  return {
    next(): Promise<IteratorResult<unknown[]>> {
      const value = queue.shift();
      if (value) return Promise.resolve({ value, done: false });
      if (error !== undefined) {
        const err = error;
        error = undefined;
        return Promise.reject(err);
      }
      if (finished) return Promise.resolve({ value: undefined, done: true } as IteratorResult<unknown[]>);
      return new Promise((resolve, reject) => waiting.push({ resolve, reject }));
    },
    return(): Promise<IteratorResult<unknown[]>> {
      finished = true;
      stop();
      return Promise.resolve({ value: undefined, done: true } as IteratorResult<unknown[]>);
    },
    throw(err: unknown): Promise<IteratorResult<unknown[]>> {
      onError(err);
      return Promise.reject(err);
    },
    [Symbol.asyncIterator]() {
      return this;
    },
  };
};

E.getEventListeners = (emitter: Emitter, event: string | symbol) => (typeof emitter.listeners === 'function' ? emitter.listeners(event) : []);
E.getMaxListeners = (emitter: { getMaxListeners?(): number }) => emitter.getMaxListeners?.() ?? E.defaultMaxListeners;
E.setMaxListeners = (n = 10, ...targets: Emitter[]) => {
  if (targets.length === 0) E.defaultMaxListeners = n;
  for (const target of targets) target.setMaxListeners?.(n);
};
E.addAbortListener = (signal: EventTargetLike & { aborted: boolean }, listener: (event: unknown) => void) => {
  if (signal.aborted) queueMicrotask(() => listener(undefined));
  else signal.addEventListener('abort', listener, { once: true });
  return { [Symbol.dispose ?? Symbol.for('nodejs.dispose')]: () => signal.removeEventListener('abort', listener) };
};

export default EventEmitter;
