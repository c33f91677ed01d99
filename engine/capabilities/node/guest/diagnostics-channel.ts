// node8's `diagnostics_channel`: named channels, their stores and the tracing channels (traceSync,
// tracePromise, traceCallback) as Node's lib/diagnostics_channel.js has them. unenv's, used before,
// threw on tracing (every pino 10 log call, ioredis' tracePromise) and had no runStores.
import { INTERNAL, type Internal } from '../../../node8/sandbox/internal';

declare const require: (id: string) => unknown;
const internal = require(INTERNAL) as Internal;

type Subscriber = (message: unknown, name: string | symbol) => void;
interface Store {
  run<R>(store: unknown, fn: () => R): R;
}

const channels = new Map<string | symbol, Channel>();

export class Channel {
  readonly name: string | symbol;
  #subscribers: Subscriber[] = [];
  #stores = new Map<Store, ((message: unknown) => unknown) | undefined>();

  constructor(name: string | symbol) {
    this.name = name;
  }

  get hasSubscribers(): boolean {
    return this.#subscribers.length > 0 || this.#stores.size > 0;
  }

  subscribe(subscription: Subscriber): void {
    if (typeof subscription !== 'function') throw Object.assign(new TypeError('The "subscription" argument must be of type function'), { code: 'ERR_INVALID_ARG_TYPE' });
    this.#subscribers = [...this.#subscribers, subscription];
  }

  unsubscribe(subscription: Subscriber): boolean {
    const index = this.#subscribers.indexOf(subscription);
    if (index === -1) return false;
    this.#subscribers = this.#subscribers.filter((_, i) => i !== index);
    return true;
  }

  bindStore(store: Store, transform?: (message: unknown) => unknown): void {
    this.#stores.set(store, transform);
  }

  unbindStore(store: Store): boolean {
    return this.#stores.delete(store);
  }

  /** Each subscriber gets the message; one that throws is reported, as Node does, and the others still run. */
  publish(message: unknown): void {
    for (const subscriber of this.#subscribers) {
      try {
        subscriber(message, this.name);
      } catch (err) {
        internal.reportError(err);
      }
    }
  }

  /** Runs `fn` inside every bound store (entered with the message, transformed), after publishing it. */
  runStores<R>(message: unknown, fn: (...args: unknown[]) => R, thisArg?: unknown, ...args: unknown[]): R {
    let run = () => {
      this.publish(message);
      return Reflect.apply(fn, thisArg, args) as R;
    };
    for (const [store, transform] of this.#stores) {
      const inner = run;
      run = () => store.run(transform ? transform(message) : message, inner);
    }
    return run();
  }
}

export function channel(name: string | symbol): Channel {
  if (typeof name !== 'string' && typeof name !== 'symbol') throw Object.assign(new TypeError('The "channel" argument must be of type string or symbol'), { code: 'ERR_INVALID_ARG_TYPE' });
  let found = channels.get(name);
  if (!found) channels.set(name, (found = new Channel(name)));
  return found;
}

export const hasSubscribers = (name: string | symbol): boolean => channels.get(name)?.hasSubscribers ?? false;
export const subscribe = (name: string | symbol, subscription: Subscriber): void => channel(name).subscribe(subscription);
export const unsubscribe = (name: string | symbol, subscription: Subscriber): boolean => channels.get(name)?.unsubscribe(subscription) ?? false;

const EVENTS = ['start', 'end', 'asyncStart', 'asyncEnd', 'error'] as const;
type Handlers = Partial<Record<(typeof EVENTS)[number], Subscriber>>;
type Context = Record<string, unknown>;

export class TracingChannel {
  readonly start: Channel;
  readonly end: Channel;
  readonly asyncStart: Channel;
  readonly asyncEnd: Channel;
  readonly error: Channel;

  constructor(nameOrChannels: string | Record<(typeof EVENTS)[number], Channel>) {
    const of = (event: (typeof EVENTS)[number]) => (typeof nameOrChannels === 'string' ? channel(`tracing:${nameOrChannels}:${event}`) : nameOrChannels[event]);
    this.start = of('start');
    this.end = of('end');
    this.asyncStart = of('asyncStart');
    this.asyncEnd = of('asyncEnd');
    this.error = of('error');
  }

  get hasSubscribers(): boolean {
    return EVENTS.some((event) => this[event].hasSubscribers);
  }

  subscribe(handlers: Handlers): void {
    for (const event of EVENTS) if (handlers[event]) this[event].subscribe(handlers[event]!);
  }

  unsubscribe(handlers: Handlers): boolean {
    let done = true;
    for (const event of EVENTS) if (handlers[event] && !this[event].unsubscribe(handlers[event]!)) done = false;
    return done;
  }

  traceSync<R>(fn: (...args: unknown[]) => R, context: Context = {}, thisArg?: unknown, ...args: unknown[]): R {
    if (!this.hasSubscribers) return Reflect.apply(fn, thisArg, args) as R;
    return this.traced(context, () => {
      const result = Reflect.apply(fn, thisArg, args) as R;
      context.result = result;
      return result;
    });
  }

  /** Runs `body` between `start` and `end` (in the start channel's stores), publishing `error` if it throws. */
  private traced<R>(context: Context, body: () => R): R {
    return this.start.runStores(context, () => {
      try {
        return body();
      } catch (err) {
        context.error = err;
        this.error.publish(context);
        throw err;
      } finally {
        this.end.publish(context);
      }
    });
  }

  tracePromise<R>(fn: (...args: unknown[]) => PromiseLike<R> | R, context: Context = {}, thisArg?: unknown, ...args: unknown[]): Promise<R> {
    if (!this.hasSubscribers) return Reflect.apply(fn, thisArg, args) as Promise<R>;
    const resolve = (result: R) => {
      context.result = result;
      this.asyncStart.publish(context);
      this.asyncEnd.publish(context);
      return result;
    };
    const reject = (err: unknown) => {
      context.error = err;
      this.error.publish(context);
      this.asyncStart.publish(context);
      this.asyncEnd.publish(context);
      return Promise.reject(err);
    };
    return this.traced(context, () => Promise.resolve(Reflect.apply(fn, thisArg, args) as PromiseLike<R> | R).then(resolve, reject));
  }

  traceCallback<R>(fn: (...args: unknown[]) => R, position = -1, context: Context = {}, thisArg?: unknown, ...args: unknown[]): R {
    if (!this.hasSubscribers) return Reflect.apply(fn, thisArg, args) as R;
    const at = position < 0 ? args.length + position : position;
    const callback = args[at];
    if (typeof callback !== 'function') throw Object.assign(new TypeError('The "callback" argument must be of type function'), { code: 'ERR_INVALID_ARG_TYPE' });
    const { asyncStart, asyncEnd, error } = this;
    args[at] = function (this: unknown, err: unknown, result: unknown, ...rest: unknown[]) {
      if (err) {
        context.error = err;
        error.publish(context);
      } else {
        context.result = result;
      }
      return asyncStart.runStores(context, () => {
        try {
          return Reflect.apply(callback as (...a: unknown[]) => unknown, this, [err, result, ...rest]);
        } finally {
          asyncEnd.publish(context);
        }
      });
    };
    return this.traced(context, () => Reflect.apply(fn, thisArg, args) as R);
  }
}

export const tracingChannel = (nameOrChannels: string | Record<(typeof EVENTS)[number], Channel>): TracingChannel => new TracingChannel(nameOrChannels);
