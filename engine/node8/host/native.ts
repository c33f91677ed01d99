import { toArrayBuffer } from '../../bytes';
import type { HostTaskAnswer } from '../../host-work/task';
import type { InstanceServices } from '../../runtime';
import { HOST_WORK_LIMITS } from '../../host-work/limits';
import { NATIVE_OFF_THREAD, type NativeCall, type NativeResult } from '../../sandbox/protocol';

/** Largest input of one native call. */
export const MAX_NATIVE_BYTES = HOST_WORK_LIMITS.inputBytes;
import { cryptoCall, cryptoIsLight } from '../../capabilities/crypto/host';
import { fsCall, fsCallAsync, type FunctionFiles } from '../../capabilities/fs/host';
import { zlibCall, zlibIsLight } from '../../capabilities/zlib/host';

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

/**
 * A native call on the server's thread, for light work only (see cryptoIsLight, zlibIsLight):
 * anything heavier throws NATIVE_OFF_THREAD, and the sandbox sends it again off this thread.
 * Errors carry their message (and Node's code, as `code: message`).
 */
export function runNative(call: NativeCall, payloadJson: unknown, body: unknown, files: FunctionFiles): NativeResult {
  const input = readInput(payloadJson, body);
  const size = input.parts.reduce((n, part) => n + part.byteLength, 0);
  switch (call) {
    case 'fs':
      return writeOutput(fsCall(input, files));
    case 'zlib':
      if (!zlibIsLight(input.payload, size)) throw offThread();
      return writeOutput(zlibCall(input, true));
    default:
      if (!cryptoIsLight(call, input.payload, size)) throw offThread();
      return writeOutput(cryptoCall(call, input));
  }
}

/** A native call off the server's thread: the function's files are read asynchronously, the rest is host work. */
export async function runNativeOffThread(call: NativeCall, payloadJson: unknown, body: unknown, files: FunctionFiles, services: InstanceServices): Promise<NativeResult> {
  if (call === 'fs') return writeOutput(await fsCallAsync(readInput(payloadJson, body), files));
  if (typeof payloadJson !== 'string') throw new NativeError('malformed native call');
  const answer = await services.hostWork({ kind: 'native', call, payload: payloadJson, body: body instanceof ArrayBuffer ? body : undefined });
  return answer.body ? { p: answer.payload, b: answer.body } : { p: answer.payload };
}

/** A native call on a host-work thread (engine/host-work/thread.ts): crypto and zlib, every bound checked. */
export function runNativeWork(call: NativeCall, payloadJson: string, body: ArrayBuffer | undefined): HostTaskAnswer {
  if (call === 'fs') throw new NativeError('fs is not host work');
  const input = readInput(payloadJson, body);
  const result = writeOutput(call === 'zlib' ? zlibCall(input, false) : cryptoCall(call, input));
  return { payload: result.p, body: result.b };
}

function offThread(): NativeError {
  return new NativeError('this work runs off the server\'s thread', NATIVE_OFF_THREAD);
}

/** A host error as the sandbox receives it: `CODE: message`, which it turns back into Node's error. */
export function nativeErrorMessage(err: unknown): string {
  const e = err as Error & { code?: unknown };
  const code = typeof e?.code === 'string' ? e.code : undefined;
  const message = e instanceof Error ? e.message : String(err);
  return code ? `${code}: ${message}` : message;
}
