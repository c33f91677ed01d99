/**
 * Native calls from islet's libraries (crypto, zlib, fs): inputs go to the host as copied bytes,
 * large ones are worked off the host's thread (the runtime decides: see Internal.native), and a
 * host error comes back as Node's error, with its code.
 */
import type { NativeCall } from '../../../sandbox/protocol';
import { INTERNAL, type Internal } from '../internal';

declare const require: (id: string) => unknown;
export const internal = require(INTERNAL) as Internal;

export interface NativeAnswer {
  json: Record<string, unknown>;
  bytes: Uint8Array[];
}

/** The error Node would throw: the host sends `CODE: message`. */
export function nodeError(err: unknown): Error {
  const message = err instanceof Error ? err.message : String(err);
  const m = /^([A-Z][A-Z0-9_]+): ([\s\S]*)$/.exec(message);
  if (!m) return err instanceof Error ? err : new Error(message);
  const [, code, text] = m as unknown as [string, string, string];
  const error = /^ERR_(INVALID_ARG_TYPE|INVALID_ARG_VALUE)$/.test(code) ? new TypeError(text) : /OUT_OF_RANGE|BUFFER_TOO_LARGE/.test(code) ? new RangeError(text) : new Error(text);
  return Object.assign(error, { code, ...(/^E[A-Z]+$/.test(code) ? { errno: -1 } : {}) });
}

function answerOf(result: { p: string; b?: ArrayBuffer }): NativeAnswer {
  const json = JSON.parse(result.p) as Record<string, unknown>;
  const all = result.b ? new Uint8Array(result.b) : new Uint8Array(0);
  if (!Array.isArray(json.n)) return { json, bytes: result.b ? [all] : [] };
  const bytes: Uint8Array[] = [];
  let offset = 0;
  for (const length of json.n as number[]) {
    bytes.push(all.subarray(offset, offset + length));
    offset += length;
  }
  return { json, bytes };
}

/**
 * A native call now. Large inputs, and work that is long whatever its input (`long`: key
 * derivation, key generation), run off the host's thread while this isolate waits.
 */
export function nativeSync(call: NativeCall, payload: Record<string, unknown>, inputs: readonly Uint8Array[] = [], long = false): NativeAnswer {
  try {
    return answerOf(internal.native(call, payload, inputs, long));
  } catch (err) {
    throw nodeError(err);
  }
}

/** A native call off the host's thread, for callback and promise APIs. */
export async function nativeAsync(call: NativeCall, payload: Record<string, unknown>, inputs: readonly Uint8Array[] = []): Promise<NativeAnswer> {
  const size = inputs.reduce((n, b) => n + b.byteLength, 0);
  const body = new Uint8Array(size);
  let offset = 0;
  for (const b of inputs) {
    body.set(b, offset);
    offset += b.byteLength;
  }
  const args = JSON.stringify(inputs.length > 0 ? { ...payload, n: inputs.map((b) => b.byteLength) } : payload);
  try {
    const answer = await internal.op('native', JSON.stringify({ call, args }), inputs.length > 0 ? body.buffer : undefined);
    return answerOf({ p: answer.payload, b: answer.body });
  } catch (err) {
    throw nodeError(err);
  }
}
