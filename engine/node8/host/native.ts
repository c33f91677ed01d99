import { MAX_NATIVE_BYTES, type NativeCall, type NativeResult } from '../../sandbox/protocol';
import { toArrayBuffer } from '../../bytes';
import { cryptoCall, cryptoCallAsync } from './crypto';
import { fsCall, type FunctionFiles } from './fs';
import { zlibCall, zlibCallAsync } from './zlib';

/** What a native call gets: its JSON, and its bytes split by the lengths the JSON gives (`n`). */
export interface NativeInput {
  payload: Record<string, unknown>;
  parts: Buffer[];
}

/** What a native call answers: JSON, and bytes (several outputs concatenated, lengths in the JSON). */
export interface NativeOutput {
  json: Record<string, unknown>;
  bytes?: Buffer[];
}

/** A failure the sandbox turns into Node's error: its message, and Node's code when there is one. */
export class NativeError extends Error {
  constructor(message: string, readonly code?: string) {
    super(message);
  }
}

/** Reads a native call's input; every input is copied, untrusted data from the sandbox. */
export function readInput(payloadJson: unknown, body: unknown): NativeInput {
  if (typeof payloadJson !== 'string') throw new NativeError('malformed native call');
  const payload = JSON.parse(payloadJson) as Record<string, unknown>;
  if (typeof payload !== 'object' || payload === null) throw new NativeError('malformed native call');
  const bytes = body instanceof ArrayBuffer ? Buffer.from(body) : Buffer.alloc(0);
  if (bytes.byteLength > MAX_NATIVE_BYTES) throw new NativeError(`input of ${bytes.byteLength} bytes is over the limit of ${MAX_NATIVE_BYTES} bytes`, 'ERR_OUT_OF_RANGE');
  const lengths = Array.isArray(payload.n) ? payload.n.map(Number) : bytes.byteLength > 0 ? [bytes.byteLength] : [];
  const parts: Buffer[] = [];
  let offset = 0;
  for (const length of lengths) {
    if (!Number.isInteger(length) || length < 0 || offset + length > bytes.byteLength) throw new NativeError('malformed native call');
    parts.push(bytes.subarray(offset, offset + length));
    offset += length;
  }
  return { payload, parts };
}

export function writeOutput(output: NativeOutput): NativeResult {
  if (!output.bytes || output.bytes.length === 0) return { p: JSON.stringify(output.json) };
  const json = output.bytes.length === 1 ? output.json : { ...output.json, n: output.bytes.map((b) => b.byteLength) };
  return { p: JSON.stringify(json), b: toArrayBuffer(output.bytes.length === 1 ? output.bytes[0]! : Buffer.concat(output.bytes)) };
}

/** A native call on this thread. Errors carry their message (and Node's code, as `code: message`). */
export function runNative(call: NativeCall, payloadJson: unknown, body: unknown, files: FunctionFiles): NativeResult {
  const input = readInput(payloadJson, body);
  switch (call) {
    case 'zlib':
      return writeOutput(zlibCall(input));
    case 'fs':
      return writeOutput(fsCall(input, files));
    default:
      return writeOutput(cryptoCall(call, input));
  }
}

/** A native call worked off this thread where Node can (key derivation, key generation, compression). */
export async function runNativeAsync(call: NativeCall, payloadJson: unknown, body: unknown, files: FunctionFiles): Promise<NativeResult> {
  const input = readInput(payloadJson, body);
  switch (call) {
    case 'zlib':
      return writeOutput(await zlibCallAsync(input));
    case 'fs':
      return writeOutput(fsCall(input, files));
    default:
      return writeOutput(await cryptoCallAsync(call, input));
  }
}

/** A host error as the sandbox receives it: `CODE: message`, which it turns back into Node's error. */
export function nativeErrorMessage(err: unknown): string {
  const e = err as Error & { code?: unknown };
  const code = typeof e?.code === 'string' ? e.code : undefined;
  const message = e instanceof Error ? e.message : String(err);
  return code ? `${code}: ${message}` : message;
}
