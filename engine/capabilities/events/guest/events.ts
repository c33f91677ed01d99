// Events of the web platform for node8 functions: Event, EventTarget and CustomEvent
// (event-target-shim), DOMException, AbortController and AbortSignal (timeout, any).
import { Event as ShimEvent, EventTarget as ShimEventTarget, setErrorHandler, setWarningHandler } from 'event-target-shim';
import { INTERNAL, type Internal } from '../../../node8/sandbox/internal';

declare const require: (id: string) => unknown;
const internal = require(INTERNAL) as Internal;

// A listener's error is reported like any uncaught error; event-target-shim's warnings are for developers of the shim.
setErrorHandler((error) => internal.reportError(error));
setWarningHandler(() => undefined);

/** Legacy codes of DOMException names (WebIDL). */
const CODES: Record<string, number> = {
  IndexSizeError: 1,
  HierarchyRequestError: 3,
  WrongDocumentError: 4,
  InvalidCharacterError: 5,
  NoModificationAllowedError: 7,
  NotFoundError: 8,
  NotSupportedError: 9,
  InvalidStateError: 11,
  SyntaxError: 12,
  InvalidModificationError: 13,
  NamespaceError: 14,
  InvalidAccessError: 15,
  TypeMismatchError: 17,
  SecurityError: 18,
  NetworkError: 19,
  AbortError: 20,
  URLMismatchError: 21,
  QuotaExceededError: 22,
  TimeoutError: 23,
  InvalidNodeTypeError: 24,
  DataCloneError: 25,
};

export class DOMException extends Error {
  readonly code: number;
  constructor(message = '', options: string | { name?: string; cause?: unknown } = 'Error') {
    const opts = typeof options === 'string' ? { name: options } : (options ?? {});
    super(String(message), 'cause' in opts ? { cause: opts.cause } : undefined);
    Object.defineProperty(this, 'name', { value: String(opts.name ?? 'Error'), configurable: true, writable: true });
    this.code = CODES[this.name] ?? 0;
  }
}
for (const [name, code] of Object.entries(CODES)) {
  const constant = name
    .replace(/([a-z])([A-Z])/g, '$1_$2')
    .toUpperCase()
    .replace(/_ERROR$/, '_ERR');
  Object.defineProperty(DOMException, constant, { value: code, enumerable: true });
}

/** event-target-shim's Event, with the type WebIDL requires (the shim made `new Event()` an event of type "undefined"). */
export class Event extends ShimEvent {
  constructor(...args: unknown[]) {
    if (args.length === 0) throw Object.assign(new TypeError('The "type" argument must be specified'), { code: 'ERR_MISSING_ARGS' });
    super(String(args[0]), args[1] as ConstructorParameters<typeof ShimEvent>[1]);
  }
}

/** event-target-shim's EventTarget, with the options WebIDL checks: a `signal` given must be an AbortSignal (null is a TypeError). */
export class EventTarget extends ShimEventTarget {
  override addEventListener(...args: Parameters<ShimEventTarget['addEventListener']>): void {
    const options = args[2] as { signal?: unknown } | boolean | undefined;
    if (typeof options === 'object' && options !== null && options.signal !== undefined && !(options.signal instanceof AbortSignal)) {
      throw new TypeError("Failed to execute 'addEventListener' on 'EventTarget': member signal is not of type AbortSignal.");
    }
    super.addEventListener(...args);
  }
}

export class CustomEvent<T = unknown> extends Event {
  readonly detail: T | null;
  constructor(type: string, init?: { detail?: T; bubbles?: boolean; cancelable?: boolean; composed?: boolean }) {
    super(type, init);
    this.detail = init?.detail ?? null;
  }
}

const controllerOf = new WeakMap<object, true>();
interface SignalState {
  aborted: boolean;
  reason: unknown;
  /** The signals AbortSignal.any made of this one (held weakly: a long-lived signal must not keep every request's). */
  dependents?: Set<WeakRef<AbortSignal>>;
  /** For a signal AbortSignal.any made: the signals it follows. */
  sources?: AbortSignal[];
  onabort?: ((event: Event) => void) | null;
}
const state = new WeakMap<AbortSignal, SignalState>();

export class AbortSignal extends EventTarget {
  constructor(key?: unknown) {
    super();
    if (!controllerOf.has(key as object)) throw new TypeError('Illegal constructor');
    state.set(this, { aborted: false, reason: undefined });
  }

  get aborted(): boolean {
    return state.get(this)!.aborted;
  }

