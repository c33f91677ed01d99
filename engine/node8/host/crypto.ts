import * as crypto from 'node:crypto';
import { promisify } from 'node:util';
import { LRUCache } from 'lru-cache';
import type { KeySpec, NativeCall } from '../../sandbox/protocol';
import { NativeError, type NativeInput, type NativeOutput } from './native';

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

/** Key derivation and key generation off the host's thread (Node runs them in its thread pool). */
export async function cryptoCallAsync(call: NativeCall, input: NativeInput): Promise<NativeOutput> {
  const p = input.payload;
  checkWork(call, p);
  if (call === 'derive') return { json: {}, bytes: [await deriveAsync(p, input.parts)] };
  if (call === 'keygen') {
    const generate = promisify(crypto.generateKeyPair) as (type: string, options: unknown) => Promise<{ publicKey: string; privateKey: string }>;
    return keygenOutput(await generate(str(p.type, 'type'), p.options ?? {}));
  }
  return cryptoCall(call, input);
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

const MAX_SCRYPT_MEMORY = 64 * 1024 * 1024;
/**
 * Key derivation and generation hold a thread of the host's pool for their whole work and cannot
 * be stopped, whatever the function's timeout: these bound them to about a second of that thread.
 */
const MAX_PBKDF2_ITERATIONS = 2_000_000;
const MAX_RSA_BITS = 4096;

/** Bounds of work that cannot be stopped once it runs (see MAX_PBKDF2_ITERATIONS). */
function checkWork(call: NativeCall, p: Record<string, unknown>): void {
  if (call === 'derive' && p.kind === 'pbkdf2' && !(Number(p.iterations) <= MAX_PBKDF2_ITERATIONS)) {
    throw new NativeError(`PBKDF2 with ${String(p.iterations)} iterations is over islet's limit of ${MAX_PBKDF2_ITERATIONS}`, 'ERR_OUT_OF_RANGE');
  }
  const bits = Number((p.options as { modulusLength?: unknown } | undefined)?.modulusLength ?? 0);
  if (call === 'keygen' && bits > MAX_RSA_BITS) {
    throw new NativeError(`RSA keys of ${bits} bits are over islet's limit of ${MAX_RSA_BITS}`, 'ERR_OUT_OF_RANGE');
  }
}

function scryptOptions(p: Record<string, unknown>): crypto.ScryptOptions {
  const options = (p.options ?? {}) as crypto.ScryptOptions;
  return { ...options, maxmem: Math.min(Number(options.maxmem ?? 32 * 1024 * 1024), MAX_SCRYPT_MEMORY) };
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

async function deriveAsync(p: Record<string, unknown>, parts: Buffer[]): Promise<Buffer> {
  const [password = Buffer.alloc(0), salt = Buffer.alloc(0), info = Buffer.alloc(0)] = parts;
  const length = Number(p.length);
  switch (p.kind) {
    case 'pbkdf2':
      return promisify(crypto.pbkdf2)(password, salt, Number(p.iterations), length, str(p.digest, 'digest'));
    case 'scrypt':
      return new Promise((resolve, reject) => crypto.scrypt(password, salt, length, scryptOptions(p), (err, key) => (err ? reject(err) : resolve(key))));
    case 'hkdf':
      return Buffer.from(await promisify(crypto.hkdf)(str(p.digest, 'digest'), password, salt, info, length));
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

