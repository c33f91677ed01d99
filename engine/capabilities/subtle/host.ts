import { randomBytes, webcrypto } from 'node:crypto';
import { pbkdf2Refusal } from '../crypto/limits';
import { HOST_WORK_LIMITS as LIMITS } from '../../host-work/limits';
import type { HostTaskAnswer } from '../../host-work/task';
import { toArrayBuffer } from '../../bytes';
import { OpError } from '../errors';
import type { OpAnswer, OpScope } from '../host-ops';
import { splitParts } from '../native';
import type { Infer } from '../schema';
import type { DescribedKey, SUBTLE_OPS } from './ops';

/**
 * The host half of `crypto.subtle` in node8 functions: Node's WebCrypto, reached through copied
 * data only. A CryptoKey lives in the sandbox as its description (type, algorithm, usages,
 * extractable) and its material (a JWK, or raw bytes for PBKDF2 and HKDF keys); each operation
 * imports the material here, does its work and answers bytes, JSON or a new key's material. Byte
 * fields of algorithm parameters (iv, salt, info…) cross as the call's parts: `{"$bytes": i}`.
 * Runs on a host-work thread (engine/host-work); its failures cross with their class's name, as
 * WebCrypto's DOMExceptions (OperationError, DataError…) and TypeErrors.
 */
/** The `random` callback: random bytes from the host's CSPRNG, as hex (1 to 65,536 bytes whatever is asked). */
export function randomHex(n: unknown): string {
  return randomBytes(Math.min(Math.max(Number(n) | 0, 1), 65536)).toString('hex');
}

type CryptoKey = webcrypto.CryptoKey;
type Jwk = webcrypto.JsonWebKey;
/** Node's SubtleCrypto with its parameters as the sandbox sends them: checked by Node itself. */
interface Subtle {
  digest(algorithm: unknown, data: Uint8Array): Promise<ArrayBuffer>;
  sign(algorithm: unknown, key: CryptoKey, data: Uint8Array): Promise<ArrayBuffer>;
  verify(algorithm: unknown, key: CryptoKey, signature: Uint8Array, data: Uint8Array): Promise<boolean>;
  encrypt(algorithm: unknown, key: CryptoKey, data: Uint8Array): Promise<ArrayBuffer>;
  decrypt(algorithm: unknown, key: CryptoKey, data: Uint8Array): Promise<ArrayBuffer>;
  deriveBits(algorithm: unknown, key: CryptoKey, length: number | null): Promise<ArrayBuffer>;
  deriveKey(algorithm: unknown, key: CryptoKey, derived: unknown, extractable: boolean, usages: string[]): Promise<CryptoKey>;
  importKey(format: string, data: Uint8Array | Jwk, algorithm: unknown, extractable: boolean, usages: string[]): Promise<CryptoKey>;
  exportKey(format: 'jwk', key: CryptoKey): Promise<Jwk>;
  exportKey(format: string, key: CryptoKey): Promise<ArrayBuffer | Jwk>;
  generateKey(algorithm: unknown, extractable: boolean, usages: string[]): Promise<CryptoKey | webcrypto.CryptoKeyPair>;
}
type KeyDescription = DescribedKey;
type SubtlePayload = Infer<(typeof SUBTLE_OPS)['subtle']>;

const RAW_ONLY = new Set(['PBKDF2', 'HKDF']);

/** An operation's answer: JSON, and bytes when it has any. */
function answer(json: unknown, bytes?: ArrayBuffer | Uint8Array): OpAnswer {
  return { payload: JSON.stringify(json ?? null), body: bytes === undefined ? undefined : bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes) };
}

/** Algorithm parameters with their byte fields (and keys, for ECDH) put back. */
async function params(value: unknown, parts: Buffer[]): Promise<unknown> {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) return Promise.all(value.map((v) => params(v, parts)));
  const record = value as Record<string, unknown>;
  if (typeof record.$bytes === 'number') return parts[record.$bytes] ?? Buffer.alloc(0);
  if (record.$key !== undefined) return importDescribed(record.$key as KeyDescription, parts);
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(record)) out[k] = await params(v, parts);
  return out;
}

/** The parameters `importKey` needs to bring a described key back. */
function importAlgorithm(algorithm: Record<string, unknown>): Record<string, unknown> {
  const name = String(algorithm.name);
  const hash = typeof algorithm.hash === 'object' && algorithm.hash !== null ? (algorithm.hash as { name: string }).name : algorithm.hash;
  return {
    name,
    ...(hash !== undefined ? { hash } : {}),
    ...(algorithm.namedCurve !== undefined ? { namedCurve: algorithm.namedCurve } : {}),
    ...(algorithm.length !== undefined && name === 'HMAC' ? { length: algorithm.length } : {}),
  };
}

async function importDescribed(key: KeyDescription, parts: Buffer[]): Promise<CryptoKey> {
  const algorithm = importAlgorithm(key.algorithm);
  if (key.material.raw !== undefined) return subtle().importKey('raw', parts[key.material.raw] ?? Buffer.alloc(0), algorithm, false, key.usages);
  // Without its key_ops: the usages say them, and Node's export repeats a usage given twice
  // (['encrypt', 'encrypt']), which its own import then refuses ("Duplicate key operation").
  const { key_ops: _ops, ...jwk } = key.material.jwk as Jwk;
  return subtle().importKey('jwk', jwk, algorithm, true, key.usages);
}

