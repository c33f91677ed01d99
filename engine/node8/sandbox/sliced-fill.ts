import { apply, defineProperty } from '../../sandbox/guest/intrinsics';

/** Elements filled by one call of V8's own `fill`: a run between two of the isolate's interrupt checks. */
const SLICE = 65536;

/**
 * `Array.prototype.fill` in runs of SLICE elements. V8's own fills an array whose elements are a
 * dictionary (`new Array(70e6)`, past its fast-array length) inside one builtin call, which never
 * stops for an interrupt, so isolated-vm's memory limit cannot stop it: each time the heap neared
 * its limit, isolated-vm granted 1 GB more, and an 80 MB function reached 1.43 GB of heap, or ran
 * on to its timeout (43 s with 16 MB semi-spaces). Between runs the loop checks interrupts, so the
 * limit stops it as it stops any loop: in under a second at every memory limit.
 *
 * The same steps as the specification's: the receiver's length, then start and end, each read
 * once; only an array-like's `length` is read again for each run. The built-ins it uses are taken
 * when it is installed: a function that replaces `Object` or `Math` does not change its `fill`.
 */
export function installSlicedFill(): void {
  const nativeFill = Array.prototype.fill;
  const toObject = Object;
  const { min, max, trunc } = Math;
  const { isNaN, MAX_SAFE_INTEGER } = Number;
  const integer = (value: unknown): number => {
    const n = +(value as number);
    return isNaN(n) ? 0 : trunc(n);
  };
  const fill = {
    fill(this: unknown, value: unknown) {
      const start = arguments[1];
      const end = arguments[2];
      if (this === null || this === undefined) return apply(nativeFill, this, [value, start, end]);
      const o = toObject(this) as { length: unknown };
      const length = min(max(integer(o.length), 0), MAX_SAFE_INTEGER);
      if (length <= SLICE) return apply(nativeFill, o, [value, start, end]);
      const relativeStart = integer(start);
      let k = relativeStart < 0 ? max(length + relativeStart, 0) : min(relativeStart, length);
      const relativeEnd = end === undefined ? length : integer(end);
      const final = relativeEnd < 0 ? max(length + relativeEnd, 0) : min(relativeEnd, length);
      for (; k < final; k += SLICE) apply(nativeFill, o, [value, k, min(k + SLICE, final)]);
      return o;
    },
  }.fill;
  defineProperty(Array.prototype, 'fill', { value: fill, writable: true, enumerable: false, configurable: true });
}
