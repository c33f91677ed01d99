/**
 * The operation between zlib's guest half (guest/zlib.ts, guest/zlib-native.ts: node8's `zlib` and
 * the compression streams) and its host half (host.ts): a native call (engine/capabilities/
 * native.ts) with one input, answered with its output's bytes, or zlib's constants as JSON. The
 * guest imports types only.
 */
import { lenientRecord, object, oneOf, optional } from '../schema';

export const ZLIB_METHODS = ['gzip', 'gunzip', 'deflate', 'inflate', 'deflateRaw', 'inflateRaw', 'unzip', 'brotliCompress', 'brotliDecompress'] as const;
export type ZlibMethod = (typeof ZLIB_METHODS)[number];

export const ZLIB_CALLS = {
  /** One method on the call's input (`options` as Node's, bounded by the host; `info: true` answers `{consumed}` too), or zlib's `constants`. */
  zlib: object({ op: oneOf(['constants', ...ZLIB_METHODS]), options: optional(lenientRecord()) }),
};

export interface ZlibAnswers {
  /** `constants` answers zlib.constants; the others answer bytes. */
  zlib: Record<string, number>;
}