/** A key as the sandbox keeps it: its description and its material (exported here for that). */
async function describe(key: CryptoKey, extractable: boolean): Promise<KeyDescription> {
  const algorithm = JSON.parse(JSON.stringify(key.algorithm, (k, v: unknown) => (v instanceof Uint8Array ? Array.from(v) : v))) as Record<string, unknown>;
  if (RAW_ONLY.has(String(algorithm.name))) {
    throw new OpError(undefined, 'PBKDF2 and HKDF keys are kept as their raw bytes', 'NotSupportedError');
  }
  const jwk = await subtle().exportKey('jwk', key);
  return { type: key.type, algorithm, usages: key.usages, extractable, material: { jwk } };
}

/**
 * Work that holds a host thread and cannot be stopped is bounded by the host-work limits, as in
 * node8's crypto (engine/host-work/limits.ts). `bits` is the length asked of a derivation.
 */
function checkWork(algorithm: unknown, bits: unknown): void {
  const a = (typeof algorithm === 'object' && algorithm !== null ? algorithm : {}) as { iterations?: unknown; modulusLength?: unknown; hash?: unknown };
  if (a.iterations !== undefined) {
    const hash = typeof a.hash === 'object' && a.hash !== null ? (a.hash as { name?: unknown }).name : a.hash;
    const refusal = pbkdf2Refusal(Number(a.iterations), Math.ceil((typeof bits === 'number' ? bits : 512) / 8), String(hash ?? 'SHA-1'), LIMITS);
    if (refusal) throw new OpError(undefined, refusal, 'OperationError');
  }
  if (a.modulusLength !== undefined && !(Number(a.modulusLength) <= LIMITS.rsaBits))
    throw new OpError(undefined, `RSA keys of ${String(a.modulusLength)} bits are over islet's limit of ${LIMITS.rsaBits}`, 'OperationError');
}

function subtle(): Subtle {
  return webcrypto.subtle as unknown as Subtle;
}

/** The operation, as a sandbox starts it: its payload (checked) goes to a host-work thread with its bytes. */
export async function runSubtle(p: SubtlePayload, body: Uint8Array | undefined, scope: OpScope): Promise<OpAnswer> {
  const answer = await scope.services.hostWork({ kind: 'subtle', payload: JSON.stringify(p), body: body ? body.slice().buffer : undefined });
  return { payload: answer.payload, body: answer.body ? new Uint8Array(answer.body) : undefined };
}

/** One `crypto.subtle` call from a sandbox, on a host-work thread: its payload as runSubtle checked it. */
export async function subtleOp(payloadJson: string, body: ArrayBuffer | undefined): Promise<HostTaskAnswer> {
  const p = JSON.parse(payloadJson) as SubtlePayload;
  const { parts } = splitParts(p, body);
  const done = await work(p, parts);
  return { payload: done.payload, body: done.body ? toArrayBuffer(done.body) : undefined };
}

async function work(p: SubtlePayload, parts: Buffer[]): Promise<OpAnswer> {
  const algorithm = await params(p.algorithm, parts);
  checkWork(algorithm, p.method === 'deriveKey' ? (p.derivedKeyAlgorithm as { length?: unknown } | undefined)?.length : p.length);
  const data = typeof p.data === 'number' ? (parts[p.data] ?? Buffer.alloc(0)) : Buffer.alloc(0);
  const key = p.key ? await importDescribed(p.key, parts) : undefined;
  const usages = (Array.isArray(p.usages) ? p.usages : []).map(String);
  const extractable = p.extractable === true;
  try {
    switch (p.method) {
      case 'digest':
        return answer(null, await subtle().digest(algorithm, data));
      case 'sign':
        return answer(null, await subtle().sign(algorithm, key!, data));
      case 'verify':
        return answer({ ok: await subtle().verify(algorithm, key!, typeof p.signature === 'number' ? parts[p.signature]! : Buffer.alloc(0), data) });
      case 'encrypt':
        return answer(null, await subtle().encrypt(algorithm, key!, data));
      case 'decrypt':
        return answer(null, await subtle().decrypt(algorithm, key!, data));
      case 'deriveBits':
        return answer(null, await subtle().deriveBits(algorithm, key!, typeof p.length === 'number' ? p.length : null!));
      case 'importKey': {
        const format = String(p.format);
        const name = String((algorithm as { name?: unknown }).name ?? algorithm).toUpperCase();
        if (RAW_ONLY.has(name)) {
          const imported = await subtle().importKey('raw', data, algorithm, false, usages);
          return answer({ type: imported.type, algorithm: imported.algorithm, usages: imported.usages, extractable: false, material: { raw: 0 } }, data);
        }
        const keyData = format === 'jwk' ? (p.jwk as Jwk) : data;
        const imported = await subtle().importKey(format, keyData, algorithm, true, usages);
        return answer(await describe(imported, extractable));
      }
      case 'exportKey': {
        const format = String(p.format);
        if (format === 'jwk') return answer({ jwk: await subtle().exportKey('jwk', key!) });
        return answer(null, (await subtle().exportKey(format, key!)) as ArrayBuffer);
      }
      case 'generateKey': {
        const generated = await subtle().generateKey(algorithm, true, usages);
        if ('privateKey' in generated) {
          return answer({ publicKey: await describe(generated.publicKey, true), privateKey: await describe(generated.privateKey, extractable) });
        }
        return answer(await describe(generated as CryptoKey, extractable));
      }
      case 'deriveKey': {
        const derivedAlgorithm = await params(p.derivedKeyAlgorithm, parts);
        const derived = await subtle().deriveKey(algorithm, key!, derivedAlgorithm, true, usages);
        return answer(await describe(derived, extractable));
      }
    }
  } catch (err) {
    // DOMException names (OperationError, DataError…) and TypeErrors cross as the error's class, never its code.
    const e = err as Error;
    throw new OpError(undefined, e.message, e.name !== 'Error' ? e.name : undefined);
  }
}
