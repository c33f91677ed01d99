import { nativeSync } from '../../guest/native';
import type { ZlibMethod } from '../ops';

/** One zlib operation of the host on the concatenated chunks. */
export function zlibBytes(op: ZlibMethod, options: Record<string, unknown>, chunks: readonly Uint8Array[]): Uint8Array {
  const input = chunks.length === 1 ? chunks[0]! : concat(chunks);
  return nativeSync('zlib', { op, options }, [input]).bytes[0] ?? new Uint8Array(0);
}

/** The same, also answering how many input bytes zlib consumed (what follows is data after the compressed stream's end). */
export function zlibBytesConsumed(op: ZlibMethod, options: Record<string, unknown>, input: Uint8Array): { bytes: Uint8Array; consumed: number } {
  const answer = nativeSync('zlib', { op, options: { ...options, info: true } }, [input]);
  return { bytes: answer.bytes[0] ?? new Uint8Array(0), consumed: Number(answer.json.consumed) };
}

export function concat(chunks: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.byteLength, 0));
  let offset = 0;
  for (const c of chunks) {
    out.set(c, offset);
    offset += c.byteLength;
  }
  return out;
}
