import queryString from 'query-string';

export function handler() {
  return { parsed: queryString.parse('?a=1&b=2&b=3&c'), string: queryString.stringify({ z: 1, a: [1, 2], s: 'x y' }), url: queryString.parseUrl('https://x.test/p?q=1') };
}
