/**
 * node8's native calls: the synchronous host operations of its crypto, zlib and fs capabilities,
 * each declared in its capability's ops.ts (the payload's check) and answered by its host half.
 * A call is JSON text and at most one body of bytes (several byte inputs are concatenated, their
 * lengths in the JSON's `n`). Every input is copied, untrusted data from the sandbox: it is checked
 * here, in one place, before any work. The bridge (engine/node8/bridge.ts) runs a call on the
 * server's thread when it is light, else off it: the function's files read asynchronously, the
 * rest on a host-work thread (engine/host-work), which runs `runNativeWork` below.
 */
import { toArrayBuffer } from '../bytes';
import { HOST_WORK_LIMITS } from '../host-work/limits';
import type { HostTaskAnswer } from '../host-work/task';
import type { InstanceServices } from '../runtime';
import { NATIVE_OFF_THREAD, type HostReply } from '../sandbox/protocol';
import { cryptoHost } from './crypto/host';
import { hostErrorText, OpError } from './errors';
import { fsCall, fsCallAsync, type FunctionFiles } from './fs/host';
import type { NativeHost, NativeOutput } from './native-call';
import { NATIVE_CALLS as CHECKS, type NativeCall } from './ops';
import type { Check } from './schema';
import { zlibHost } from './zlib/host';

/** The host halves of the calls a host-work thread runs (fs reads the function's files, which no host-work thread has). */
const HOSTS: Record<Exclude<NativeCall, 'fs'>, NativeHost<never>> = { ...cryptoHost, ...zlibHost };

/** Largest input of one native call. */
export const MAX_NATIVE_BYTES = HOST_WORK_LIMITS.inputBytes;

/** A call's bytes split by the lengths its JSON gives (`n`; one part when there is none). */
export function splitParts(payload: unknown, body: unknown): { parts: Buffer[]; size: number } {
  const bytes = body instanceof ArrayBuffer ? Buffer.from(body) : Buffer.alloc(0);
  if (bytes.byteLength > MAX_NATIVE_BYTES) throw new OpError('ERR_OUT_OF_RANGE', `input of ${bytes.byteLength} bytes is over the limit of ${MAX_NATIVE_BYTES} bytes`);
  const n = (payload as { n?: unknown }).n;
  const lengths = Array.isArray(n) ? n.map(Number) : bytes.byteLength > 0 ? [bytes.byteLength] : [];
  const parts: Buffer[] = [];
  let offset = 0;
  for (const length of lengths) {
    if (!Number.isInteger(length) || length < 0 || offset + length > bytes.byteLength) throw new OpError(undefined, 'malformed native call');
    parts.push(bytes.subarray(offset, offset + length));
    offset += length;
  }
  return { parts, size: bytes.byteLength };
}

/** A call's JSON, parsed: an object, or the call is malformed. */
export function parsePayload(json: unknown): object {
  let payload: unknown;
  try {
    payload = typeof json === 'string' ? JSON.parse(json) : undefined;
  } catch {
    payload = undefined;
  }
  if (typeof payload !== 'object' || payload === null) throw new OpError(undefined, 'malformed native call');
  return payload;
}

/** Reads a call: its name, its payload checked against its declaration, and its byte parts. */
function readCall(call: unknown, json: unknown, body: unknown): { name: NativeCall; payload: never; parts: Buffer[]; size: number } {
  if (typeof call !== 'string' || !Object.prototype.hasOwnProperty.call(CHECKS, call)) throw new OpError(undefined, `unknown native call ${String(call)}`);
  const raw = parsePayload(json);
  const { parts, size } = splitParts(raw, body);
  const check = CHECKS[call as NativeCall] as Check<unknown>;
  return { name: call as NativeCall, payload: check(raw, call) as never, parts, size };
}

function reply(output: NativeOutput): HostReply {
  if (!output.bytes || output.bytes.length === 0) return [true, JSON.stringify(output.json)];
  const json = output.bytes.length === 1 ? output.json : { ...output.json, n: output.bytes.map((b) => b.byteLength) };
  return [true, JSON.stringify(json), toArrayBuffer(output.bytes.length === 1 ? output.bytes[0]! : Buffer.concat(output.bytes))];
}

/**
 * A call on the server's thread, for light work only (see NativeHost.light): anything heavier is
 * answered NATIVE_OFF_THREAD, and the sandbox sends it again off this thread. Never throws: a
 * failure is the reply's error.
 */
export function answerNative(call: unknown, json: unknown, body: unknown, files: FunctionFiles): HostReply | typeof NATIVE_OFF_THREAD {
  try {
    const { name, payload, parts, size } = readCall(call, json, body);
    if (name === 'fs') return reply(fsCall(payload, files));
    const host = HOSTS[name];
    return host.light(payload, size) ? reply(host.run(payload, parts, true)) : NATIVE_OFF_THREAD;
  } catch (err) {
    if (err instanceof OpError && err.code === NATIVE_OFF_THREAD) return NATIVE_OFF_THREAD;
    return [false, hostErrorText(err)];
  }
}

/** A call off the server's thread: the function's files are read asynchronously, the rest is host work (checked on its thread). */
export async function runNativeOffThread(call: unknown, json: unknown, body: unknown, files: FunctionFiles, services: InstanceServices): Promise<HostTaskAnswer> {
  if (call === 'fs') {
    const { payload } = readCall(call, json, body);
    const [, text, bytes] = reply(await fsCallAsync(payload, files)) as [true, string, ArrayBuffer?];
    return { payload: text, body: bytes };
  }
  if (typeof call !== 'string' || !Object.prototype.hasOwnProperty.call(HOSTS, call) || typeof json !== 'string') throw new OpError(undefined, 'malformed native call');
  return services.hostWork({ kind: 'native', call: call as NativeCall, payload: json, body: body instanceof ArrayBuffer ? body : undefined });
}

/** A call on a host-work thread (engine/host-work/thread.ts): crypto and zlib, every bound checked. */
export function runNativeWork(call: NativeCall, json: string, body: ArrayBuffer | undefined): HostTaskAnswer {
  if (call === 'fs') throw new OpError(undefined, 'fs is not host work');
  const { name, payload, parts } = readCall(call, json, body);
  const [, text, bytes] = reply(HOSTS[name as Exclude<NativeCall, 'fs'>].run(payload, parts, false)) as [true, string, ArrayBuffer?];
  return { payload: text, body: bytes };
}
