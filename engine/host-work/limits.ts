/**
 * The one table of host-work limits, for node8's crypto, zlib and WebCrypto and for Python's
 * hashlib alike: how much work one host operation of a function may ask for, and what may run on
 * the server's own thread. The general entries are here; a capability's own come from its folder
 * (engine/capabilities/<name>/limits.ts, with the checks made against them) and are spread in.
 * The host reads it; the node8 runtime needs one number of it (main-thread.ts). The README's
 * security model lists them.
 */
import { CRYPTO_LIMITS } from '../capabilities/crypto/limits';
import { ZLIB_LIMITS } from '../capabilities/zlib/limits';
import { MAIN_THREAD_BYTES } from './main-thread';

const MiB = 1024 * 1024;

export const HOST_WORK_LIMITS = {
  /** Bytes one operation may take in (all its inputs together). */
  inputBytes: 32 * MiB,
  /** Bytes one operation may answer: random bytes, a hash's output length, a derived key, decompressed data. */
  outputBytes: 32 * MiB,
  /** See MAIN_THREAD_BYTES. */
  mainThreadBytes: MAIN_THREAD_BYTES,
  ...CRYPTO_LIMITS,
  ...ZLIB_LIMITS,
} as const;

export type HostWorkLimits = typeof HOST_WORK_LIMITS;
