// node8's `crypto`: hashes, HMAC, ciphers, signatures, keys and key derivation run by the host's
// OpenSSL (host.ts in this folder, through the native calls of ops.ts) on copied bytes; random
// numbers from the host's CSPRNG;
// `webcrypto` is the global `crypto`. Hash and cipher objects gather their input and hand it to the
// host once, when they are finished.
import type { NativePayload } from '../../ops';
import type { KeySpec } from '../ops';
import { LazyTransform } from '../../streams/guest/lazy-transform';
import { internal, nativeAsync, nativeSync, type NativeAnswer } from '../../guest/native';

declare const require: (id: string) => unknown;
type BufferLike = Uint8Array & { toString(encoding?: string): string };
const { Buffer } = require('buffer') as {
  Buffer: { from(value: unknown, encoding?: string): BufferLike; alloc(n: number): BufferLike; concat(list: Uint8Array[]): BufferLike; isBuffer(v: unknown): boolean };
};
// Hashes, ciphers and signatures are streams only when used as streams (see lazy-transform.ts).
const Transform = LazyTransform as unknown as new (options?: object) => { push(chunk: unknown): boolean };

type Data = string | ArrayBuffer | ArrayBufferView;
type Callback<T> = (err: Error | null, value?: T) => void;

function invalidArg(message: string): TypeError {
  return Object.assign(new TypeError(message), { code: 'ERR_INVALID_ARG_TYPE' });
}

function bytes(data: Data, encoding?: string): Uint8Array {
  if (typeof data === 'string') return Buffer.from(data, encoding ?? 'utf8');
  if (data instanceof ArrayBuffer) return new Uint8Array(data);
  if (ArrayBuffer.isView(data)) return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  throw invalidArg('The "data" argument must be of type string or an instance of Buffer, TypedArray, or DataView');
}

function out(b: Uint8Array, encoding?: string): BufferLike | string {
  const buf = Buffer.from(b);
  return encoding && encoding !== 'buffer' ? buf.toString(encoding) : buf;
}

// Keys -------------------------------------------------------------------------------------------

interface KeyMaterial {
  spec: KeySpec;
  /** DER or secret bytes, when the spec takes bytes. */
  bytes?: Uint8Array;
}

const materials = new WeakMap<KeyObject, KeyMaterial>();

/** The key's material as a native call takes it: its spec, and its bytes as the call's first input. */
function keyInputs(material: KeyMaterial): { spec: KeySpec; inputs: Uint8Array[] } {
  return { spec: material.spec, inputs: material.bytes ? [material.bytes] : [] };
}

export class KeyObject {
  readonly type: 'secret' | 'public' | 'private';
  private described: Record<string, unknown> | undefined;

  constructor(type: string, material?: KeyMaterial) {
    if (!material) throw Object.assign(new TypeError('Illegal constructor: use createSecretKey, createPublicKey or createPrivateKey'), { code: 'ERR_ILLEGAL_CONSTRUCTOR' });
    this.type = type as KeyObject['type'];
    materials.set(this, material);
  }

  private describe(): Record<string, unknown> {
    if (!this.described) {
      const { spec, inputs } = keyInputs(materials.get(this)!);
      this.described = nativeSync('key', { op: 'info', key: spec }, inputs).json;
    }
    return this.described;
  }

  get asymmetricKeyType(): string | undefined {
    return this.type === 'secret' ? undefined : (this.describe().asymmetricKeyType as string);
  }

  get asymmetricKeyDetails(): Record<string, unknown> | undefined {
    if (this.type === 'secret') return undefined;
    const details = { ...(this.describe().asymmetricKeyDetails as Record<string, unknown>) };
    if (typeof details.publicExponent === 'string') details.publicExponent = BigInt(details.publicExponent);
    return details;
  }

  get symmetricKeySize(): number | undefined {
    return this.type === 'secret' ? (materials.get(this)!.bytes?.byteLength ?? (this.describe().symmetricKeySize as number)) : undefined;
  }

