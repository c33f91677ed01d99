/**
 * The operations between WebCrypto's guest half (guest/subtle.ts, guest/random.ts) and its host
 * half (host.ts, run on a host-work thread): one asynchronous operation per `crypto.subtle` call,
 * and the callback random bytes come from. Byte fields of algorithm parameters (iv, salt, info…)
 * cross as the call's byte parts: `{"$bytes": i}`. The guest imports types only.
 */
import { any, array, boolean, count, object, oneOf, optional, record, string, type Infer } from '../schema';

/** A CryptoKey as the sandbox keeps it: its description, and its material (a JWK, or the index of its raw bytes among the parts). */
export const describedKey = object({
  type: string(),
  algorithm: record(),
  usages: array(string()),
  extractable: boolean(),
  material: object({ jwk: optional(any()), raw: optional(count()) }),
});
export type DescribedKey = Infer<typeof describedKey>;

export const SUBTLE_METHODS = ['digest', 'sign', 'verify', 'encrypt', 'decrypt', 'deriveBits', 'deriveKey', 'importKey', 'exportKey', 'generateKey'] as const;

export const SUBTLE_OPS = {
  /** The user's values (algorithm parameters, formats, lengths, usages) go on to Node's WebCrypto, which checks them. */
  subtle: object({
    method: oneOf(SUBTLE_METHODS),
    algorithm: any(),
    key: optional(describedKey),
    /** Indexes of byte parts. */
    data: optional(count()),
    signature: optional(count()),
    length: optional(any()),
    derivedKeyAlgorithm: optional(any()),
    format: optional(any()),
    jwk: optional(any()),
    extractable: optional(boolean()),
    usages: optional(any()),
    /** The byte parts' lengths. */
    n: optional(array(count())),
  }),
};

/** What an operation answers: null (its bytes are the answer), `{ok}` for verify, `{jwk}`, or a key's description (a pair's for generateKey). */
export type SubtleAnswer = null | { ok: boolean } | { jwk: Record<string, unknown> } | DescribedKey | { publicKey: DescribedKey; privateKey: DescribedKey };

export interface SubtleCallbacks {
  /** Random bytes from the host's CSPRNG, as hex (getRandomValues and randomUUID, both runtimes). */
  random(bytes: number): string;
}
