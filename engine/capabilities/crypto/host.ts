import * as crypto from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { HOST_WORK_LIMITS as LIMITS } from '../../host-work/limits';
import { OpError } from '../errors';
import type { NativeHosts, NativeOutput } from '../native-call';
import type { Infer } from '../schema';
import { encryptedKeyRefusal } from './key-encryption';
import { pbkdf2Refusal, scryptRefusal } from './limits';
import type { CRYPTO_CALLS, KeySpec } from './ops';

/**
 * The host half of node8's `crypto` module: Node's own OpenSSL-backed implementation, reached
 * through copied bytes only (the calls and their payloads are declared in ops.ts). Keys cross as
 * their material (PEM text, DER or secret bytes, a JWK) and are parsed here, with the parsed
 * KeyObjects of recent keys kept by their material's digest.
 */

const keys = new LRUCache<string, crypto.KeyObject>({ max: 256 });

/** Names the sandbox lists in getHashes/getCiphers/getCurves. */
const CRYPTO_LISTS = { hashes: crypto.getHashes(), ciphers: crypto.getCiphers(), curves: crypto.getCurves() };

type Payload<K extends keyof typeof CRYPTO_CALLS> = Infer<(typeof CRYPTO_CALLS)[K]>;

function str(value: unknown, name: string): string {
  if (typeof value !== 'string') throw new OpError('ERR_INVALID_ARG_TYPE', `${name} must be a string`);
  return value;
}

function outOfRange(refusal: string | undefined): void {
  if (refusal) throw new OpError('ERR_OUT_OF_RANGE', refusal);
}

/** The KeyObject of `spec` (parsing it, or finding it parsed). */
export function keyOf(k: KeySpec, bytes: Buffer | undefined): crypto.KeyObject {
  const digest = crypto
    .createHash('sha256')
    .update(JSON.stringify([k.kind, k.format, k.type, k.passphrase, k.pem, k.jwk]))
    .update(bytes ?? Buffer.alloc(0))
    .digest('hex');
  const known = keys.get(digest);
  if (known) return known;
  if (k.kind === 'private') outOfRange(encryptedKeyRefusal(k, bytes));
  let key: crypto.KeyObject;
  if (k.kind === 'secret') {
    key = k.format === 'jwk' ? crypto.createSecretKey(Buffer.from(str((k.jwk as crypto.JsonWebKey | undefined)?.k, 'jwk.k'), 'base64url')) : crypto.createSecretKey(bytes ?? Buffer.alloc(0));
  } else {
    const input =
      k.format === 'jwk'
        ? ({ key: k.jwk as crypto.JsonWebKey, format: 'jwk' } as const)
        : k.format === 'der'
          ? { key: bytes ?? Buffer.alloc(0), format: 'der' as const, type: k.type as 'pkcs1' | 'spki' | 'pkcs8' | 'sec1', passphrase: k.passphrase }
          : { key: str(k.pem, 'key'), format: 'pem' as const, passphrase: k.passphrase };
    key = k.kind === 'private' ? crypto.createPrivateKey(input as crypto.PrivateKeyInput) : crypto.createPublicKey(input as crypto.PublicKeyInput);
  }
  keys.set(digest, key);
  return key;
}

/** What the sandbox's KeyObject shows of a key. */
function describeKey(key: crypto.KeyObject): Record<string, unknown> {
  return key.type === 'secret' ? { type: 'secret', symmetricKeySize: key.symmetricKeySize } : { type: key.type, asymmetricKeyType: key.asymmetricKeyType, asymmetricKeyDetails: details(key) };
}

function details(key: crypto.KeyObject): Record<string, unknown> | undefined {
  const d = key.asymmetricKeyDetails;
  if (!d) return undefined;
  const out: Record<string, unknown> = { ...d };
  if (typeof d.publicExponent === 'bigint') out.publicExponent = d.publicExponent.toString();
  return out;
}

