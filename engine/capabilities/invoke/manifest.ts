import type { Capability } from '../capability';

export const invoke = {
  name: 'invoke',
  summary: 'sdk.invoke: a call of another function, in process',
  runtimes: ['node8', 'python'],
  ownModules: { sdk: 'runtime' },
  ops: ['invoke'],
  tests: ['test/security/sandbox.test.ts', 'test/runtime/python.test.ts'],
} as const satisfies Capability;
