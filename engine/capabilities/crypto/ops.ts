/**
 * The operations between crypto's guest half (guest/crypto.ts, node8's `crypto`; Python's hashlib)
 * and its host half (host.ts, hashlib.ts): each one's payload, checked by the host before it runs
 * (engine/capabilities/schema.ts), and its answer. node8's are native calls (engine/capabilities/
 * native.ts): JSON and byte inputs (a key's DER or secret bytes first), answered with JSON and
 * bytes. Fields the guest passes on from user code unchanged are `any()`: Node checks them, with
 * its own messages. The guest imports types only.
 */
import { any, boolean, count, labelled, object, oneOf, optional, record, string, variants, type Infer } from '../schema';

/** How a key crosses: its kind and encoding; DER or secret bytes come as the call's first input. */
export const keySpec = object({
  kind: oneOf(['secret', 'public', 'private']),
  format: oneOf(['pem', 'der', 'jwk']),
  /** DER's type (pkcs1, spki, pkcs8, sec1), as the user gave it. */
  type: optional(any()),
  passphrase: optional(string()),
  pem: optional(string()),
  jwk: optional(any()),
});
export type KeySpec = Infer<typeof keySpec>;

const signature = { alg: any(), key: keySpec, padding: optional(any()), saltLength: optional(any()), dsaEncoding: optional(any()) };

/** node8's native calls of crypto, by name. */
export const CRYPTO_CALLS = {
  /** A digest of the inputs. */
  hash: object({ alg: labelled('algorithm', string()), outputLength: optional(any()) }),
  /** An HMAC of the inputs after the key's bytes. */
  hmac: object({ alg: labelled('algorithm', string()), key: keySpec }),
  /** Inputs: key, iv, data, additional data, tag. */
  cipher: object({
    alg: labelled('algorithm', string()),
    decrypt: boolean(),
    autoPadding: any(),
    noIv: boolean(),
    authTagLength: optional(any()),
    plaintextLength: optional(any()),
  }),
  /** Inputs: the key's bytes when it has them, the data. */
  sign: object(signature),
  /** Inputs: the key's bytes when it has them, the data, the signature. */
  verify: object(signature),
  key: variants('op', {
    info: object({ key: keySpec }),
    export: object({ key: keySpec, options: record() }),
    /** Inputs: each key's bytes (empty when it has none). */
    equals: object({ key: keySpec, other: keySpec }),
    public: object({ key: keySpec }),
    /** The names of hashes, ciphers and curves. */
    lists: object({}),
  }),
  keygen: object({ type: labelled('type', string()), options: any() }),
  /** Inputs: password (or key material), salt, info. */
  derive: variants('kind', {
    pbkdf2: object({ iterations: any(), length: any(), digest: any() }),
    scrypt: object({ length: any(), options: any() }),
    hkdf: object({ digest: any(), length: any() }),
  }),
  /** Inputs: the key's bytes when it has them, the data. */
  rsa: object({ op: oneOf(['publicEncrypt', 'privateDecrypt', 'privateEncrypt', 'publicDecrypt']), key: keySpec, padding: optional(any()), oaepHash: optional(any()) }),
  random: object({ n: count() }),
};
export type CryptoCall = keyof typeof CRYPTO_CALLS;

/** What the sandbox's KeyObject shows of a key. */
export type KeyDescription =
  | { type: 'secret'; symmetricKeySize: number | undefined }
  | { type: 'public' | 'private'; asymmetricKeyType: string | undefined; asymmetricKeyDetails: Record<string, unknown> | undefined };
/** A generated key as the encoding asked for: PEM text, DER bytes (the index of the answer's input) or a JWK. */
export type EncodedKey = { pem: string } | { der: number } | { jwk: Record<string, unknown> };

/** The JSON each call answers (its bytes are the digest, the output, the signature, the key…). */
export interface CryptoAnswers {
  hash: Record<string, never>;
  hmac: Record<string, never>;
  /** `tag`: whether the bytes end with the authentication tag. */
  cipher: { tag: boolean };
  sign: Record<string, never>;
  verify: { ok: boolean };
  key:
    | KeyDescription
    | { jwk?: Record<string, unknown>; pem?: string }
    | { equal: boolean }
    | { describe: KeyDescription; jwk: Record<string, unknown> }
    | { hashes: string[]; ciphers: string[]; curves: string[] };
  keygen: { publicKey: EncodedKey; privateKey: EncodedKey };
  derive: Record<string, never>;
  rsa: Record<string, never>;
  random: Record<string, never>;
}

/**
 * Python's hashlib derivations (operations Python waits for: engine/capabilities/host-ops.ts).
 * The body is the password then the salt; the answer is the key's bytes.
 */
export const HASHLIB_OPS = {
  pbkdf2: object({ hash: labelled('hash', string()), iterations: any(), dklen: any(), passwordLength: count() }),
  scrypt: object({ n: any(), r: any(), p: any(), maxmem: any(), dklen: any(), passwordLength: count() }),
};
