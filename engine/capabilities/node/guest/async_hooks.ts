// node8's `async_hooks`: AsyncLocalStorage, kept per request, and AsyncResource.
//
// A store set by `run` stays the store of the request that set it until the callback (and the
// promise it returns) is done: code of that request sees it after awaits, in timers and in the
// results of fetch and sdk calls, because the runtime enters the isolate for one request at a time
// once this module is loaded (`internal.unbatch`: calls of the function are no longer batched into one
// entry, whose promise jobs would run mixed). Other requests never see it.
import { INTERNAL, type Internal } from '../../../node8/sandbox/internal';

declare const require: (id: string) => unknown;
const internal = require(INTERNAL) as Internal;
internal.unbatch();

/** Stores that outlive their request (enterWith, a run whose promise never settles) are let go past this many. */
const MAX_REQUESTS = 1024;

export class AsyncLocalStorage<T> {
  private readonly byRequest = new Map<string, T | undefined>();
  private readonly frames: { store: T | undefined }[] = [];
  private enabled = true;

  getStore(): T | undefined {
    if (!this.enabled) return undefined;
    const frame = this.frames[this.frames.length - 1];
    return frame ? frame.store : this.byRequest.get(internal.current.requestId);
  }

  private setForRequest(requestId: string, store: T | undefined): void {
    this.byRequest.delete(requestId);
    this.byRequest.set(requestId, store);
    if (this.byRequest.size > MAX_REQUESTS) this.byRequest.delete(this.byRequest.keys().next().value as string);
  }

  run<R>(store: T, callback: (...args: unknown[]) => R, ...args: unknown[]): R {
    this.enabled = true;
    const requestId = internal.current.requestId;
    const had = this.byRequest.has(requestId);
    const previous = this.byRequest.get(requestId);
    this.setForRequest(requestId, store);
    this.frames.push({ store });
    let result: R;
    let restoreLater = false;
    try {
      result = callback(...args);
      if (typeof (result as { then?: unknown })?.then === 'function') {
        restoreLater = true;
        const restore = () => {
          if (this.byRequest.get(requestId) !== store) return;
          if (had) this.setForRequest(requestId, previous);
          else this.byRequest.delete(requestId);
        };
        (result as unknown as Promise<unknown>).then(restore, restore);
      }
      return result;
    } finally {
      this.frames.pop();
      if (!restoreLater && this.byRequest.get(requestId) === store) {
        if (had) this.setForRequest(requestId, previous);
        else this.byRequest.delete(requestId);
      }
    }
  }

  exit<R>(callback: (...args: unknown[]) => R, ...args: unknown[]): R {
    this.frames.push({ store: undefined });
    try {
      return callback(...args);
    } finally {
      this.frames.pop();
    }
  }

  enterWith(store: T): void {
    this.enabled = true;
    this.setForRequest(internal.current.requestId, store);
  }

  disable(): void {
    this.enabled = false;
    this.byRequest.clear();
  }

  static bind<F extends (...args: unknown[]) => unknown>(fn: F): F {
    return AsyncResource.bind(fn);
  }

  static snapshot(): <R>(fn: (...args: unknown[]) => R, ...args: unknown[]) => R {
    const requestId = internal.current.requestId;
    return (fn, ...args) => {
      const now = internal.current.requestId;
      internal.current.requestId = requestId;
      try {
        return fn(...args);
      } finally {
        internal.current.requestId = now;
      }
    };
  }
}

let nextId = 1;

/** A resource whose callbacks run as the request that made it. */
export class AsyncResource {
  private readonly requestId = internal.current.requestId;
  private readonly id = nextId++;
  constructor(
    readonly type: string,
    _options?: unknown,
  ) {}

  runInAsyncScope<R>(fn: (...args: unknown[]) => R, thisArg?: unknown, ...args: unknown[]): R {
    const now = internal.current.requestId;
    internal.current.requestId = this.requestId;
    try {
      return fn.apply(thisArg, args);
    } finally {
      internal.current.requestId = now;
    }
  }

  bind<F extends (...args: unknown[]) => unknown>(fn: F, thisArg?: unknown): F {
    const resource = this;
    return function (this: unknown, ...args: unknown[]) {
      return resource.runInAsyncScope(fn, thisArg ?? this, ...args);
    } as F;
  }

  asyncId(): number {
    return this.id;
  }

  triggerAsyncId(): number {
    return 0;
  }

  emitDestroy(): this {
    return this;
  }

  static bind<F extends (...args: unknown[]) => unknown>(fn: F, type = 'bound-anonymous-fn', thisArg?: unknown): F {
    return new AsyncResource(type).bind(fn, thisArg);
  }
}

const noHook = { enable: () => noHook, disable: () => noHook };

const asyncHooks = {
  AsyncLocalStorage,
  AsyncResource,
  createHook: () => noHook,
  executionAsyncId: () => 1,
  triggerAsyncId: () => 0,
  executionAsyncResource: () => ({}),
  asyncWrapProviders: {},
};

export default asyncHooks;
