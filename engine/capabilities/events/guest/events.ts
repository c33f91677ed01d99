// Events of the web platform for node8 functions: Event, EventTarget and CustomEvent
// (event-target-shim), DOMException, AbortController and AbortSignal (timeout, any).
import { Event, EventTarget, setErrorHandler, setWarningHandler } from 'event-target-shim';
import { INTERNAL, type Internal } from '../../../node8/sandbox/internal';

declare const require: (id: string) => unknown;
const internal = require(INTERNAL) as Internal;

// A listener's error is reported like any uncaught error; event-target-shim's warnings are for developers of the shim.
setErrorHandler((error) => internal.reportError(error));
setWarningHandler(() => undefined);

/** Legacy codes of DOMException names (WebIDL). */
const CODES: Record<string, number> = {
  IndexSizeError: 1, HierarchyRequestError: 3, WrongDocumentError: 4, InvalidCharacterError: 5, NoModificationAllowedError: 7,
  NotFoundError: 8, NotSupportedError: 9, InvalidStateError: 11, SyntaxError: 12, InvalidModificationError: 13, NamespaceError: 14,
  InvalidAccessError: 15, TypeMismatchError: 17, SecurityError: 18, NetworkError: 19, AbortError: 20, URLMismatchError: 21,
  QuotaExceededError: 22, TimeoutError: 23, InvalidNodeTypeError: 24, DataCloneError: 25,
};

export class DOMException extends Error {
  readonly code: number;
  constructor(message = '', options: string | { name?: string; cause?: unknown } = 'Error') {
    const opts = typeof options === 'string' ? { name: options } : options ?? {};
    super(String(message), 'cause' in opts ? { cause: opts.cause } : undefined);
    Object.defineProperty(this, 'name', { value: String(opts.name ?? 'Error'), configurable: true, writable: true });
    this.code = CODES[this.name] ?? 0;
  }
}
for (const [name, code] of Object.entries(CODES)) {
  const constant = name.replace(/([a-z])([A-Z])/g, '$1_$2').toUpperCase().replace(/_ERROR$/, '_ERR');
  Object.defineProperty(DOMException, constant, { value: code, enumerable: true });
}

export class CustomEvent<T = unknown> extends Event {
  readonly detail: T | null;
  constructor(type: string, init?: { detail?: T; bubbles?: boolean; cancelable?: boolean; composed?: boolean }) {
    super(type, init);
    this.detail = init?.detail ?? null;
  }
}

const controllerOf = new WeakMap<object, true>();
const state = new WeakMap<AbortSignal, { aborted: boolean; reason: unknown }>();

export class AbortSignal extends EventTarget {
  onabort: ((event: Event) => void) | null = null;

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

  static any(signals: Iterable<AbortSignal>): AbortSignal {
    const controller = new AbortController();
    for (const signal of signals) {
      if (signal.aborted) {
        controller.abort(signal.reason);
        break;
      }
      signal.addEventListener('abort', () => controller.abort(signal.reason), { once: true });
    }
    return controller.signal;
  }

  override dispatchEvent(event: Event): boolean {
    if (event.type === 'abort' && typeof this.onabort === 'function') this.onabort.call(this, event);
    return super.dispatchEvent(event);
  }
}

/** Aborts `signal` once, with `reason` (an AbortError when none is given). */
function abortSignal(signal: AbortSignal, reason: unknown): void {
  const s = state.get(signal)!;
  if (s.aborted) return;
  s.aborted = true;
  s.reason = reason === undefined ? new DOMException('This operation was aborted', 'AbortError') : reason;
  signal.dispatchEvent(new Event('abort'));
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

export { Event, EventTarget };
