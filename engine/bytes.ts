/**
 * The bytes as an ArrayBuffer of exactly their length, for copying into an isolate. Buffers often
 * view a larger shared pool; those are copied, a buffer that is already exact is used as it is.
 */
export function toArrayBuffer(bytes: Uint8Array): ArrayBuffer {
  if (bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength) return bytes.buffer as ArrayBuffer;
  return new Uint8Array(bytes).buffer as ArrayBuffer;
}
