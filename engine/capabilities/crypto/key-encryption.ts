import { HOST_WORK_LIMITS } from '../../host-work/limits';
import { pbkdf2Refusal, scryptRefusal } from './limits';

/**
 * The work an encrypted private key asks for before it can be used: a PKCS#8 key names its own
 * key derivation and iteration count, so a key of a few hundred bytes can ask OpenSSL for hours of
 * PBKDF2 or gigabytes of scrypt. Read here from the key's DER (a small reader, just enough for
 * EncryptedPrivateKeyInfo) and held to the host-work limits before OpenSSL sees the key.
 */

const OID = {
  pbes2: '1.2.840.113549.1.5.13',
  pbkdf2: '1.2.840.113549.1.5.12',
  scrypt: '1.3.6.1.4.1.11591.4.11',
};
/** PKCS#5 v1.5 (1.2.840.113549.1.5.x) and PKCS#12 (1.2.840.113549.1.12.1.x) schemes: parameters are salt and iterations. */
const PBES1 = /^1\.2\.840\.113549\.1\.(5\.(1|3|4|6|10|11)|12\.1\.[1-6])$/;

interface Node {
  tag: number;
  start: number;
  end: number;
}

class DerError extends Error {}

function read(der: Uint8Array, offset: number): Node {
  if (offset + 2 > der.length) throw new DerError('truncated');
  const tag = der[offset]!;
  let length = der[offset + 1]!;
  let start = offset + 2;
  if (length & 0x80) {
    const count = length & 0x7f;
    if (count === 0 || count > 4 || start + count > der.length) throw new DerError('bad length');
    length = 0;
    for (let i = 0; i < count; i++) length = length * 256 + der[start + i]!;
    start += count;
  }
  if (start + length > der.length) throw new DerError('truncated');
  return { tag, start, end: start + length };
}

function children(der: Uint8Array, node: Node): Node[] {
  const out: Node[] = [];
  for (let offset = node.start; offset < node.end; ) {
    const child = read(der, offset);
    out.push(child);
    offset = child.end;
  }
  return out;
}

function oid(der: Uint8Array, node: Node): string {
  if (node.tag !== 0x06 || node.end === node.start) throw new DerError('not an OID');
  const first = der[node.start]!;
  const parts = [Math.min(2, Math.floor(first / 40)), first - Math.min(2, Math.floor(first / 40)) * 40];
  let value = 0;
  for (let i = node.start + 1; i < node.end; i++) {
    value = value * 128 + (der[i]! & 0x7f);
    if (!(der[i]! & 0x80)) {
      parts.push(value);
      value = 0;
    }
  }
  return parts.join('.');
}

/** An INTEGER's value; Infinity when it does not fit a safe integer (a count that large is refused anyway). */
function integer(der: Uint8Array, node: Node | undefined): number {
  if (!node || node.tag !== 0x02) throw new DerError('not an INTEGER');
  let value = 0;
  for (let i = node.start; i < node.end; i++) value = value * 256 + der[i]!;
  return Number.isSafeInteger(value) ? value : Infinity;
}

/** The DER of a PEM block of this label, or undefined. */
function pemBody(pem: string, label: string): Uint8Array | undefined {
  const m = new RegExp(`-----BEGIN ${label}-----([\\s\\S]*?)-----END ${label}-----`).exec(pem);
  return m ? Buffer.from(m[1]!.replace(/\s+/g, ''), 'base64') : undefined;
}

/**
 * Why this key is refused (its derivation is over the limits, or unknown), or undefined. Keys in
 * PEM or DER; a key that is not an encrypted PKCS#8 one asks for no such work (legacy encrypted PEM
 * derives its key with one MD5 round).
 */
export function encryptedKeyRefusal(key: { pem?: unknown; format?: unknown; type?: unknown; passphrase?: unknown }, der: Uint8Array | undefined): string | undefined {
  const bytes = typeof key.pem === 'string' ? pemBody(key.pem, 'ENCRYPTED PRIVATE KEY') : key.format === 'der' && key.passphrase !== undefined ? der : undefined;
  if (!bytes) return undefined;
  try {
    return refusalOf(bytes);
  } catch (err) {
    if (err instanceof DerError) return key.format === 'der' ? undefined : `the encrypted private key cannot be read (${err.message})`;
    throw err;
  }
}

function refusalOf(der: Uint8Array): string | undefined {
  const [algorithm] = children(der, read(der, 0));
  if (!algorithm) throw new DerError('no algorithm');
  // A PrivateKeyInfo (not encrypted) starts with its version, an INTEGER.
  if (algorithm.tag !== 0x30) return undefined;
  const [schemeOid, params] = children(der, algorithm);
  const scheme = oid(der, schemeOid!);
  if (PBES1.test(scheme)) {
    const iterations = integer(der, children(der, params!)[1]);
    return iterations > HOST_WORK_LIMITS.pbkdf2Rounds / 2 ? `the private key is encrypted with ${iterations} iterations, over islet's limit of ${HOST_WORK_LIMITS.pbkdf2Rounds / 2}` : undefined;
  }
  if (scheme !== OID.pbes2) return `the private key is encrypted with an unknown scheme (${scheme})`;
  const [kdf] = children(der, params!);
  const [kdfOid, kdfParams] = children(der, kdf!);
  const name = oid(der, kdfOid!);
  const fields = children(der, kdfParams!);
  if (name === OID.pbkdf2) {
    const iterations = integer(der, fields[1]);
    // The key that encrypts a private key is at most 32 bytes: two blocks of SHA-1, one of the others.
    return pbkdf2Refusal(iterations, 32, 'sha1', HOST_WORK_LIMITS) && `the private key is encrypted with ${iterations} PBKDF2 iterations, over islet's limit of ${HOST_WORK_LIMITS.pbkdf2Rounds / 2}`;
  }
  if (name === OID.scrypt) {
    const refusal = scryptRefusal(integer(der, fields[1]), integer(der, fields[2]), integer(der, fields[3]), 32, HOST_WORK_LIMITS);
    return refusal && `the private key is encrypted with scrypt: ${refusal}`;
  }
  return `the private key is encrypted with an unknown key derivation (${name})`;
}
