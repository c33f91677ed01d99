import type { Capability } from '../capability';

export const crypto = {
  name: 'crypto',
  summary: "Node's crypto (hashes, HMAC, ciphers, signatures, keys, key derivation) over the host's OpenSSL, and Python's hashlib key derivations",
  runtimes: ['node8', 'python'],
  libraries: { 'node/crypto': 'guest/crypto.ts' },
  modules: { crypto: 'node/crypto' },
  ops: ['hash', 'hmac', 'cipher', 'sign', 'verify', 'key', 'keygen', 'derive', 'rsa', 'random', 'pbkdf2', 'scrypt'],
  dependsOn: ['buffer', 'streams', 'subtle'],
  tests: ['test/runtime/node8-builtins.test.ts', 'test/security/host-work.test.ts', 'test/security/host-work-python.test.ts', 'test/runtime/python-stdlib.test.ts', 'test/compat/node8.test.ts'],
} as const satisfies Capability;