/** A key in the encoding the sandbox asked for: PEM text, DER bytes or a JWK. */
function exportKey(key: crypto.KeyObject, options: Record<string, unknown>): NativeOutput {
  if (key.type === 'secret') {
    if (options.format === 'jwk') return { json: { jwk: key.export({ format: 'jwk' }) } };
    return { json: {}, bytes: [key.export()] };
  }
  const format = options.format === 'der' || options.format === 'jwk' ? options.format : 'pem';
  if (format === 'jwk') return { json: { jwk: key.export({ format: 'jwk' }) } };
  const exported = key.export({
    format,
    type: (options.type ?? (key.type === 'public' ? 'spki' : 'pkcs8')) as 'spki',
    ...(typeof options.cipher === 'string' ? { cipher: options.cipher, passphrase: str(options.passphrase, 'passphrase') } : {}),
  } as crypto.KeyExportOptions<'pem'>);
  return typeof exported === 'string' ? { json: { pem: exported } } : { json: {}, bytes: [exported as Buffer] };
}

function signOptions(key: crypto.KeyObject, p: Payload<'sign'>): crypto.SignKeyObjectInput {
  const options: crypto.SignKeyObjectInput = { key };
  if (typeof p.padding === 'number') options.padding = p.padding;
  if (typeof p.saltLength === 'number') options.saltLength = p.saltLength;
  if (p.dsaEncoding === 'der' || p.dsaEncoding === 'ieee-p1363') options.dsaEncoding = p.dsaEncoding;
  return options;
}

/** The first part is a key's bytes when its spec asks for them (DER or a secret); the rest follow. */
function splitKey(k: KeySpec, parts: Buffer[]): { key: crypto.KeyObject; rest: Buffer[] } {
  const takesBytes = k.format === 'der' || (k.kind === 'secret' && k.format !== 'jwk');
  return takesBytes ? { key: keyOf(k, parts[0]), rest: parts.slice(1) } : { key: keyOf(k, undefined), rest: parts };
}

/** A key whose parsing runs a key derivation (a passphrase, an encrypted PEM). */
function asksForKeyWork(k: KeySpec | undefined): boolean {
  return k !== undefined && (k.passphrase !== undefined || (typeof k.pem === 'string' && k.pem.includes('ENCRYPTED')));
}

/** Small inputs only (the bound of every call on the server's thread). */
const small = (inputBytes: number) => inputBytes <= LIMITS.mainThreadBytes;

/**
 * The native calls of crypto: each call's bounds (engine/host-work/limits.ts) are checked before its
 * work starts, and whether it is light enough for the server's thread: small inputs and outputs,
 * and none of the work whose cost does not follow its size (key derivation and generation,
 * private-key RSA, encrypted keys). The rest runs on a host-work thread (engine/host-work).
 */
