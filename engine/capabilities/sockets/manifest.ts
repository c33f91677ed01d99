import type { Capability } from '../capability';

export const sockets = {
  name: 'sockets',
  summary: "Outbound TCP through the host's guarded egress: node8's net and tls (client sockets; the host does TLS) and the Workers API of cloudflare:sockets",
  runtimes: ['node8'],
  libraries: { 'node/net': 'guest/net.ts', 'web/sockets': 'guest/connect.ts' },
  modules: { net: 'node/net', tls: 'node/net#tls' },
  ownModules: { 'cloudflare:sockets': 'web/sockets' },
  ops: ['tcpConnect', 'tcpRead', 'tcpWrite', 'tcpEnd', 'tcpClose', 'tcpUpgrade'],
  dependsOn: ['streams', 'events', 'buffer', 'node'],
  tests: ['test/runtime/sockets.test.ts', 'test/runtime/sockets-mysql.test.ts'],
} as const satisfies Capability;
