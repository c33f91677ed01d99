// WebCrypto for node8 functions: the global `crypto` (getRandomValues, randomUUID, subtle),
// CryptoKey and SubtleCrypto. Every subtle operation is worked by the host's WebCrypto
// (host.ts in this folder): a key crosses as its material (a JWK, or raw bytes for PBKDF2
// and HKDF) and is kept here, out of user code's reach, beside its description.
import type { HostError } from '../../errors';
import type { SUBTLE_METHODS } from '../ops';
import { makeCrypto } from './random';

type SubtleMethod = (typeof SUBTLE_METHODS)[number];
import { INTERNAL, type Internal } from '../../../node8/sandbox/internal';

declare const require: (id: string) => unknown;
const internal = require(INTERNAL) as Internal;
const { DOMException } = internal.library<{ DOMException: new (message: string, name: string) => Error }>('web/events');

type Material = { jwk?: Record<string, unknown>; raw?: Uint8Array };
interface Described {
  type: 'secret' | 'public' | 'private';
  algorithm: Record<string, unknown>;
  usages: string[];
  extractable: boolean;
  material: { jwk?: Record<string, unknown>; raw?: number };
}

const materials = new WeakMap<CryptoKey, Material>();
let constructing = false;

export class CryptoKey {
  readonly type!: 'secret' | 'public' | 'private';
  readonly extractable!: boolean;
  readonly algorithm!: Record<string, unknown>;
  readonly usages!: string[];
  constructor() {
    if (!constructing) throw new TypeError('Illegal constructor');
  }
  get [Symbol.toStringTag](): string {
    return 'CryptoKey';
  }
}

function makeKey(described: Described, raw?: Uint8Array): CryptoKey {
  constructing = true;
  let key: CryptoKey;
  try {
    key = new CryptoKey();
  } finally {
    constructing = false;
  }
  const algorithm = { ...described.algorithm };
  if (Array.isArray(algorithm.publicExponent)) algorithm.publicExponent = new Uint8Array(algorithm.publicExponent as number[]);
  Object.defineProperties(key, {
    type: { value: described.type, enumerable: true },
    extractable: { value: described.extractable, enumerable: true },
    algorithm: { value: Object.freeze(algorithm), enumerable: true },
    usages: { value: Object.freeze([...described.usages]), enumerable: true },
  });
  materials.set(key, described.material.raw !== undefined ? { raw } : { jwk: described.material.jwk });
  return key;
}

/** A CryptoKey's material, for node8's `crypto.KeyObject.from` (libraries only). */
export function keyMaterialOf(key: unknown): ({ type: string } & Material) | undefined {
  if (!(key instanceof CryptoKey)) return undefined;
  return { type: key.type, ...materials.get(key)! };
}

function bytesOf(value: unknown, name: string): Uint8Array {
  if (value instanceof ArrayBuffer) return new Uint8Array(value);
  if (ArrayBuffer.isView(value)) return new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
  throw new TypeError(`${name} must be an ArrayBuffer or an ArrayBufferView`);
}

/** Collects the byte inputs of one call: each becomes `{"$bytes": i}` in the JSON. */
class Parts {
  readonly list: Uint8Array[] = [];
  add(bytes: Uint8Array): number {
    this.list.push(bytes);
    return this.list.length - 1;
  }
  /** Algorithm parameters (a name, or an object) with byte fields and keys (ECDH's `public`) replaced by references. */
  params(value: unknown): unknown {
    return typeof value === 'string' ? { name: value } : this.fields(value);
  }
  private fields(value: unknown): unknown {
    if (typeof value !== 'object' || value === null) return value;
    if (value instanceof ArrayBuffer || ArrayBuffer.isView(value)) return { $bytes: this.add(bytesOf(value, 'parameter')) };
    if (value instanceof CryptoKey) return { $key: this.key(value) };
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = k === 'hash' && typeof v === 'string' ? { name: v } : this.fields(v);
    return out;
  }
  key(key: CryptoKey): Described {
    const material = materials.get(key)!;
    return {
      type: key.type,
      algorithm: key.algorithm,
      usages: [...key.usages],
      extractable: key.extractable,
      material: material.raw ? { raw: this.add(material.raw) } : { jwk: material.jwk },
    };
  }
  body(): ArrayBuffer | undefined {
    if (this.list.length === 0) return undefined;
    const all = new Uint8Array(this.list.reduce((n, b) => n + b.byteLength, 0));
    let offset = 0;
    for (const b of this.list) {
      all.set(b, offset);
      offset += b.byteLength;
    }
    return all.buffer;
  }
}

