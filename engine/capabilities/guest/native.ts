/**
 * Native calls from islet's libraries (crypto, zlib, fs; declared in their ops.ts): inputs go to
 * the host as copied bytes, large ones are worked off the host's thread (the runtime decides: see
 * Internal.native), and a failure comes back as its HostError, made Node's error here.
 */
import type { NativeCall, NativePayload } from '../ops';
import type { HostError } from '../errors';
import type { HostReply } from '../../sandbox/protocol';
import { INTERNAL, type Internal } from '../../node8/sandbox/internal';

declare const require: (id: string) => unknown;
export const internal = require(INTERNAL) as Internal;

export interface NativeAnswer {
  json: Record<string, unknown>;
  bytes: Uint8Array[];
}

/**
 * The error Node would throw for a host operation's failure: the class its `name` gives (a web
 * API's), or else the one Node gives its code (TypeError for invalid arguments, RangeError for
 * values out of range), with the code, and `errno` for a system error's (ENOENT…). The one place
 * node8 turns a HostError into an error.
 */
export function nodeError(e: HostError): Error {
  const { code, message, name } = e;
  const error = name
    ? new (name === 'TypeError' ? TypeError : name === 'RangeError' ? RangeError : Error)(message)
    : code && /^ERR_(INVALID_ARG_TYPE|INVALID_ARG_VALUE)$/.test(code)
      ? new TypeError(message)
      : code && /OUT_OF_RANGE|BUFFER_TOO_LARGE/.test(code)
        ? new RangeError(message)
        : new Error(message);
  return code ? Object.assign(error, { code, ...(/^E[A-Z]+$/.test(code) ? { errno: -1 } : {}) }) : error;
}

function answerOf(reply: HostReply): NativeAnswer {
  if (!reply[0]) throw nodeError(JSON.parse(reply[1]) as HostError);
  const body = reply[2];
  const json = JSON.parse(reply[1]) as Record<string, unknown>;
  const all = body ? new Uint8Array(body) : new Uint8Array(0);
  if (!Array.isArray(json.n)) return { json, bytes: body ? [all] : [] };
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
export function nativeSync<K extends NativeCall>(call: K, payload: NativePayload<K>, inputs: readonly Uint8Array[] = [], long = false): NativeAnswer {
  return answerOf(internal.native(call, payload, inputs, long));
}

/** A native call off the host's thread, for callback and promise APIs. */
export async function nativeAsync<K extends NativeCall>(call: K, payload: NativePayload<K>, inputs: readonly Uint8Array[] = []): Promise<NativeAnswer> {
  const size = inputs.reduce((n, b) => n + b.byteLength, 0);
  const body = new Uint8Array(size);
  let offset = 0;
  for (const b of inputs) {
    body.set(b, offset);
    offset += b.byteLength;
  }
  const args = JSON.stringify(inputs.length > 0 ? { ...payload, n: inputs.map((b) => b.byteLength) } : payload);
  let answer;
  try {
    answer = await internal.op('native', JSON.stringify({ call, args }), inputs.length > 0 ? body.buffer : undefined);
  } catch (err) {
    throw nodeError(err as HostError);
  }
  return answerOf([true, answer.payload, answer.body]);
}
