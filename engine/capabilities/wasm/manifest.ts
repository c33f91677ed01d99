import type { Capability } from '../capability';

export const wasm = {
  name: 'wasm',
  summary: "WebAssembly for node8 functions, its memory held to the function's memory limit",
  runtimes: ['node8'],
  libraries: { 'web/webassembly': 'guest/webassembly.ts' },
  globals: { WebAssembly: 'web/webassembly' },
  tests: ['test/runtime/node8-web.test.ts', 'test/security/sandbox.test.ts'],
} as const satisfies Capability;