  export(options: { format?: string; type?: string; cipher?: string; passphrase?: string | Uint8Array } = {}): BufferLike | string | Record<string, unknown> {
    const material = materials.get(this)!;
    if (this.type === 'secret' && options.format !== 'jwk' && material.bytes) return Buffer.from(material.bytes);
    const { spec, inputs } = keyInputs(material);
    const passphrase = options.passphrase === undefined ? undefined : typeof options.passphrase === 'string' ? options.passphrase : Buffer.from(options.passphrase).toString('utf8');
    const answer = nativeSync('key', { op: 'export', key: spec, options: { ...options, passphrase } }, inputs);
    if (answer.json.jwk) return answer.json.jwk as Record<string, unknown>;
    if (typeof answer.json.pem === 'string') return answer.json.pem;
    return Buffer.from(answer.bytes[0] ?? new Uint8Array(0));
  }

  equals(other: KeyObject): boolean {
    if (!(other instanceof KeyObject)) throw invalidArg('The "otherKeyObject" argument must be an instance of KeyObject');
    if (other.type !== this.type) return false;
    const a = keyInputs(materials.get(this)!);
    const b = keyInputs(materials.get(other)!);
    return nativeSync('key', { op: 'equals', key: a.spec, other: b.spec }, [a.inputs[0] ?? new Uint8Array(0), b.inputs[0] ?? new Uint8Array(0)]).json.equal === true;
  }

  static from(key: { type?: string; algorithm?: unknown }): KeyObject {
    const material = cryptoKeyMaterial(key);
    if (!material) throw invalidArg('The "key" argument must be an instance of CryptoKey');
    return new KeyObject(material.spec.kind, material);
  }

  get [Symbol.toStringTag](): string {
    return 'KeyObject';
  }
}

/** A CryptoKey of the global `crypto` as a key for Node's API (its JWK or raw bytes). */
function cryptoKeyMaterial(key: unknown): KeyMaterial | undefined {
  const { keyMaterialOf } = internal.library<{ keyMaterialOf(k: unknown): { type: string; jwk?: Record<string, unknown>; raw?: Uint8Array } | undefined }>('web/subtle');
  const material = keyMaterialOf(key);
  if (!material) return undefined;
  const kind = material.type as KeySpec['kind'];
  if (material.raw) return { spec: { kind: 'secret', format: 'der' }, bytes: material.raw };
  return kind === 'secret' && material.jwk ? { spec: { kind, format: 'der' }, bytes: Buffer.from(String(material.jwk.k), 'base64url') } : { spec: { kind, format: 'jwk', jwk: material.jwk } };
}

/** What Node accepts as a key (PEM text, DER or JWK options, a KeyObject, a CryptoKey) as material of `kind`. */
function keyMaterial(key: unknown, kind: KeySpec['kind']): KeyMaterial {
  if (key instanceof KeyObject) return materials.get(key)!;
  const fromCryptoKey = typeof key === 'object' && key !== null && !ArrayBuffer.isView(key) && !('key' in key) ? cryptoKeyMaterial(key) : undefined;
  if (fromCryptoKey) return fromCryptoKey;
  const options = (typeof key === 'object' && key !== null && !ArrayBuffer.isView(key) && !(key instanceof ArrayBuffer) ? key : { key }) as {
    key: unknown;
    format?: string;
    type?: string;
    passphrase?: unknown;
    encoding?: string;
  };
  if (options.key instanceof KeyObject) return materials.get(options.key)!;
  const passphrase = options.passphrase === undefined ? undefined : typeof options.passphrase === 'string' ? options.passphrase : Buffer.from(options.passphrase as Uint8Array).toString('utf8');
  if (kind === 'secret') return { spec: { kind, format: 'der' }, bytes: bytes(options.key as Data, options.encoding).slice() };
  if (options.format === 'jwk') return { spec: { kind, format: 'jwk', jwk: options.key as Record<string, unknown> } };
  if (options.format === 'der') return { spec: { kind, format: 'der', type: options.type, passphrase }, bytes: bytes(options.key as Data).slice() };
  const pem = typeof options.key === 'string' ? options.key : Buffer.from(bytes(options.key as Data)).toString('utf8');
  return { spec: { kind, format: 'pem', pem, passphrase } };
}

export function createSecretKey(key: Data, encoding?: string): KeyObject {
  return new KeyObject('secret', { spec: { kind: 'secret', format: 'der' }, bytes: bytes(key, encoding).slice() });
}

export function createPrivateKey(key: unknown): KeyObject {
  const material = keyMaterial(key, 'private');
  const probe = new KeyObject('private', material);
  (probe as unknown as { describe(): unknown }).describe();
  return probe;
}

