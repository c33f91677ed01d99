import type { Capability } from '../capability';

export const url = {
  name: 'url',
  summary: "URL and URLSearchParams (whatwg-url), URLPattern, and Node's url, querystring and punycode (unenv)",
  runtimes: ['node8'],
  libraries: {
    url: 'guest/url.ts',
    'web/urlpattern': 'guest/urlpattern.ts',
    // unenv's url.parse prints a deprecation warning of its own that Node 20 does not: dropped.
    'node/url': { entry: 'guest/node-url.ts', bundles: { querystring: 'unenv/node/querystring', punycode: 'unenv/node/punycode' }, drop: ['console'] },
  },
  modules: { url: 'node/url', punycode: 'node/url#punycode', querystring: 'node/url#querystring' },
  globals: { URL: 'url', URLSearchParams: 'url', URLPattern: 'web/urlpattern' },
  tests: ['test/runtime/node8-web.test.ts', 'test/runtime/node8-builtins.test.ts'],
} as const satisfies Capability;
