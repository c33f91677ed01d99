import type { Capability } from '../capability';

/**
 * Node HTTP server apps: a function whose module calls `http.createServer(handler).listen()` while
 * it loads (directly, or through Express, Koa, Fastify…) is served by that handler, with Node's
 * IncomingMessage and ServerResponse. `http.createServer`, `http.Server` and `http.ServerResponse`
 * (the fetch capability's `http` module) come from this library, on first use.
 */
export const httpServer = {
  name: 'http-server',
  summary: "Node HTTP server apps: http.createServer(handler).listen() while the module loads serves the function's calls, with Node's IncomingMessage and ServerResponse",
  runtimes: ['node8'],
  libraries: { 'node/http-server': 'guest/server.ts' },
  dependsOn: ['fetch', 'events', 'streams', 'buffer'],
  tests: ['test/compat/node-server-apps.test.ts'],
} as const satisfies Capability;
