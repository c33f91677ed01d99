/**
 * The built-ins islet's code inside isolates calls where it holds the host's callbacks or what
 * they lead to, taken when a runtime script starts, before any user code runs. User code may
 * replace any global or prototype member (Function.prototype.call, Promise.prototype.then,
 * Object.defineProperty, eval…) or put accessors on Object.prototype; a replaced one would be
 * handed what islet passes it. These are the originals, held in this module's closure.
 */
const { apply, defineProperty } = Reflect;
const { freeze } = Object;
const NativePromise = Promise;
const then = Promise.prototype.then;
const resolve = Promise.resolve;
const stringStartsWith = String.prototype.startsWith;

export { apply, defineProperty, freeze, NativePromise };

/** `promise.then(onFulfilled, onRejected)` with the original `then`. */
export function promiseThen<T, R>(promise: Promise<T>, onFulfilled?: ((value: T) => R) | undefined, onRejected?: (reason: unknown) => R): Promise<Awaited<R>> {
  return apply(then, promise, [onFulfilled, onRejected]) as Promise<Awaited<R>>;
}

/** `Promise.resolve(value)` with the original Promise. */
export function promiseResolve<T>(value: T): Promise<Awaited<T>> {
  return apply(resolve, NativePromise, [value]) as Promise<Awaited<T>>;
}

/** `text.startsWith(prefix)` with the original method. */
export function startsWith(text: string, prefix: string): boolean {
  return apply(stringStartsWith, text, [prefix]) as boolean;
}

/** Indirect eval of a script, with the original eval: no local scope reaches the code. */
export const indirectEval: (code: string) => unknown = eval;
