import * as crypto from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { HOST_WORK_LIMITS as LIMITS } from '../../host-work/limits';
import { pbkdf2Refusal, scryptRefusal } from './limits';
import type { KeySpec, NativeCall } from '../../sandbox/protocol';
import { encryptedKeyRefusal } from './key-encryption';
import { NativeError, type NativeInput, type NativeOutput } from '../../node8/host/native';

/**
 * The host half of node8's `crypto` module: Node's own OpenSSL-backed implementation, reached
 * through copied bytes only. Keys cross as their material (PEM text, DER or secret bytes, a JWK)
 * and are parsed here, with the parsed KeyObjects of recent keys kept by their material's digest.
 */

const keys = new LRUCache<string, crypto.KeyObject>({ max: 256 });

/** Names the sandbox lists in getHashes/getCiphers/getCurves. */
const CRYPTO_LISTS = { hashes: crypto.getHashes(), ciphers: crypto.getCiphers(), curves: crypto.getCurves() };

function str(value: unknown, name: string): string {
  if (typeof value !== 'string') throw new NativeError(`${name} must be a string`, 'ERR_INVALID_ARG_TYPE');
  return value;
}

/** The KeyObject of `spec` (parsing it, or finding it parsed). */
export function keyOf(spec: unknown, bytes: Buffer | undefined): crypto.KeyObject {
  if (typeof spec !== 'object' || spec === null) throw new NativeError('invalid key', 'ERR_INVALID_ARG_TYPE');
  const k = spec as KeySpec;
  const digest = crypto.createHash('sha256').update(JSON.stringify([k.kind, k.format, k.type, k.passphrase, k.pem, k.jwk])).update(bytes ?? Buffer.alloc(0)).digest('hex');
  const known = keys.get(digest);
  if (known) return known;
  if (k.kind === 'private') {
    const refusal = encryptedKeyRefusal(k, bytes);
    if (refusal) throw new NativeError(refusal, 'ERR_OUT_OF_RANGE');
  }
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
  return key.type === 'secret'
    ? { type: 'secret', symmetricKeySize: key.symmetricKeySize }
    : { type: key.type, asymmetricKeyType: key.asymmetricKeyType, asymmetricKeyDetails: details(key) };
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

function signOptions(key: crypto.KeyObject, p: Record<string, unknown>): crypto.SignKeyObjectInput {
  const options: crypto.SignKeyObjectInput = { key };
  if (typeof p.padding === 'number') options.padding = p.padding;
  if (typeof p.saltLength === 'number') options.saltLength = p.saltLength;
  if (p.dsaEncoding === 'der' || p.dsaEncoding === 'ieee-p1363') options.dsaEncoding = p.dsaEncoding;
  return options;
}

/** The first part is a key's bytes when its spec asks for them (DER or a secret); the rest follow. */
function splitKey(spec: unknown, parts: Buffer[]): { key: crypto.KeyObject; rest: Buffer[] } {
  const k = spec as KeySpec | undefined;
  const takesBytes = k?.format === 'der' || (k?.kind === 'secret' && k.format !== 'jwk');
  return takesBytes ? { key: keyOf(spec, parts[0]), rest: parts.slice(1) } : { key: keyOf(spec, undefined), rest: parts };
}

export function cryptoCall(call: NativeCall, { payload: p, parts }: NativeInput): NativeOutput {
  checkWork(call, p);
  switch (call) {
    case 'hash': {
      const hash = crypto.createHash(str(p.alg, 'algorithm'), typeof p.outputLength === 'number' ? { outputLength: p.outputLength } : undefined);
      for (const part of parts) hash.update(part);
      return { json: {}, bytes: [hash.digest()] };
    }
    case 'hmac': {
      const { key, rest } = splitKey(p.key, parts);
      const hmac = crypto.createHmac(str(p.alg, 'algorithm'), key);
      for (const part of rest) hmac.update(part);
      return { json: {}, bytes: [hmac.digest()] };
    }
    case 'cipher':
      return cipher(p, parts);
    case 'sign': {
      const { key, rest } = splitKey(p.key, parts);
      const signature = crypto.sign(typeof p.alg === 'string' ? p.alg : null, rest[0] ?? Buffer.alloc(0), signOptions(key, p));
      return { json: {}, bytes: [signature] };
    }
    case 'verify': {
      const { key, rest } = splitKey(p.key, parts);
      const ok = crypto.verify(typeof p.alg === 'string' ? p.alg : null, rest[0] ?? Buffer.alloc(0), signOptions(key, p), rest[1] ?? Buffer.alloc(0));
      return { json: { ok } };
    }
    case 'key': {
      if (p.op === 'lists') return { json: CRYPTO_LISTS };
      const { key } = splitKey(p.key, parts);
      const target = p.op === 'public' && key.type === 'private' ? crypto.createPublicKey(key) : key;
      if (p.op === 'export') return exportKey(target, (p.options ?? {}) as Record<string, unknown>);
      if (p.op === 'public') return { json: { describe: describeKey(target), jwk: target.export({ format: 'jwk' }) } };
      if (p.op === 'equals') {
        const other = keyOf(p.other, parts[1]);
        return { json: { equal: key.equals(other) } };
      }
      return { json: describeKey(key) };
    }
    case 'keygen':
      return keygenOutput(crypto.generateKeyPairSync(str(p.type, 'type') as 'rsa', (p.options ?? {}) as crypto.RSAKeyPairOptions<'pem', 'pem'>));
    case 'derive':
      return { json: {}, bytes: [deriveSync(p, parts)] };
    case 'rsa':
      return { json: {}, bytes: [rsa(p, parts)] };
    case 'random': {
      const n = Number(p.n);
      if (!Number.isInteger(n) || n < 0 || n > 2 ** 31 - 1) throw new NativeError('The "size" argument is out of range', 'ERR_OUT_OF_RANGE');
      return { json: {}, bytes: [crypto.randomBytes(n)] };
    }
    default:
      throw new NativeError(`unknown crypto call ${String(call)}`);
  }
}

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

/**
 * Whether a call is light enough for the server's thread: small inputs and outputs, and none of
 * the work whose cost does not follow its size (key derivation and generation, private-key RSA,
 * encrypted keys). The rest runs on a host-work thread (engine/host-work).
 */
export function cryptoIsLight(call: NativeCall, p: Record<string, unknown>, inputBytes: number): boolean {
  if (inputBytes > LIMITS.mainThreadBytes) return false;
  switch (call) {
    case 'hash':
      return p.outputLength === undefined || Number(p.outputLength) <= LIMITS.mainThreadBytes;
    case 'hmac':
    case 'cipher':
    case 'verify':
      return !asksForKeyWork(p.key);
    case 'random':
      return Number(p.n) <= LIMITS.mainThreadBytes;
    case 'key':
      return p.op === 'lists' || (!asksForKeyWork(p.key) && !asksForKeyWork(p.other) && typeof (p.options as { cipher?: unknown } | undefined)?.cipher !== 'string');
    case 'derive':
      return p.kind === 'hkdf' && Number(p.length) <= LIMITS.mainThreadBytes;
    case 'rsa':
      return (p.op === 'publicEncrypt' || p.op === 'publicDecrypt') && !asksForKeyWork(p.key);
    default:
      return false;
  }
}

/** A key whose parsing runs a key derivation (a passphrase, an encrypted PEM). */
function asksForKeyWork(spec: unknown): boolean {
  if (typeof spec !== 'object' || spec === null) return false;
  const k = spec as KeySpec;
  return k.passphrase !== undefined || (typeof k.pem === 'string' && k.pem.includes('ENCRYPTED'));
}

/** Bounds of every call's work (see engine/host-work/limits.ts), checked before it starts. */
function checkWork(call: NativeCall, p: Record<string, unknown>): void {
  const refusal = workRefusal(call, p);
  if (refusal) throw new NativeError(refusal, 'ERR_OUT_OF_RANGE');
}

function workRefusal(call: NativeCall, p: Record<string, unknown>): string | undefined {
  switch (call) {
    case 'hash':
      return p.outputLength !== undefined && !(Number(p.outputLength) <= LIMITS.outputBytes) ? `a hash output of ${String(p.outputLength)} bytes is over islet's limit of ${LIMITS.outputBytes}` : undefined;
    case 'random':
      return Number(p.n) > LIMITS.outputBytes ? `${String(p.n)} random bytes in one call are over islet's limit of ${LIMITS.outputBytes}` : undefined;
    case 'derive':
      return deriveRefusal(p);
    case 'keygen':
      return keygenRefusal(String(p.type), (p.options ?? {}) as Record<string, unknown>);
    default:
      return undefined;
  }
}

function deriveRefusal(p: Record<string, unknown>): string | undefined {
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

function scryptOptions(p: Record<string, unknown>): crypto.ScryptOptions {
  const options = (p.options ?? {}) as crypto.ScryptOptions;
  return { ...options, maxmem: Math.min(Number(options.maxmem ?? 32 * 1024 * 1024), LIMITS.scryptMemoryBytes) };
}

function deriveSync(p: Record<string, unknown>, parts: Buffer[]): Buffer {
  const [password = Buffer.alloc(0), salt = Buffer.alloc(0), info = Buffer.alloc(0)] = parts;
  const length = Number(p.length);
  switch (p.kind) {
    case 'pbkdf2':
      return crypto.pbkdf2Sync(password, salt, Number(p.iterations), length, str(p.digest, 'digest'));
    case 'scrypt':
      return crypto.scryptSync(password, salt, length, scryptOptions(p));
    case 'hkdf':
      return Buffer.from(crypto.hkdfSync(str(p.digest, 'digest'), password, salt, info, length));
    default:
      throw new NativeError(`unknown key derivation ${String(p.kind)}`);
  }
}

function cipher(p: Record<string, unknown>, parts: Buffer[]): NativeOutput {
  const [key = Buffer.alloc(0), iv = Buffer.alloc(0), data = Buffer.alloc(0), aad, tag] = parts;
  const alg = str(p.alg, 'algorithm');
  const options = typeof p.authTagLength === 'number' ? { authTagLength: p.authTagLength } : undefined;
  const ivOrNull = p.noIv ? null : iv;
  if (p.decrypt) {
    const decipher = crypto.createDecipheriv(alg, key, ivOrNull, options as crypto.CipherGCMOptions) as crypto.DecipherGCM;
    if (p.autoPadding === false) decipher.setAutoPadding(false);
    if (aad && aad.byteLength > 0) decipher.setAAD(aad, typeof p.plaintextLength === 'number' ? { plaintextLength: p.plaintextLength } : undefined);
    if (tag && tag.byteLength > 0) decipher.setAuthTag(tag);
    return { json: {}, bytes: [Buffer.concat([decipher.update(data), decipher.final()])] };
  }
  const encipher = crypto.createCipheriv(alg, key, ivOrNull, options as crypto.CipherGCMOptions) as crypto.CipherGCM;
  if (p.autoPadding === false) encipher.setAutoPadding(false);
  if (aad && aad.byteLength > 0) encipher.setAAD(aad, typeof p.plaintextLength === 'number' ? { plaintextLength: p.plaintextLength } : undefined);
  const out = Buffer.concat([encipher.update(data), encipher.final()]);
  let authTag: Buffer | undefined;
  try {
    authTag = encipher.getAuthTag();
  } catch {
    authTag = undefined;
  }
  return { json: { tag: authTag !== undefined }, bytes: authTag ? [out, authTag] : [out] };
}

function rsa(p: Record<string, unknown>, parts: Buffer[]): Buffer {
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
    default:
      throw new NativeError(`unknown RSA operation ${String(p.op)}`);
  }
}