/**
 * One subtle operation on the host; its failure comes back as the error WebCrypto throws: a
 * DOMException of the name the host gives (OperationError, DataError…), else a RangeError or a
 * TypeError.
 */
async function call(method: SubtleMethod, payload: Record<string, unknown>, parts: Parts): Promise<{ json: unknown; bytes: ArrayBuffer | undefined }> {
  const message = JSON.stringify({ method, ...payload, n: parts.list.map((b) => b.byteLength) });
  const body = parts.body();
  await takeTurn();
  let answer;
  try {
    answer = await internal.op('subtle', message, body);
  } catch (err) {
    const { name, message } = err as HostError;
    if (name && name !== 'TypeError' && name !== 'RangeError' && name.endsWith('Error')) throw new DOMException(message, name);
    throw new (name === 'RangeError' ? RangeError : TypeError)(message);
  } finally {
    endTurn();
  }
  return { json: JSON.parse(answer.payload), bytes: answer.body };
}

/**
 * Subtle operations one instance has with the host at once; the rest wait here, in the isolate's
 * own memory, and go as earlier ones end. WebCrypto callers start hundreds at once (a Promise.all
 * over a list of keys: the WPT ECDSA file imports the keys of 12 vectors and 84 bad ones in 16
 * rounds, all started together), and the host refuses past 256 an account's operations waiting for
 * its host-work threads (engine/host-work/pool.ts) and an instance's operations in flight
 * (MAX_PENDING_OPS): 112 of that file's 253 subtests failed so in one run (the count varies with what else
 * the account runs). Every subtle operation ends (the host works it on its threads, within its
 * timeout), so each waiting one gets its turn; the host's work per instance stays bounded.
 */
const SUBTLE_IN_FLIGHT = 64;
let inFlight = 0;
const waiting: (() => void)[] = [];
let nextWaiting = 0;

function takeTurn(): Promise<void> | undefined {
  if (inFlight < SUBTLE_IN_FLIGHT) {
    inFlight++;
    return undefined;
  }
  return new Promise((resolve) => waiting.push(resolve));
}

/** Hands this turn to the longest-waiting operation, if one waits. */
function endTurn(): void {
  if (nextWaiting < waiting.length) {
    const next = waiting[nextWaiting]!;
    waiting[nextWaiting++] = undefined as unknown as () => void;
    if (nextWaiting === waiting.length) {
      waiting.length = 0;
      nextWaiting = 0;
    }
    next();
  } else {
    inFlight--;
  }
}

function useKey(key: unknown, usage: string): CryptoKey {
  if (!(key instanceof CryptoKey)) throw new TypeError('key must be a CryptoKey');
  if (!key.usages.includes(usage)) throw new DOMException(`The key's usages do not include ${usage}`, 'InvalidAccessError');
  return key;
}

function keyFrom(json: unknown, bytes: ArrayBuffer | undefined): CryptoKey {
  const described = json as Described;
  return makeKey(described, described.material.raw !== undefined && bytes ? new Uint8Array(bytes).slice() : undefined);
}

export class SubtleCrypto {
  constructor(key?: unknown) {
    if (key !== SUBTLE_KEY) throw new TypeError('Illegal constructor');
  }

  async digest(algorithm: unknown, data: unknown): Promise<ArrayBuffer> {
    const parts = new Parts();
    const payload = { algorithm: parts.params(algorithm), data: parts.add(bytesOf(data, 'data')) };
    return (await call('digest', payload, parts)).bytes!;
  }

  async sign(algorithm: unknown, key: CryptoKey, data: unknown): Promise<ArrayBuffer> {
    const parts = new Parts();
    const payload = { algorithm: parts.params(algorithm), key: parts.key(useKey(key, 'sign')), data: parts.add(bytesOf(data, 'data')) };
    return (await call('sign', payload, parts)).bytes!;
  }

  async verify(algorithm: unknown, key: CryptoKey, signature: unknown, data: unknown): Promise<boolean> {
    const parts = new Parts();
    const payload = { algorithm: parts.params(algorithm), key: parts.key(useKey(key, 'verify')), signature: parts.add(bytesOf(signature, 'signature')), data: parts.add(bytesOf(data, 'data')) };
    return ((await call('verify', payload, parts)).json as { ok: boolean }).ok;
  }

