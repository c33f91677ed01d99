import type { Capability } from '../capability';

export const fetch = {
  name: 'fetch',
  summary: "Outbound HTTP through the host's guarded egress: node8's fetch, Request, Response, Headers, FormData and Blob, Node's http and https clients, and Python's sockets",
  runtimes: ['node8', 'python'],
  libraries: { 'web/fetch': 'guest/fetch.ts', 'node/http': 'guest/http.ts' },
  modules: { http: 'node/http', https: 'node/http#https' },
  globals: {
    Headers: 'web/fetch',
    Request: 'web/fetch',
    Response: 'web/fetch',
    FormData: 'web/fetch',
    Blob: 'web/fetch',
    File: 'web/fetch',
    fetch: 'web/fetch',
  },
  ops: ['fetch', 'fetchRead', 'fetchCancel', 'background'],
  // http-server: the http module's createServer, Server and ServerResponse.
  dependsOn: ['streams', 'events', 'url', 'buffer', 'websockets', 'http-server'],
  tests: ['test/runtime/node8-web.test.ts', 'test/runtime/python-egress.test.ts', 'test/security/sandbox.test.ts'],
} as const satisfies Capability;
