/**
 * A base for objects that are Transform streams only when used as streams, as Node's own
 * LazyTransform does for crypto's Hash and Cipher: the stream module (readable-stream, the
 * heaviest of islet's libraries to start) is loaded on first stream use, not when crypto is
 * required. Methods of the subclass are found as usual; stream methods and state are found
 * through one proxy below it, which makes an instance's stream state on its first use.
 */
declare const require: (id: string) => unknown;

type TransformClass = { prototype: object; call(self: object, options?: object): void };
let transform: TransformClass | undefined;
const streams = () => (transform ??= (require('stream') as { Transform: TransformClass }).Transform);

/** What a Transform's constructor sets on an instance: reading one of these makes it. */
const STATE = new Set(['_readableState', '_writableState', '_transformState', '_events', '_eventsCount', '_maxListeners', 'readable', 'writable', 'allowHalfOpen']);
const made = new WeakSet<object>();
const OPTIONS = Symbol('transform options');

const below = new Proxy(Object.create(null) as object, {
  get(_target, name, receiver: Record<string | symbol, unknown>) {
    const Transform = streams();
    // Only an instance gets stream state (EventEmitter reads `_events` of prototypes too).
    if (typeof name === 'string' && STATE.has(name) && Object.prototype.hasOwnProperty.call(receiver, OPTIONS) && !made.has(receiver)) {
      made.add(receiver);
      Transform.call(receiver, receiver[OPTIONS] as object | undefined);
      return receiver[name];
    }
    return Reflect.get(Transform.prototype, name, receiver);
  },
  has(_target, name) {
    return name in streams().prototype;
  },
  getPrototypeOf() {
    return streams().prototype;
  },
});

export class LazyTransform {
  constructor(options?: object) {
    Object.defineProperty(this, OPTIONS, { value: options ?? {} });
  }
}
Object.setPrototypeOf(LazyTransform.prototype, below);