  get reason(): unknown {
    return state.get(this)!.reason;
  }

  /** An event handler attribute: a listener of its own, in the place of its first assignment, called with the event (its target set). */
  get onabort(): ((event: Event) => void) | null {
    return state.get(this)!.onabort ?? null;
  }

  set onabort(handler: ((event: Event) => void) | null) {
    const s = state.get(this)!;
    if (s.onabort === undefined) {
      super.addEventListener('abort', (event) => {
        const current = state.get(this)!.onabort;
        if (typeof current === 'function') current.call(this, event as Event);
      });
    }
    s.onabort = typeof handler === 'function' ? handler : null;
  }

  throwIfAborted(): void {
    if (this.aborted) throw this.reason;
  }

  static abort(reason?: unknown): AbortSignal {
    const controller = new AbortController();
    controller.abort(reason);
    return controller.signal;
  }

  static timeout(ms: number): AbortSignal {
    const controller = new AbortController();
    setTimeout(() => controller.abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError')), Number(ms));
    return controller.signal;
  }

  /** The DOM Standard's "create a dependent abort signal": it follows the signals given (a dependent one's own sources, not itself). */
  static any(signals: Iterable<AbortSignal>): AbortSignal {
    const list = [...signals];
    const controller = new AbortController();
    const result = controller.signal;
    for (const signal of list) {
      if (!(signal instanceof AbortSignal)) throw new TypeError('AbortSignal.any: each item must be an AbortSignal');
      if (signal.aborted) {
        const s = state.get(result)!;
        s.aborted = true;
        s.reason = signal.reason;
        return result;
      }
    }
    const sources = new Set<AbortSignal>();
    for (const signal of list) for (const source of state.get(signal)!.sources ?? [signal]) sources.add(source);
    const ref = new WeakRef(result);
    state.get(result)!.sources = [...sources];
    for (const source of sources) (state.get(source)!.dependents ??= new Set()).add(ref);
    return result;
  }
}

/**
 * Aborts `signal` once, with `reason` (an AbortError when none is given), as the DOM Standard
 * says: its dependent signals are marked aborted first, then its abort event fires, then theirs.
 */
function abortSignal(signal: AbortSignal, reason: unknown): void {
  const s = state.get(signal)!;
  if (s.aborted) return;
  s.aborted = true;
  s.reason = reason === undefined ? new DOMException('This operation was aborted', 'AbortError') : reason;
  const dependents: AbortSignal[] = [];
  for (const ref of s.dependents ?? []) {
    const dependent = ref.deref();
    const d = dependent && state.get(dependent)!;
    if (!d || d.aborted) continue;
    d.aborted = true;
    d.reason = s.reason;
    dependents.push(dependent);
  }
  s.dependents = undefined;
  signal.dispatchEvent(trustedEvent('abort'));
  for (const dependent of dependents) dependent.dispatchEvent(trustedEvent('abort'));
}

const defineProperty = Object.defineProperty;
/**
 * An event the platform fires (`isTrusted` true, as the DOM's abort event is). event-target-shim
 * defines each event's own `isTrusted` as a fixed false while it constructs it, so it is given true
 * in that one synchronous moment; no user code runs meanwhile (the event has no init dictionary).
 * Where the function froze `Object`, the event is an untrusted one.
 */
function trustedEvent(type: string): Event {
  const current = Object.defineProperty;
  try {
    Object.defineProperty = ((target: object, key: PropertyKey, descriptor: PropertyDescriptor) =>
      key === 'isTrusted' ? defineProperty(target, key, { value: true, enumerable: true }) : current(target, key, descriptor)) as typeof Object.defineProperty;
  } catch {
    return new Event(type);
  }
  try {
    return new Event(type);
  } finally {
    Object.defineProperty = current;
  }
}

export class AbortController {
  readonly signal: AbortSignal;
  constructor() {
    const key = {};
    controllerOf.set(key, true);
    this.signal = new AbortSignal(key);
  }
  abort(reason?: unknown): void {
    abortSignal(this.signal, reason);
  }
}

// The global scope is an event target too (WinterTC): addEventListener, removeEventListener and
// dispatchEvent of globalThis reach one EventTarget of the isolate.
const globalTarget = new EventTarget();
export const addEventListener = globalTarget.addEventListener.bind(globalTarget);
export const removeEventListener = globalTarget.removeEventListener.bind(globalTarget);
export const dispatchEvent = globalTarget.dispatchEvent.bind(globalTarget);