export function createPublicKey(key: unknown): KeyObject {
  const material = key instanceof KeyObject && key.type === 'public' ? materials.get(key)! : keyMaterial(key, 'public');
  const { spec, inputs } = keyInputs(material);
  // A private key (or its PEM) gives its public half; kept as a JWK.
  const answer = nativeSync('key', { op: 'public', key: spec.kind === 'private' ? spec : { ...spec, kind: 'public' } }, inputs);
  return new KeyObject('public', { spec: { kind: 'public', format: 'jwk', jwk: answer.json.jwk as Record<string, unknown> } });
}

// Hashes and HMAC --------------------------------------------------------------------------------

class Digest extends Transform {
  protected chunks: Uint8Array[] = [];
  private done = false;
  constructor(
    protected readonly call: 'hash' | 'hmac',
    protected readonly payload: NativePayload<'hash' | 'hmac'>,
    protected readonly keyBytes: Uint8Array[],
  ) {
    super();
  }
  update(data: Data, encoding?: string): this {
    if (this.done) throw Object.assign(new Error('Digest already called'), { code: 'ERR_CRYPTO_HASH_FINALIZED' });
    this.chunks.push(bytes(data, encoding).slice());
    return this;
  }
  digest(encoding?: string): BufferLike | string {
    if (this.done) throw Object.assign(new Error('Digest already called'), { code: 'ERR_CRYPTO_HASH_FINALIZED' });
    this.done = true;
    return out(nativeSync(this.call, this.payload, [...this.keyBytes, ...this.chunks]).bytes[0]!, encoding);
  }
  _transform(chunk: Data, encoding: string, callback: () => void): void {
    this.update(chunk, encoding === 'buffer' ? undefined : encoding);
    callback();
  }
  _flush(callback: () => void): void {
    this.push(this.digest());
    callback();
  }
}

export class Hash extends Digest {
  copy(): Hash {
    const copy = new Hash(this.payload.alg, this.payload as { outputLength?: number });
    copy.chunks = [...this.chunks];
    return copy;
  }
  constructor(algorithm: string, options?: { outputLength?: number }) {
    if (typeof algorithm !== 'string') throw invalidArg('The "algorithm" argument must be of type string');
    super('hash', { alg: algorithm, ...(options?.outputLength !== undefined ? { outputLength: options.outputLength } : {}) }, []);
    // Node reports an unknown algorithm when the hash is made; one the host took once is not asked again.
    const checked = `${algorithm}:${options?.outputLength ?? ''}`;
    if (!checkedHashes.has(checked)) {
      nativeSync('hash', this.payload as NativePayload<'hash'>, []);
      checkedHashes.add(checked);
    }
  }
}
const checkedHashes = new Set<string>();

export class Hmac extends Digest {
  constructor(algorithm: string, key: unknown) {
    const material = keyMaterial(key, 'secret');
    super('hmac', { alg: algorithm, key: material.spec }, material.bytes ? [material.bytes] : []);
  }
}

export const createHash = (algorithm: string, options?: { outputLength?: number }) => new Hash(algorithm, options);
export const createHmac = (algorithm: string, key: unknown) => new Hmac(algorithm, key);
export const hash = (algorithm: string, data: Data, outputEncoding = 'hex') => createHash(algorithm).update(data).digest(outputEncoding);

// Random -----------------------------------------------------------------------------------------

function random(n: number): Uint8Array {
  if (!Number.isInteger(n) || n < 0 || n > 2 ** 31 - 1)
    throw Object.assign(new RangeError(`The value of "size" is out of range. It must be >= 0 && <= 2147483647. Received ${n}`), { code: 'ERR_OUT_OF_RANGE' });
  if (n <= 65536) {
    const b = new Uint8Array(n);
    (globalThis as unknown as { crypto: { getRandomValues(b: Uint8Array): void } }).crypto.getRandomValues(b);
    return b;
  }
  return nativeSync('random', { n }).bytes[0]!;
}

export function randomBytes(size: number, callback?: Callback<BufferLike>): BufferLike | undefined {
  const b = Buffer.from(random(size));
  if (typeof callback !== 'function') return b;
  queueMicrotask(() => callback(null, b));
  return undefined;
}

export function randomFillSync<T extends ArrayBufferView>(buffer: T, offset = 0, size?: number): T {
  const view = new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength);
  const length = size ?? view.byteLength - offset;
  view.set(random(length), offset);
  return buffer;
}

