/**
 * Text and bytes for code inside isolates: atob/btoa and byte helpers (both sandboxes), and the
 * small TextEncoder/TextDecoder (UTF-8, UTF-16LE, Latin-1) of the Python sandbox, for Pyodide's own
 * use. node8 functions get the whole Encoding Standard instead (engine/capabilities/web/guest/encoding.ts).
 */
import { library } from './libraries';
import { decodeUtf8, encodeUtf8, encodeUtf8Into, unfinishedUtf8Tail } from './utf8';

export function getBuffer(): BufferConstructorLike {
  return library<{ Buffer: BufferConstructorLike }>('buffer').Buffer;
}

export function toBytes(value: unknown): Uint8Array | undefined {
  if (value instanceof Uint8Array) return value;
  if (value instanceof ArrayBuffer) return new Uint8Array(value);
  if (ArrayBuffer.isView(value)) return new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
  return undefined;
}

/** A copy of the bytes as a standalone ArrayBuffer (what crosses back to the host). */
export function toArrayBuffer(bytes: Uint8Array): ArrayBuffer {
  return bytes.slice().buffer as ArrayBuffer;
}

export class TextEncoder {
  readonly encoding = 'utf-8';
  encode(input = ''): Uint8Array {
    return encodeUtf8(String(input));
  }
  encodeInto(input: string, dest: Uint8Array): { read: number; written: number } {
    return encodeUtf8Into(String(input), dest);
  }
}

const UTF8_LABELS = new Set(['utf-8', 'utf8', 'unicode-1-1-utf-8']);
const UTF16LE_LABELS = new Set(['utf-16le', 'utf-16']);
const LATIN1_LABELS = new Set(['latin1', 'iso-8859-1', 'l1']);

/** TextDecoder for UTF-8 (over the buffer package's codec), UTF-16LE and Latin-1 (byte = code point). */
export class TextDecoder {
  readonly encoding: string;
  readonly fatal: boolean;
  readonly ignoreBOM: boolean;
  constructor(label = 'utf-8', options: { fatal?: boolean; ignoreBOM?: boolean } = {}) {
    const normalized = String(label).trim().toLowerCase();
    if (UTF8_LABELS.has(normalized)) this.encoding = 'utf-8';
    else if (UTF16LE_LABELS.has(normalized)) this.encoding = 'utf-16le';
    else if (LATIN1_LABELS.has(normalized)) this.encoding = 'latin1';
    else throw new RangeError(`The "${label}" encoding is not supported (only utf-8, utf-16le and latin1 are)`);
    this.fatal = Boolean(options.fatal);
    this.ignoreBOM = Boolean(options.ignoreBOM);
  }
  /** Bytes of a character split across `decode(…, { stream: true })` calls, kept for the next. */
  private pending: Uint8Array | undefined;
  /** True once the stream's first character was seen (a byte order mark is dropped only there). */
  private begun = false;

  decode(input?: unknown, options?: { stream?: boolean }): string {
    const given = input === undefined ? new Uint8Array(0) : toBytes(input);
    if (!given) throw new TypeError('The "input" argument must be an ArrayBuffer or ArrayBufferView');
    let bytes = given;
    if (this.pending) {
      bytes = new Uint8Array(this.pending.length + given.length);
      bytes.set(this.pending);
      bytes.set(given, this.pending.length);
      this.pending = undefined;
    }
    if (options?.stream) {
      const complete = this.completeLength(bytes);
      if (complete < bytes.length) this.pending = bytes.slice(complete);
      bytes = bytes.subarray(0, complete);
    }
    let text = bytes.length === 0 ? '' : this.decodeWhole(bytes);
    if (!this.begun && text.length > 0) {
      this.begun = true;
      if (!this.ignoreBOM && text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    }
    if (!options?.stream) this.begun = false;
    return text;
  }

  private decodeWhole(bytes: Uint8Array): string {
    if (this.encoding === 'utf-8') return decodeUtf8(bytes, this.fatal);
    if (this.encoding === 'utf-16le') return decodeUtf16le(bytes);
    return getBuffer().from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1');
  }

  /** How many leading bytes end on a whole character (UTF-8: no unfinished sequence; UTF-16: even). */
  private completeLength(bytes: Uint8Array): number {
    if (this.encoding === 'utf-16le') return bytes.length - (bytes.length % 2);
    if (this.encoding !== 'utf-8') return bytes.length;
    return bytes.length - unfinishedUtf8Tail(bytes);
  }
}

function decodeUtf16le(bytes: Uint8Array): string {
  let out = '';
  for (let i = 0; i + 1 < bytes.length; i += 2) out += String.fromCharCode(bytes[i]! | (bytes[i + 1]! << 8));
  return out;
}

/** An InvalidCharacterError DOMException (node8's global, the web/events library's); a plain Error of that name where there is none (Python). */
function invalidCharacter(message: string): Error {
  const DOMException = (globalThis as { DOMException?: new (message: string, name: string) => Error }).DOMException;
  if (typeof DOMException === 'function') return new DOMException(message, 'InvalidCharacterError');
  const err = new Error(message);
  err.name = 'InvalidCharacterError';
  return err;
}

export function btoa(input: unknown): string {
  const text = String(input);
  for (let i = 0; i < text.length; i++) {
    if (text.charCodeAt(i) > 0xff) throw invalidCharacter('Invalid character: btoa accepts only Latin-1 characters');
  }
  return getBuffer().from(text, 'latin1').toString('base64');
}

export function atob(input: unknown): string {
  // The HTML Standard's forgiving-base64 decode: padding only to a whole group of four, at the end.
  let text = String(input).replace(/[\t\n\f\r ]/g, '');
  if (text.length % 4 === 0) text = text.replace(/==?$/, '');
  if (text.length % 4 === 1 || /[^A-Za-z0-9+/]/.test(text)) {
    throw invalidCharacter('The string to be decoded is not correctly encoded.');
  }
  return getBuffer().from(text, 'base64').toString('latin1');
}
