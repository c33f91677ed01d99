import { apply } from '../../sandbox/guest/intrinsics';

/**
 * The WebAssembly memories alive in this isolate and what they use: isolated-vm does not count
 * WebAssembly memory against the isolate's limit, so islet's WebAssembly guard
 * (engine/capabilities/wasm) charges each memory by its current size, and the runtime checks the
 * total when each call ends.
 *
 * A memory that is garbage still counts until V8 collects it, which it may not do for a long time
 * (a handler that instantiated a module of 2 MiB per call was refused from its third call on). So
 * when the memories' maximums together leave room to pass the limit, the count first asks V8 for a
 * full collection (`gc`, 2-4 ms for a small heap), then reads each live memory's size. It collects
 * first because reading a WeakRef keeps its target alive to the end of the current job. A function
 * whose memories cannot pass the limit together (one memory, as most have) never pays for it.
 *
 * Made when the runtime starts, before any user code runs: the getters and methods it reads sizes
 * and grows with are the originals (user code may replace `ArrayBuffer.prototype.byteLength` or
 * `WeakRef.prototype.deref` before WebAssembly is first used), and its slots are objects without a
 * prototype (an assignment to an array's missing index goes through any setter on Array.prototype).
 */
export interface WasmMemories {
  /** Counts `memory` from now on, with the maximum it may grow to (`shared`: its buffer is a SharedArrayBuffer). */
  track(memory: object, maxPages: number, shared?: boolean): void;
  /**
   * Pages the live memories use, or more: their maximums together when those are within
   * `threshold` (nothing is read then); counted after a full collection otherwise.
   */
  usage(threshold: number): number;
  /** Pages the live memories may grow to together (collected ones may count until the next count). */
  maxPages(): number;
  /** Counts again after a full collection: `maxPages()` is then exact. */
  collect(): void;
  /** The original `WebAssembly.Memory.prototype.grow`. */
  grow(memory: object, delta: unknown): number;
}

export const WASM_PAGE = 65536;

type Getter = (this: unknown) => unknown;

export function makeWasmMemories(native: unknown, collectGarbage: (() => void) | undefined): WasmMemories {
  const Memory = (native as { Memory?: { prototype: object } } | undefined)?.Memory;
  const getter = (target: object | undefined, name: string) => (target ? (Reflect.getOwnPropertyDescriptor(target, name)?.get as Getter | undefined) : undefined);
  const bufferOf = getter(Memory?.prototype, 'buffer');
  const byteLengthOf = getter(ArrayBuffer.prototype, 'byteLength');
  const sharedByteLengthOf = typeof SharedArrayBuffer === 'function' ? getter(SharedArrayBuffer.prototype, 'byteLength') : undefined;
  const nativeGrow = (Memory?.prototype as { grow?: unknown } | undefined)?.grow;
  const NativeWeakRef = WeakRef;
  const deref = WeakRef.prototype.deref;
  const floor = Math.floor;
  let refs = { __proto__: null } as unknown as Record<number, WeakRef<object>>;
  let maxima = { __proto__: null } as unknown as Record<number, number>;
  let shared = { __proto__: null } as unknown as Record<number, boolean>;
  let count = 0;
  let maxTotal = 0;

  /** After a full collection: drops the collected memories and answers the pages the others use. */
  const countLive = (): number => {
    if (collectGarbage) collectGarbage();
    const keptRefs = { __proto__: null } as unknown as Record<number, WeakRef<object>>;
    const keptMaxima = { __proto__: null } as unknown as Record<number, number>;
    const keptShared = { __proto__: null } as unknown as Record<number, boolean>;
    let kept = 0;
    let used = 0;
    maxTotal = 0;
    for (let i = 0; i < count; i++) {
      const memory = apply(deref, refs[i], []) as object | undefined;
      if (memory === undefined) continue;
      keptRefs[kept] = refs[i]!;
      keptMaxima[kept] = maxima[i]!;
      keptShared[kept] = shared[i]!;
      maxTotal += maxima[i]!;
      kept++;
      used += floor((apply(shared[i] ? sharedByteLengthOf! : byteLengthOf!, apply(bufferOf!, memory, []), []) as number) / WASM_PAGE);
    }
    refs = keptRefs;
    maxima = keptMaxima;
    shared = keptShared;
    count = kept;
    return used;
  };

  return {
    track(memory, maxPages, isShared = false) {
      refs[count] = new NativeWeakRef(memory);
      maxima[count] = maxPages;
      shared[count] = isShared;
      count++;
      maxTotal += maxPages;
    },
    usage(threshold) {
      return maxTotal <= threshold ? maxTotal : countLive();
    },
    maxPages: () => maxTotal,
    collect() {
      countLive();
    },
    grow(memory, delta) {
      return apply(nativeGrow as (delta: unknown) => number, memory, [delta]) as number;
    },
  };
}
