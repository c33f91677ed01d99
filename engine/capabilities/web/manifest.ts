import type { Capability } from '../capability';

export const web = {
  name: 'web',
  summary: 'The smaller web globals: structuredClone, MessageChannel, performance, navigator',
  runtimes: ['node8'],
  libraries: { 'web/misc': 'guest/misc.ts' },
  globals: {
    structuredClone: 'web/misc',
    MessageChannel: 'web/misc',
    MessagePort: 'web/misc',
    MessageEvent: 'web/misc',
    performance: 'web/misc',
    Performance: 'web/misc',
    PerformanceEntry: 'web/misc',
    PerformanceMark: 'web/misc',
    PerformanceMeasure: 'web/misc',
    navigator: 'web/misc',
    Navigator: 'web/misc',
  },
  runtimeGlobals: ['TextEncoder', 'TextDecoder', 'atob', 'btoa', 'global', 'self', 'reportError'],
  dependsOn: ['events'],
  tests: ['test/node8-web.test.ts'],
} as const satisfies Capability;