export function randomFill<T extends ArrayBufferView>(buffer: T, ...args: unknown[]): void {
  const callback = args.pop() as Callback<T>;
  const [offset, size] = args as [number?, number?];
  const filled = randomFillSync(buffer, offset, size);
  queueMicrotask(() => callback(null, filled));
}

export function randomInt(min: number, max?: number | Callback<number>, callback?: Callback<number>): number | undefined {
  let lo = min;
  let hi = max;
  let cb = callback;
  if (typeof hi !== 'number') {
    cb = hi as Callback<number> | undefined;
    hi = lo;
    lo = 0;
  }
  if (!Number.isSafeInteger(lo) || !Number.isSafeInteger(hi) || hi <= lo)
    throw Object.assign(new RangeError(`The value of "max" is out of range. It must be greater than the value of "min" (${lo}). Received ${hi}`), { code: 'ERR_OUT_OF_RANGE' });
  const range = hi - lo;
  const limit = 2 ** 48 - (2 ** 48 % range);
  let value: number;
  do {
    const b = random(6);
    value = b[0]! * 2 ** 40 + b[1]! * 2 ** 32 + b[2]! * 2 ** 24 + b[3]! * 2 ** 16 + b[4]! * 2 ** 8 + b[5]!;
  } while (value >= limit);
  const result = lo + (value % range);
  if (typeof cb !== 'function') return result;
  queueMicrotask(() => cb!(null, result));
  return undefined;
}

export const randomUUID = () => (globalThis as unknown as { crypto: { randomUUID(): string } }).crypto.randomUUID();
export const getRandomValues = <T extends ArrayBufferView>(array: T): T => (globalThis as unknown as { crypto: { getRandomValues(a: T): T } }).crypto.getRandomValues(array);

export function timingSafeEqual(a: ArrayBufferView, b: ArrayBufferView): boolean {
  const x = bytes(a);
  const y = bytes(b);
  if (x.byteLength !== y.byteLength) throw Object.assign(new RangeError('Input buffers must have the same byte length'), { code: 'ERR_CRYPTO_TIMING_SAFE_EQUAL_LENGTH' });
  let diff = 0;
  for (let i = 0; i < x.byteLength; i++) diff |= x[i]! ^ y[i]!;
  return diff === 0;
}

// Key derivation ---------------------------------------------------------------------------------

function derive(payload: NativePayload<'derive'>, inputs: Uint8Array[], callback?: Callback<BufferLike>): BufferLike | undefined {
  if (typeof callback !== 'function') return Buffer.from(nativeSync('derive', payload, inputs).bytes[0]!);
  nativeAsync('derive', payload, inputs).then(
    (a) => callback(null, Buffer.from(a.bytes[0]!)),
    (err: Error) => callback(err),
  );
  return undefined;
}

// Key derivation holds the host's thread for its whole work: even the synchronous calls are
// worked off it while this isolate waits.
function deriveSync(payload: NativePayload<'derive'>, inputs: Uint8Array[]): BufferLike {
  return Buffer.from(nativeSync('derive', payload, inputs, true).bytes[0]!);
}

export const pbkdf2Sync = (password: Data, salt: Data, iterations: number, keylen: number, digest: string) =>
  deriveSync({ kind: 'pbkdf2', iterations, length: keylen, digest }, [bytes(password), bytes(salt)]);
export const pbkdf2 = (password: Data, salt: Data, iterations: number, keylen: number, digest: string, callback: Callback<BufferLike>) =>
  void derive({ kind: 'pbkdf2', iterations, length: keylen, digest }, [bytes(password), bytes(salt)], callback);
export const scryptSync = (password: Data, salt: Data, keylen: number, options?: Record<string, unknown>) => deriveSync({ kind: 'scrypt', length: keylen, options }, [bytes(password), bytes(salt)]);
export function scrypt(password: Data, salt: Data, keylen: number, options: Record<string, unknown> | Callback<BufferLike>, callback?: Callback<BufferLike>): void {
  const cb = typeof options === 'function' ? options : callback!;
  derive({ kind: 'scrypt', length: keylen, options: typeof options === 'function' ? undefined : options }, [bytes(password), bytes(salt)], cb);
}
export const hkdfSync = (digest: string, ikm: Data | KeyObject, salt: Data, info: Data, keylen: number) =>
  deriveSync({ kind: 'hkdf', digest, length: keylen }, [ikm instanceof KeyObject ? materials.get(ikm)!.bytes! : bytes(ikm), bytes(salt), bytes(info)]).slice().buffer;