export const cryptoHost: NativeHosts<typeof CRYPTO_CALLS> = {
  hash: {
    light: (p, size) => small(size) && (p.outputLength === undefined || Number(p.outputLength) <= LIMITS.mainThreadBytes),
    run(p, parts) {
      outOfRange(
        p.outputLength !== undefined && !(Number(p.outputLength) <= LIMITS.outputBytes) ? `a hash output of ${String(p.outputLength)} bytes is over islet's limit of ${LIMITS.outputBytes}` : undefined,
      );
      const hash = crypto.createHash(p.alg, typeof p.outputLength === 'number' ? { outputLength: p.outputLength } : undefined);
      for (const part of parts) hash.update(part);
      return { json: {}, bytes: [hash.digest()] };
    },
  },
  hmac: {
    light: (p, size) => small(size) && !asksForKeyWork(p.key),
    run(p, parts) {
      const { key, rest } = splitKey(p.key, parts);
      const hmac = crypto.createHmac(p.alg, key);
      for (const part of rest) hmac.update(part);
      return { json: {}, bytes: [hmac.digest()] };
    },
  },
  cipher: {
    light: (_p, size) => small(size),
    run: (p, parts) => cipher(p, parts),
  },
  sign: {
    light: () => false,
    run(p, parts) {
      const { key, rest } = splitKey(p.key, parts);
      const signature = crypto.sign(typeof p.alg === 'string' ? p.alg : null, rest[0] ?? Buffer.alloc(0), signOptions(key, p));
      return { json: {}, bytes: [signature] };
    },
  },
  verify: {
    light: (p, size) => small(size) && !asksForKeyWork(p.key),
    run(p, parts) {
      const { key, rest } = splitKey(p.key, parts);
      const ok = crypto.verify(typeof p.alg === 'string' ? p.alg : null, rest[0] ?? Buffer.alloc(0), signOptions(key, p), rest[1] ?? Buffer.alloc(0));
      return { json: { ok } };
    },
  },
  key: {
    light: (p, size) => p.op === 'lists' || (small(size) && !asksForKeyWork(p.key) && !(p.op === 'equals' && asksForKeyWork(p.other)) && !(p.op === 'export' && typeof p.options.cipher === 'string')),
    run(p, parts) {
      if (p.op === 'lists') return { json: CRYPTO_LISTS };
      const { key } = splitKey(p.key, parts);
      switch (p.op) {
        case 'export':
          return exportKey(key, p.options);
        case 'public': {
          const target = key.type === 'private' ? crypto.createPublicKey(key) : key;
          return { json: { describe: describeKey(target), jwk: target.export({ format: 'jwk' }) } };
        }
        case 'equals':
          return { json: { equal: key.equals(keyOf(p.other, parts[1])) } };
        default:
          return { json: describeKey(key) };
      }
    },
  },
  keygen: {
    light: () => false,
    run(p) {
      const options = (p.options ?? {}) as Record<string, unknown>;
      outOfRange(keygenRefusal(p.type, options));
      return keygenOutput(crypto.generateKeyPairSync(p.type as 'rsa', options as unknown as crypto.RSAKeyPairOptions<'pem', 'pem'>));
    },
  },
  derive: {
    light: (p, size) => small(size) && p.kind === 'hkdf' && Number(p.length) <= LIMITS.mainThreadBytes,
    run(p, parts) {
      outOfRange(deriveRefusal(p));
      return { json: {}, bytes: [deriveSync(p, parts)] };
    },
  },
  rsa: {
    light: (p, size) => small(size) && (p.op === 'publicEncrypt' || p.op === 'publicDecrypt') && !asksForKeyWork(p.key),
    run: (p, parts) => ({ json: {}, bytes: [rsa(p, parts)] }),
  },
  random: {
    light: (p, size) => small(size) && p.n <= LIMITS.mainThreadBytes,
    run(p) {
      outOfRange(p.n > LIMITS.outputBytes ? `${String(p.n)} random bytes in one call are over islet's limit of ${LIMITS.outputBytes}` : undefined);
      if (p.n > 2 ** 31 - 1) throw new OpError('ERR_OUT_OF_RANGE', 'The "size" argument is out of range');
      return { json: {}, bytes: [crypto.randomBytes(p.n)] };
    },
  },
};

/** A generated pair, each as the encoding asked for, or as PKCS#8/SPKI PEM for the sandbox's KeyObjects. */
function keygenOutput(pair: { publicKey: unknown; privateKey: unknown }): NativeOutput {
  const out: Record<string, unknown> = {};
  const bytes: Buffer[] = [];
  for (const [name, value] of Object.entries(pair)) {
    if (typeof value === 'string') out[name] = { pem: value };
    else if (Buffer.isBuffer(value)) {
      out[name] = { der: bytes.length };
      bytes.push(value);
    } else if (value instanceof crypto.KeyObject) {
      out[name] = { pem: value.export({ format: 'pem', type: value.type === 'public' ? 'spki' : 'pkcs8' }) };
    } else {
      out[name] = { jwk: value };
    }
  }
  return { json: out, bytes };
}

function deriveRefusal(p: Payload<'derive'>): string | undefined {
  const length = Number(p.length);
  if (p.kind === 'pbkdf2') return pbkdf2Refusal(Number(p.iterations), length, String(p.digest), LIMITS);
  if (p.kind === 'scrypt') {
    const o = (p.options ?? {}) as { N?: unknown; cost?: unknown; r?: unknown; blockSize?: unknown; p?: unknown; parallelization?: unknown };
    return scryptRefusal(Number(o.N ?? o.cost ?? 16384), Number(o.r ?? o.blockSize ?? 8), Number(o.p ?? o.parallelization ?? 1), length, LIMITS);
  }
  return length > LIMITS.outputBytes ? `a derived key of ${length} bytes is over islet's limit of ${LIMITS.outputBytes}` : undefined;
}

