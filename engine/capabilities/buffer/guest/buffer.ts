// Node's Buffer for code inside isolates (the buffer package), evaluated on first use of Buffer,
// request.body or TextEncoder/TextDecoder; `node` is node8's `buffer` module.
import * as buffer from 'buffer/';

const { Buffer } = buffer;
const extra = buffer as unknown as { SlowBuffer: unknown; INSPECT_MAX_BYTES: number; kMaxLength: number };

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

const g = globalThis as unknown as Record<string, unknown>;

function isUtf8(input: ArrayBuffer | ArrayBufferView): boolean {
  const bytes = input instanceof ArrayBuffer ? new Uint8Array(input) : new Uint8Array(input.buffer, input.byteOffset, input.byteLength);
  try {
    new (g.TextDecoder as typeof TextDecoder)('utf-8', { fatal: true }).decode(bytes);
    return true;
  } catch {
    return false;
  }
}

function isAscii(input: ArrayBuffer | ArrayBufferView): boolean {
  const bytes = input instanceof ArrayBuffer ? new Uint8Array(input) : new Uint8Array(input.buffer, input.byteOffset, input.byteLength);
  for (const b of bytes) if (b > 0x7f) return false;
  return true;
}

/** node8's `buffer` module. */
const node: Record<string, unknown> = {
  Buffer,
  SlowBuffer: extra.SlowBuffer,
  INSPECT_MAX_BYTES: extra.INSPECT_MAX_BYTES,
  kMaxLength: extra.kMaxLength,
  kStringMaxLength: 2 ** 29 - 24,
  constants: { MAX_LENGTH: extra.kMaxLength, MAX_STRING_LENGTH: 2 ** 29 - 24 },
  isUtf8,
  isAscii,
  atob: (s: string) => (g.atob as (s: string) => string)(s),
  btoa: (s: string) => (g.btoa as (s: string) => string)(s),
};
for (const name of ['Blob', 'File']) Object.defineProperty(node, name, { enumerable: true, get: () => g[name] });

export { Buffer, node };
