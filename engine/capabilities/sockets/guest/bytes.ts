// What both socket APIs (net.ts, connect.ts) hand the host of a write.

/** `length` bytes of `bytes` from `at` (fewer at its end) in a buffer of their own: a Buffer's slice would hand the host its whole pool. */
export function copyOf(bytes: Uint8Array, at: number, length: number): ArrayBuffer {
  const piece = new Uint8Array(Math.min(length, bytes.byteLength - at));
  piece.set(bytes.subarray(at, at + piece.byteLength));
  return piece.buffer;
}
