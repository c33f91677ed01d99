// Bundled on its own (dist/engine/node8/buffer-lib.js): Node's Buffer for functions, evaluated in an
// isolate on first use of Buffer or request.body (see engine/isolate/libraries.ts).
import { Buffer } from 'buffer';

// The package's Buffer.from calls itself again with a value's Symbol.toPrimitive result, which for
// a symbol is the symbol itself: a stack overflow. Node throws this TypeError instead.
const from = Buffer.from;
Buffer.from = function (this: typeof Buffer, value: unknown, ...rest: unknown[]) {
  if (typeof value === 'symbol') {
    const error = new TypeError(
      `The first argument must be of type string or an instance of Buffer, ArrayBuffer, or Array or an Array-like Object. Received type symbol (${String(value)})`,
    );
    (error as TypeError & { code: string }).code = 'ERR_INVALID_ARG_TYPE';
    throw error;
  }
  return (from as (...args: unknown[]) => unknown).call(this, value, ...rest);
} as typeof Buffer.from;

export { Buffer };
