import type { Capability } from '../capability';

export const web = {
  name: 'web',
  summary: 'The smaller web globals: the encodings (TextEncoder, TextDecoder and their streams: @exodus/bytes), structuredClone, MessageChannel, performance, navigator',
  runtimes: ['node8'],
  libraries: { 'web/misc': 'guest/misc.ts', 'web/encoding': 'guest/encoding.ts', 'web/multi-byte': 'guest/multi-byte.ts' },
  globals: {
    TextEncoder: 'web/encoding',
    TextDecoder: 'web/encoding',
    TextEncoderStream: 'web/encoding',
    TextDecoderStream: 'web/encoding',
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
  runtimeGlobals: ['atob', 'btoa', 'global', 'self', 'reportError'],
  dependsOn: ['events', 'streams'],
  tests: ['test/runtime/node8-web.test.ts', 'test/runtime/web-standards.test.ts', 'test/runtime/text-codec.test.ts'],
} as const satisfies Capability;