export const hkdf = (digest: string, ikm: Data | KeyObject, salt: Data, info: Data, keylen: number, callback: Callback<ArrayBuffer>) =>
  void derive({ kind: 'hkdf', digest, length: keylen }, [ikm instanceof KeyObject ? materials.get(ikm)!.bytes! : bytes(ikm), bytes(salt), bytes(info)], (err, b) => callback(err, b?.slice().buffer));

// Ciphers ----------------------------------------------------------------------------------------

class CipherBase extends Transform {
  private readonly chunks: Uint8Array[] = [];
  private aad: Uint8Array | undefined;
  private tag: Uint8Array | undefined;
  private autoPadding = true;
  private finished = false;
  private plaintextLength: number | undefined;

  constructor(
    private readonly decrypt: boolean,
    private readonly algorithm: string,
    private readonly key: Uint8Array,
    private readonly iv: Uint8Array | null,
    private readonly authTagLength: number | undefined,
  ) {
    super();
  }

  update(data: Data, inputEncoding?: string, outputEncoding?: string): BufferLike | string {
    if (this.finished) throw Object.assign(new Error('Unsupported state'), { code: 'ERR_CRYPTO_INVALID_STATE' });
    this.chunks.push(bytes(data, inputEncoding).slice());
    return out(new Uint8Array(0), outputEncoding);
  }

  final(outputEncoding?: string): BufferLike | string {
    if (this.finished) throw Object.assign(new Error('Unsupported state'), { code: 'ERR_CRYPTO_INVALID_STATE' });
    this.finished = true;
    const answer: NativeAnswer = nativeSync(
      'cipher',
      {
        alg: this.algorithm,
        decrypt: this.decrypt,
        autoPadding: this.autoPadding,
        noIv: this.iv === null,
        ...(this.authTagLength !== undefined ? { authTagLength: this.authTagLength } : {}),
        ...(this.plaintextLength !== undefined ? { plaintextLength: this.plaintextLength } : {}),
      },
      [this.key, this.iv ?? new Uint8Array(0), concatAll(this.chunks), this.aad ?? new Uint8Array(0), this.tag ?? new Uint8Array(0)],
    );
    if (!this.decrypt && answer.json.tag) this.tag = answer.bytes[1];
    return out(answer.bytes[0]!, outputEncoding);
  }

  setAAD(aad: Data, options?: { plaintextLength?: number }): this {
    this.aad = bytes(aad).slice();
    this.plaintextLength = options?.plaintextLength;
    return this;
  }

  setAutoPadding(autoPadding = true): this {
    this.autoPadding = autoPadding;
    return this;
  }

  getAuthTag(): BufferLike {
    if (this.decrypt || !this.finished || !this.tag) throw Object.assign(new Error('Invalid state for operation getAuthTag'), { code: 'ERR_CRYPTO_INVALID_STATE' });
    return Buffer.from(this.tag);
  }

  setAuthTag(tag: Data, encoding?: string): this {
    this.tag = bytes(tag, encoding).slice();
    return this;
  }

  _transform(chunk: Data, encoding: string, callback: () => void): void {
    this.update(chunk, encoding === 'buffer' ? undefined : encoding);
    callback();
  }

  _flush(callback: (err?: Error | null) => void): void {
    try {
      this.push(this.final());
      callback();
    } catch (err) {
      callback(err as Error);
    }
  }
}

function concatAll(chunks: Uint8Array[]): Uint8Array {
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
}

function keyBytes(key: unknown): Uint8Array {
  if (key instanceof KeyObject) return materials.get(key)!.bytes ?? new Uint8Array(0);
  return bytes(key as Data).slice();
}

export const createCipheriv = (algorithm: string, key: unknown, iv: Data | null, options?: { authTagLength?: number }) =>
  new CipherBase(false, algorithm, keyBytes(key), iv === null ? null : bytes(iv).slice(), options?.authTagLength);
export const createDecipheriv = (algorithm: string, key: unknown, iv: Data | null, options?: { authTagLength?: number }) =>
  new CipherBase(true, algorithm, keyBytes(key), iv === null ? null : bytes(iv).slice(), options?.authTagLength);

