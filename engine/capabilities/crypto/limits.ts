/**
 * crypto's entries of the one table of host-work limits (engine/host-work/limits.ts spreads them
 * in), for node8's crypto and WebCrypto and Python's hashlib alike, and the checks made against
 * them before any work starts. No imports: the checks take the table as an argument.
 */
const MiB = 1024 * 1024;

export const CRYPTO_LIMITS = {
  /**
   * HMAC rounds of one PBKDF2 derivation: iterations times output blocks (about 2 s of one core
   * for SHA-256 on the development machine; Django's 870,000 iterations are 0.45 s). Also the
   * iteration count an encrypted private key may ask for.
   */
  pbkdf2Rounds: 4_000_000,
  /** Memory of one scrypt derivation (128 · N · r bytes; Node's and CPython's default maxmem is 32 MiB). */
  scryptMemoryBytes: 64 * MiB,
  /** Bytes scrypt mixes in all (128 · N · r · p): 1 GiB is about 2 s of one core. */
  scryptWorkBytes: 1024 * MiB,
  /** Modulus of a generated RSA or RSA-PSS key, and of an RSA key used for private-key operations. */
  rsaBits: 4096,
  /** Modulus of a generated DSA key. */
  dsaBits: 3072,
  /** A generated Diffie-Hellman prime (a safe prime: 1,024 bits take about a second, 2,048 minutes). */
  dhPrimeBits: 1024,
} as const;

/** What the checks read of the host-work table. */
export type KdfLimits = typeof CRYPTO_LIMITS & { readonly outputBytes: number };

/** Digest sizes in bytes of the hashes PBKDF2 is used with (an unknown one counts as the smallest, 16). */
export function digestBytes(name: string): number {
  const n = name.toLowerCase().replace(/[-_]/g, '');
  if (/512$/.test(n) && !/512(224|256)$/.test(n)) return 64;
  if (/384$/.test(n)) return 48;
  if (/256$/.test(n)) return 32;
  if (/224$/.test(n)) return 28;
  if (n === 'sha1' || n === 'ripemd160' || n === 'rmd160') return 20;
  return 16;
}

/** HMAC rounds of a PBKDF2 derivation: iterations times the output's blocks. */
export function pbkdf2Rounds(iterations: number, keyBytes: number, digest: string): number {
  return iterations * Math.max(1, Math.ceil(keyBytes / digestBytes(digest)));
}

/** Why a PBKDF2 derivation is refused, or undefined when it is within the limits. */
export function pbkdf2Refusal(iterations: number, keyBytes: number, digest: string, limits: KdfLimits): string | undefined {
  if (!Number.isSafeInteger(iterations) || iterations < 1) return `PBKDF2 iterations must be a positive integer, got ${String(iterations)}`;
  if (!Number.isSafeInteger(keyBytes) || keyBytes < 0) return `PBKDF2 key length must be an integer of 0 or more, got ${String(keyBytes)}`;
  if (keyBytes > limits.outputBytes) return `a PBKDF2 key of ${keyBytes} bytes is over islet's limit of ${limits.outputBytes} bytes`;
  const rounds = pbkdf2Rounds(iterations, keyBytes, digest);
  if (rounds > limits.pbkdf2Rounds) {
    return `PBKDF2 with ${iterations} iterations for ${keyBytes} bytes of ${digest} is ${rounds} HMAC rounds, over islet's limit of ${limits.pbkdf2Rounds}`;
  }
  return undefined;
}

/** Why an scrypt derivation is refused, or undefined when it is within the limits. */
export function scryptRefusal(N: number, r: number, p: number, keyBytes: number, limits: KdfLimits): string | undefined {
  for (const [name, value] of [
    ['N', N],
    ['r', r],
    ['p', p],
  ] as const) {
    if (!Number.isSafeInteger(value) || value < 1) return `scrypt ${name} must be a positive integer, got ${String(value)}`;
  }
  if (!Number.isSafeInteger(keyBytes) || keyBytes < 0) return `scrypt key length must be an integer of 0 or more, got ${String(keyBytes)}`;
  if (keyBytes > limits.outputBytes) return `an scrypt key of ${keyBytes} bytes is over islet's limit of ${limits.outputBytes} bytes`;
  const memory = 128 * N * r;
  if (memory > limits.scryptMemoryBytes) return `scrypt with N=${N}, r=${r} needs ${memory} bytes of memory, over islet's limit of ${limits.scryptMemoryBytes}`;
  const work = memory * p;
  if (work > limits.scryptWorkBytes) return `scrypt with N=${N}, r=${r}, p=${p} mixes ${work} bytes, over islet's limit of ${limits.scryptWorkBytes}`;
  return undefined;
}
