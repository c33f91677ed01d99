import { setFlagsFromString } from 'node:v8';
import ivm from 'isolated-vm';

/** Node's own semi-space on 64-bit machines, and the most an isolate gets. */
const MAX_SEMI_SPACE_MB = 16;

/**
 * The young generation's share of an isolate's memory limit: semi-spaces of an eighth of the
 * limit (a power of two, 1 to 16 MB), as Node's own at 128 MB and up. V8's young generation is
 * three of them (two semi-spaces and as much again for large young objects).
 *
 * isolated-vm sizes it by itself from the limit: 2 MB in all at 128 MB. Most of a large parse was
 * then spent copying survivors between semi-spaces and promoting them: a 5 MB `JSON.parse` took
 * 160-200 ms in a 128 MB isolate against 60 ms in Node, and 75-80 ms with these semi-spaces.
 */
export function semiSpaceMb(memoryMb: number): number {
  let semi = 1;
  while (semi * 2 <= Math.min(MAX_SEMI_SPACE_MB, memoryMb / 8)) semi *= 2;
  return semi;
}

/**
 * A new isolate whose heap as a whole (young and old generations) is held to `memoryMb`.
 *
 * V8 reads its semi-space flag when it makes an isolate's heap, and that flag overrides the limits
 * given in code. isolated-vm clears it when it loads, so it is set only while this isolate is made
 * (synchronously, on this thread). isolated-vm holds an isolate's used heap to its memory limit
 * plus whatever V8 adds to the old generation's limit (the young generation), so the old
 * generation is given the rest: the whole stays at `memoryMb`.
 */
export function newIsolate(memoryMb: number, options: Omit<ivm.IsolateOptions, 'memoryLimit'> = {}): ivm.Isolate {
  const semi = semiSpaceMb(memoryMb);
  setFlagsFromString(`--max-semi-space-size=${semi}`);
  try {
    return new ivm.Isolate({ ...options, memoryLimit: memoryMb - 3 * semi });
  } finally {
    setFlagsFromString('--max-semi-space-size=0');
  }
}