// Signatures -------------------------------------------------------------------------------------

function signPayload(algorithm: string | null | undefined, key: unknown, kind: 'public' | 'private'): { payload: NativePayload<'sign'>; inputs: Uint8Array[] } {
  const material = keyMaterial(key, kind);
  const options = (typeof key === 'object' && key !== null && !(key instanceof KeyObject) && !ArrayBuffer.isView(key) ? key : {}) as Record<string, unknown>;
  const payload: NativePayload<'sign'> = { alg: algorithm ?? null, key: material.spec };
  for (const name of ['padding', 'saltLength', 'dsaEncoding'] as const) if (options[name] !== undefined) payload[name] = options[name];
  return { payload, inputs: material.bytes ? [material.bytes] : [] };
}

export function sign(algorithm: string | null | undefined, data: Data, key: unknown, callback?: Callback<BufferLike>): BufferLike | undefined {
  const { payload, inputs } = signPayload(algorithm, key, 'private');
  const signature = Buffer.from(nativeSync('sign', payload, [...inputs, bytes(data)]).bytes[0]!);
  if (typeof callback !== 'function') return signature;
  queueMicrotask(() => callback(null, signature));
  return undefined;
}

export function verify(algorithm: string | null | undefined, data: Data, key: unknown, signature: Data, callback?: Callback<boolean>): boolean | undefined {
  const { payload, inputs } = signPayload(algorithm, key, key instanceof KeyObject ? (key.type === 'secret' ? 'public' : key.type) : 'public');
  const ok = nativeSync('verify', payload, [...inputs, bytes(data), bytes(signature)]).json.ok === true;
  if (typeof callback !== 'function') return ok;
  queueMicrotask(() => callback(null, ok));
  return undefined;
}

class SignBase extends Transform {
  private readonly chunks: Uint8Array[] = [];
  constructor(private readonly algorithm: string) {
    super();
  }
  update(data: Data, encoding?: string): this {
    this.chunks.push(bytes(data, encoding).slice());
    return this;
  }
  _transform(chunk: Data, encoding: string, callback: () => void): void {
    this.update(chunk, encoding === 'buffer' ? undefined : encoding);
    callback();
  }
  protected data(): Uint8Array {
    return concatAll(this.chunks);
  }
  protected get alg(): string {
    return this.algorithm;
  }
}

export class Sign extends SignBase {
  sign(key: unknown, outputEncoding?: string): BufferLike | string {
    return out(sign(this.alg, this.data(), key)!, outputEncoding);
  }
}

export class Verify extends SignBase {
  verify(key: unknown, signature: Data, signatureEncoding?: string): boolean {
    return verify(this.alg, this.data(), key, bytes(signature, signatureEncoding))!;
  }
}

export const createSign = (algorithm: string) => new Sign(algorithm);
export const createVerify = (algorithm: string) => new Verify(algorithm);

// RSA encryption ---------------------------------------------------------------------------------

function rsa(op: NativePayload<'rsa'>['op'], kind: 'public' | 'private', key: unknown, data: Data): BufferLike {
  const material = keyMaterial(key, kind);
  const options = (typeof key === 'object' && key !== null && !(key instanceof KeyObject) && !ArrayBuffer.isView(key) ? key : {}) as Record<string, unknown>;
  const payload: NativePayload<'rsa'> = { op, key: material.spec };
  if (options.padding !== undefined) payload.padding = options.padding;
  if (options.oaepHash !== undefined) payload.oaepHash = options.oaepHash;
  return Buffer.from(nativeSync('rsa', payload, [...(material.bytes ? [material.bytes] : []), bytes(data)]).bytes[0]!);
}
export const publicEncrypt = (key: unknown, data: Data) => rsa('publicEncrypt', 'public', key, data);
export const privateDecrypt = (key: unknown, data: Data) => rsa('privateDecrypt', 'private', key, data);
export const privateEncrypt = (key: unknown, data: Data) => rsa('privateEncrypt', 'private', key, data);
export const publicDecrypt = (key: unknown, data: Data) => rsa('publicDecrypt', 'public', key, data);

// Key generation ---------------------------------------------------------------------------------

