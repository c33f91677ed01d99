import { isAscii, isUtf8 } from 'node:buffer';

/**
 * The bytes as an ArrayBuffer of exactly their length, for copying into an isolate. Buffers often
 * view a larger shared pool; those are copied, a buffer that is already exact is used as it is.
 */
export function toArrayBuffer(bytes: Uint8Array): ArrayBuffer {
  if (bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength) return bytes.buffer as ArrayBuffer;
  return new Uint8Array(bytes).buffer as ArrayBuffer;
}

/**
 * Bytes known to be UTF-8, as a string. ASCII (most JSON) is read as Latin-1, the same text for
 * those bytes: V8 decodes UTF-8 at about 150 MB/s on this machine's Node, and copies Latin-1 at
 * memory speed (a 5 MB JSON body: 30 ms against 0.5 ms; 60 KB: 10.7 against 4.8 µs).
 */
export function utf8Text(bytes: Buffer): string {
  return isAscii(bytes) ? bytes.toString('latin1') : bytes.toString('utf8');
}

/** The bytes as a string when they are UTF-8; otherwise undefined (they go on as bytes). */
export function textIfUtf8(bytes: Buffer): string | undefined {
  if (isAscii(bytes)) return bytes.toString('latin1');
  return isUtf8(bytes) ? bytes.toString('utf8') : undefined;
}
