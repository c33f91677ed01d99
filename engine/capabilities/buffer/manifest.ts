import type { Capability } from '../capability';

export const buffer = {
  name: 'buffer',
  summary: "Node's Buffer (the buffer package), its UTF-8 through @exodus/bytes' codec",
  runtimes: ['node8', 'python'],
  libraries: { buffer: 'guest/buffer.ts' },
  modules: { buffer: 'buffer#node' },
  globals: { Buffer: 'buffer' },
  tests: ['test/runtime/node8-builtins.test.ts'],
} as const satisfies Capability;