  async encrypt(algorithm: unknown, key: CryptoKey, data: unknown): Promise<ArrayBuffer> {
    const parts = new Parts();
    const payload = { algorithm: parts.params(algorithm), key: parts.key(useKey(key, 'encrypt')), data: parts.add(bytesOf(data, 'data')) };
    return (await call('encrypt', payload, parts)).bytes!;
  }

  async decrypt(algorithm: unknown, key: CryptoKey, data: unknown): Promise<ArrayBuffer> {
    const parts = new Parts();
    const payload = { algorithm: parts.params(algorithm), key: parts.key(useKey(key, 'decrypt')), data: parts.add(bytesOf(data, 'data')) };
    return (await call('decrypt', payload, parts)).bytes!;
  }

  async deriveBits(algorithm: unknown, baseKey: CryptoKey, length?: number | null): Promise<ArrayBuffer> {
    const parts = new Parts();
    const payload = { algorithm: parts.params(algorithm), key: parts.key(useKey(baseKey, 'deriveBits')), length: length ?? null };
    return (await call('deriveBits', payload, parts)).bytes!;
  }

  async deriveKey(algorithm: unknown, baseKey: CryptoKey, derivedKeyAlgorithm: unknown, extractable: boolean, usages: string[]): Promise<CryptoKey> {
    const parts = new Parts();
    const payload = {
      algorithm: parts.params(algorithm),
      key: parts.key(useKey(baseKey, 'deriveKey')),
      derivedKeyAlgorithm: parts.params(derivedKeyAlgorithm),
      extractable: Boolean(extractable),
      usages: [...usages],
    };
    const { json, bytes } = await call('deriveKey', payload, parts);
    return keyFrom(json, bytes);
  }

  async importKey(format: string, keyData: unknown, algorithm: unknown, extractable: boolean, usages: string[]): Promise<CryptoKey> {
    const parts = new Parts();
    const payload: Record<string, unknown> = { format, algorithm: parts.params(algorithm), extractable: Boolean(extractable), usages: [...usages] };
    if (format === 'jwk') payload.jwk = keyData;
    else payload.data = parts.add(bytesOf(keyData, 'keyData').slice());
    const { json, bytes } = await call('importKey', payload, parts);
    return keyFrom(json, bytes);
  }

  async exportKey(format: string, key: CryptoKey): Promise<ArrayBuffer | Record<string, unknown>> {
    if (!(key instanceof CryptoKey)) throw new TypeError('key must be a CryptoKey');
    if (!key.extractable) throw new DOMException('key is not extractable', 'InvalidAccessError');
    const material = materials.get(key)!;
    if (material.raw && format === 'raw') return material.raw.slice().buffer;
    const parts = new Parts();
    const { json, bytes } = await call('exportKey', { format, key: parts.key(key) }, parts);
    return format === 'jwk' ? (json as { jwk: Record<string, unknown> }).jwk : bytes!;
  }

  async generateKey(algorithm: unknown, extractable: boolean, usages: string[]): Promise<CryptoKey | { publicKey: CryptoKey; privateKey: CryptoKey }> {
    const parts = new Parts();
    const { json } = await call('generateKey', { algorithm: parts.params(algorithm), extractable: Boolean(extractable), usages: [...usages] }, parts);
    const pair = json as { publicKey?: Described; privateKey?: Described };
    if (pair.publicKey && pair.privateKey) return { publicKey: makeKey(pair.publicKey), privateKey: makeKey(pair.privateKey) };
    return makeKey(json as Described);
  }

  async wrapKey(): Promise<never> {
    throw new DOMException('crypto.subtle.wrapKey is not supported in islet functions', 'NotSupportedError');
  }

  async unwrapKey(): Promise<never> {
    throw new DOMException('crypto.subtle.unwrapKey is not supported in islet functions', 'NotSupportedError');
  }
}

const SUBTLE_KEY = {};
const subtle = new SubtleCrypto(SUBTLE_KEY);
const random = makeCrypto(internal.random) as { getRandomValues<T>(a: T): T; randomUUID(): string };

export class Crypto {
  constructor(key?: unknown) {
    if (key !== SUBTLE_KEY) throw new TypeError('Illegal constructor');
  }
  get subtle(): SubtleCrypto {
    return subtle;
  }
  getRandomValues<T extends ArrayBufferView>(array: T): T {
    return random.getRandomValues(array);
  }
  randomUUID(): string {
    return random.randomUUID();
  }
}

export const crypto = new Crypto(SUBTLE_KEY);
