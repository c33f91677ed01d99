import type { Capability } from '../capability';

export const consoleCapability = {
  name: 'console',
  summary: "console and the function's log lines",
  runtimes: ['node8', 'python'],
  modules: { console: 'runtime' },
  runtimeGlobals: ['console'],
  ops: ['log'],
  tests: ['test/security/sandbox.test.ts', 'test/runtime/python.test.ts', 'test/security/host-memory.test.ts'],
} as const satisfies Capability;
