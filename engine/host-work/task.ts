import type { HostError } from '../capabilities/errors';
import type { NativeCall } from '../capabilities/ops';

/**
 * What a host-work thread is asked to do (copied data only): a native call of node8's crypto or
 * zlib, a WebCrypto operation, or a key derivation of Python's hashlib. `payload` is JSON text,
 * `body` the bytes (transferred to the thread, not copied).
 */
export type HostTask =
  | { kind: 'native'; call: NativeCall; payload: string; body?: ArrayBuffer }
  | { kind: 'subtle'; payload: string; body?: ArrayBuffer }
  | { kind: 'pbkdf2' | 'scrypt'; payload: string; body?: ArrayBuffer };

/** A task's answer: JSON text, and bytes when it has any. */
export interface HostTaskAnswer {
  payload: string;
  body?: ArrayBuffer;
}

/** What a thread posts back for its task: its answer, or its failure as it will cross to the sandbox. */
export type ThreadReply = { ok: true; payload: string; body?: ArrayBuffer } | { ok: false; error: HostError };
