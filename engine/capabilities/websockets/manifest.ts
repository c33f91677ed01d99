import type { Capability } from '../capability';

export const websockets = {
  name: 'websockets',
  summary:
    'WebSockets a fetch-style function accepts (the Workers API: WebSocketPair, accept, send, close, message and close events), served by uWebSockets.js at ws://…/v2/run/<account>/<fn> (node8)',
  runtimes: ['node8'],
  libraries: { 'web/websockets': 'guest/websockets.ts' },
  globals: { WebSocketPair: 'web/websockets', CloseEvent: 'web/websockets' },
  ops: ['socket'],
  dependsOn: ['events', 'web'],
  tests: ['test/runtime/websockets.test.ts'],
} as const satisfies Capability;
