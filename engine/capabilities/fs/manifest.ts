import type { Capability } from '../capability';

export const fs = {
  name: 'fs',
  summary: "The function's own deployed files, read-only: node8's fs and fs/promises, and Python's /function",
  runtimes: ['node8', 'python'],
  libraries: { 'node/fs': 'guest/fs.ts' },
  modules: { fs: 'node/fs', 'fs/promises': 'node/fs#promises' },
  ops: ['fs', 'file'],
  dependsOn: ['buffer', 'streams'],
  tests: ['test/runtime/node8-builtins.test.ts', 'test/runtime/python.test.ts'],
} as const satisfies Capability;