function keygenRefusal(type: string, o: Record<string, unknown>): string | undefined {
  const over = (what: string, value: unknown, limit: number) => (Number(value ?? 0) > limit ? `${what} of ${String(value)} bits are over islet's limit of ${limit}` : undefined);
  switch (type) {
    case 'rsa':
    case 'rsa-pss':
      return over('RSA keys', o.modulusLength, LIMITS.rsaBits);
    case 'dsa':
      return over('DSA keys', o.modulusLength, LIMITS.dsaBits);
    case 'dh':
      return over('Diffie-Hellman primes', o.primeLength, LIMITS.dhPrimeBits);
    default:
      return undefined;
  }
}

function scryptOptions(p: { options?: unknown }): crypto.ScryptOptions {
  const options = (p.options ?? {}) as crypto.ScryptOptions;
  return { ...options, maxmem: Math.min(Number(options.maxmem ?? 32 * 1024 * 1024), LIMITS.scryptMemoryBytes) };
}

function deriveSync(p: Payload<'derive'>, parts: Buffer[]): Buffer {
  const [password = Buffer.alloc(0), salt = Buffer.alloc(0), info = Buffer.alloc(0)] = parts;
  const length = Number(p.length);
  switch (p.kind) {
    case 'pbkdf2':
      return crypto.pbkdf2Sync(password, salt, Number(p.iterations), length, str(p.digest, 'digest'));
    case 'scrypt':
      return crypto.scryptSync(password, salt, length, scryptOptions(p));
    case 'hkdf':
      return Buffer.from(crypto.hkdfSync(str(p.digest, 'digest'), password, salt, info, length));
  }
}

function cipher(p: Payload<'cipher'>, parts: Buffer[]): NativeOutput {
  const [key = Buffer.alloc(0), iv = Buffer.alloc(0), data = Buffer.alloc(0), aad, tag] = parts;
  const options = typeof p.authTagLength === 'number' ? { authTagLength: p.authTagLength } : undefined;
  const ivOrNull = p.noIv ? null : iv;
  const aadOptions = typeof p.plaintextLength === 'number' ? { plaintextLength: p.plaintextLength } : undefined;
  if (p.decrypt) {
    const decipher = crypto.createDecipheriv(p.alg, key, ivOrNull, options as crypto.CipherGCMOptions) as crypto.DecipherGCM;
    if (p.autoPadding === false) decipher.setAutoPadding(false);
    if (aad && aad.byteLength > 0) decipher.setAAD(aad, aadOptions);
    if (tag && tag.byteLength > 0) decipher.setAuthTag(tag);
    return { json: {}, bytes: [Buffer.concat([decipher.update(data), decipher.final()])] };
  }
  const encipher = crypto.createCipheriv(p.alg, key, ivOrNull, options as crypto.CipherGCMOptions) as crypto.CipherGCM;
  if (p.autoPadding === false) encipher.setAutoPadding(false);
  if (aad && aad.byteLength > 0) encipher.setAAD(aad, aadOptions);
  const out = Buffer.concat([encipher.update(data), encipher.final()]);
  let authTag: Buffer | undefined;
  try {
    authTag = encipher.getAuthTag();
  } catch {
    authTag = undefined;
  }
  return { json: { tag: authTag !== undefined }, bytes: authTag ? [out, authTag] : [out] };
}

function rsa(p: Payload<'rsa'>, parts: Buffer[]): Buffer {
  const { key, rest } = splitKey(p.key, parts);
  const options = { key, ...(typeof p.padding === 'number' ? { padding: p.padding } : {}), ...(typeof p.oaepHash === 'string' ? { oaepHash: p.oaepHash } : {}) };
  const data = rest[0] ?? Buffer.alloc(0);
  switch (p.op) {
    case 'publicEncrypt':
      return crypto.publicEncrypt(options, data);
    case 'privateDecrypt':
      return crypto.privateDecrypt(options, data);
    case 'privateEncrypt':
      return crypto.privateEncrypt(options, data);
    case 'publicDecrypt':
      return crypto.publicDecrypt(options, data);
  }
}
