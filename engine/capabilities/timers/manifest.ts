import type { Capability } from '../capability';

export const timers = {
  name: 'timers',
  summary: "setTimeout, setInterval, setImmediate and queueMicrotask over the host's timers, and Node's timers",
  runtimes: ['node8', 'python'],
  modules: { timers: 'runtime' },
  runtimeGlobals: ['setTimeout', 'setInterval', 'setImmediate', 'clearTimeout', 'clearInterval', 'clearImmediate', 'queueMicrotask'],
  ops: ['timer'],
  tests: ['test/security/sandbox.test.ts', 'test/engine/after-answer.test.ts'],
} as const satisfies Capability;
