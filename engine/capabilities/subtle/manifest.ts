import type { Capability } from '../capability';

export const subtle = {
  name: 'subtle',
  summary: "WebCrypto: the global crypto's getRandomValues and randomUUID (the host's CSPRNG, both runtimes) and crypto.subtle over Node's WebCrypto",
  runtimes: ['node8', 'python'],
  libraries: { 'web/subtle': 'guest/subtle.ts' },
  globals: { crypto: 'web/subtle', Crypto: 'web/subtle', CryptoKey: 'web/subtle', SubtleCrypto: 'web/subtle' },
  ops: ['subtle', 'random'],
  dependsOn: ['events'],
  tests: ['test/runtime/node8-web.test.ts', 'test/security/host-work.test.ts'],
} as const satisfies Capability;