function generated(answer: NativeAnswer, which: 'publicKey' | 'privateKey', options: Record<string, unknown>): unknown {
  const value = answer.json[which] as { pem?: string; der?: number; jwk?: Record<string, unknown> };
  const asked = options[`${which}Encoding`];
  if (asked) return value.pem ?? value.jwk ?? Buffer.from(answer.bytes[value.der ?? 0]!);
  const kind = which === 'publicKey' ? 'public' : 'private';
  return new KeyObject(kind, { spec: { kind, format: 'pem', pem: value.pem } });
}

export function generateKeyPairSync(type: string, options: Record<string, unknown> = {}): { publicKey: unknown; privateKey: unknown } {
  const answer = nativeSync('keygen', { type, options }, [], true);
  return { publicKey: generated(answer, 'publicKey', options), privateKey: generated(answer, 'privateKey', options) };
}

export function generateKeyPair(type: string, options: Record<string, unknown>, callback: (err: Error | null, publicKey?: unknown, privateKey?: unknown) => void): void {
  nativeAsync('keygen', { type, options }).then(
    (answer) => callback(null, generated(answer, 'publicKey', options), generated(answer, 'privateKey', options)),
    (err: Error) => callback(err),
  );
}

export function generateKeySync(type: 'hmac' | 'aes', options: { length: number }): KeyObject {
  return createSecretKey(random(Math.floor(options.length / 8)));
}

// Lists, constants and WebCrypto -----------------------------------------------------------------

let lists: { hashes: string[]; ciphers: string[]; curves: string[] } | undefined;
const list = () => (lists ??= nativeSync('key', { op: 'lists' }).json as unknown as NonNullable<typeof lists>);
export const getHashes = () => [...list().hashes];
export const getCiphers = () => [...list().ciphers];
export const getCurves = () => [...list().curves];
export const getFips = () => 0;

export const constants = {
  RSA_PKCS1_PADDING: 1,
  RSA_NO_PADDING: 3,
  RSA_PKCS1_OAEP_PADDING: 4,
  RSA_X931_PADDING: 5,
  RSA_PKCS1_PSS_PADDING: 6,
  RSA_PSS_SALTLEN_DIGEST: -1,
  RSA_PSS_SALTLEN_MAX_SIGN: -2,
  RSA_PSS_SALTLEN_AUTO: -2,
  POINT_CONVERSION_COMPRESSED: 2,
  POINT_CONVERSION_UNCOMPRESSED: 4,
  POINT_CONVERSION_HYBRID: 6,
};

function unavailable(name: string) {
  return () => {
    throw Object.assign(new Error(`crypto.${name} is not available in islet functions`), { code: 'ERR_METHOD_NOT_IMPLEMENTED' });
  };
}

const crypto = {
  createHash,
  createHmac,
  hash,
  Hash,
  Hmac,
  randomBytes,
  randomFillSync,
  randomFill,
  randomInt,
  randomUUID,
  getRandomValues,
  pseudoRandomBytes: randomBytes,
  prng: randomBytes,
  rng: randomBytes,
  timingSafeEqual,
  pbkdf2,
  pbkdf2Sync,
  scrypt,
  scryptSync,
  hkdf,
  hkdfSync,
  createCipheriv,
  createDecipheriv,
  sign,
  verify,
  createSign,
  createVerify,
  Sign,
  Verify,
  publicEncrypt,
  privateDecrypt,
  privateEncrypt,
  publicDecrypt,
  KeyObject,
  createSecretKey,
  createPublicKey,
  createPrivateKey,
  generateKeyPair,
  generateKeyPairSync,
  generateKeySync,
  getHashes,
  getCiphers,
  getCurves,
  getFips,
  constants,
  createECDH: unavailable('createECDH'),
  createDiffieHellman: unavailable('createDiffieHellman'),
  getDiffieHellman: unavailable('getDiffieHellman'),
  diffieHellman: unavailable('diffieHellman'),
  createCipher: unavailable('createCipher'),
  createDecipher: unavailable('createDecipher'),
  setEngine: unavailable('setEngine'),
  secureHeapUsed: unavailable('secureHeapUsed'),
};
for (const name of ['webcrypto', 'subtle']) {
  Object.defineProperty(crypto, name, {
    enumerable: true,
    get: () => {
      const web = (globalThis as unknown as { crypto: { subtle: unknown } }).crypto;
      return name === 'webcrypto' ? web : web.subtle;
    },
  });
}

export default crypto;
