import type { Capability } from '../capability';

export const zlib = {
  name: 'zlib',
  summary: "Node's zlib (deflate, gzip, brotli) over the host's, with its output bounded",
  runtimes: ['node8'],
  libraries: { 'node/zlib': 'guest/zlib.ts' },
  modules: { zlib: 'node/zlib' },
  ops: ['zlib'],
  dependsOn: ['buffer', 'streams'],
  tests: ['test/runtime/node8-builtins.test.ts', 'test/security/host-work.test.ts'],
} as const satisfies Capability;
