import type { Capability } from '../capability';

export const requestBody = {
  name: 'request-body',
  summary: "A call's request body still arriving from the client, read by node8's Request and IncomingMessage as a stream or whole, and by Python's req.stream past the limit of a body read whole",
  runtimes: ['node8', 'python'],
  ops: ['bodyRead', 'bodyWhole', 'bodyCancel'],
  dependsOn: ['fetch', 'http-server'],
  tests: ['test/http/request-body.test.ts', 'test/runtime/python-request-body.test.ts', 'test/security/request-body-ids.test.ts'],
} as const satisfies Capability;
