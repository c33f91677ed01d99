import type { Capability } from '../capability';

export const requestBody = {
  name: 'request-body',
  summary: "A call's request body still arriving from the client, read by node8's Request and IncomingMessage as a stream or whole",
  runtimes: ['node8'],
  ops: ['bodyRead', 'bodyWhole', 'bodyCancel'],
  dependsOn: ['fetch', 'http-server'],
  tests: ['test/http/request-body.test.ts', 'test/security/request-body-ids.test.ts'],
} as const satisfies Capability;
