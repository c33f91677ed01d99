/**
 * The two handler styles of node8 functions:
 * - the seed's `handler(body, context)`, returning a value or a `context.HTTPResponse`;
 * - a module whose default export has `fetch(request, env, ctx)`, called with a standard Request
 *   and answering a Response, as a Workers module does (a Hono or itty-router app deploys as is).
 */
import { library } from '../../sandbox/guest/libraries';
import type { BytesResult, CallResult, MetaHead } from '../../sandbox/protocol';
import { encodeError } from './response';

export type SeedHandler = (body: unknown, context: unknown) => unknown;
export interface FetchTarget {
  fetch(request: unknown, env: unknown, ctx: unknown): unknown;
}
export type Entry = { style: 'seed'; handler: SeedHandler } | { style: 'fetch'; target: FetchTarget };

function hasFetch(value: unknown): value is FetchTarget {
  return (typeof value === 'object' || typeof value === 'function') && value !== null && typeof (value as FetchTarget).fetch === 'function';
}

/**
 * The entry of a loaded module namespace. `entrypoint` names an export (a CommonJS file's exports
 * are its default export's properties too); `default` selects the default export. A module without
 * the named handler whose default export has a `fetch` method is a fetch-style function.
 */
export function pickEntry(namespace: Record<string, unknown>, main: string, entrypoint: string): Entry {
  const fallback = namespace.default as Record<string, unknown> | undefined;
  let candidate: unknown = entrypoint === 'default' ? fallback : namespace[entrypoint];
  if (candidate === undefined && entrypoint !== 'default' && (typeof fallback === 'object' || typeof fallback === 'function') && fallback !== null) {
    candidate = fallback[entrypoint];
  }
  if (typeof candidate === 'function' && !hasFetch(candidate)) return { style: 'seed', handler: candidate as SeedHandler };
  if (hasFetch(candidate)) return { style: 'fetch', target: candidate };
  if (candidate === undefined && entrypoint === 'handler' && hasFetch(fallback)) return { style: 'fetch', target: fallback };
  const found = candidate === undefined ? 'nothing' : typeof candidate;
  throw new Error(
    `${main} does not export a function named "${entrypoint}" (found ${found}; a module whose default export has a fetch(request, env, ctx) method can use entrypoint: default)`,
  );
}

interface FetchLibrary {
  Request: new (url: string, init: Record<string, unknown>) => unknown;
  Response: abstract new (...args: never[]) => { status: number; headers: { forEach(fn: (value: string, name: string) => void): void }; arrayBuffer(): Promise<ArrayBuffer> };
}

/**
 * Calls a fetch-style entry. The request's URL is the function's own: its path is what follows the
 * function name, so an app's routes are written as if it served the whole host.
 */
export function callFetch(target: FetchTarget, head: MetaHead, headers: Record<string, string>, raw: string | ArrayBuffer | undefined, env: unknown, reportError: (err: unknown) => void): Promise<CallResult> {
  const { Request, Response } = library<FetchLibrary>('web/fetch');
  const [, method, path, rawQuery] = head;
  const url = `http://${headers.host ?? 'localhost'}${path}${rawQuery ? `?${rawQuery}` : ''}`;
  const hasBody = method !== 'GET' && method !== 'HEAD' && raw !== undefined;
  const request = new Request(url, { method, headers, ...(hasBody ? { body: raw } : {}) });
  const ctx = {
    waitUntil(promise: unknown) {
      Promise.resolve(promise).catch(reportError);
    },
    passThroughOnException() {},
  };
  return Promise.resolve()
    .then(() => target.fetch(request, env, ctx))
    .then(async (response): Promise<CallResult> => {
      if (!(response instanceof Response)) {
        return { t: 'e', c: 'ERR_BAD_RESPONSE', m: `the fetch handler must return a Response, got ${response === null ? 'null' : typeof response}` };
      }
      const out: Record<string, string> = {};
      response.headers.forEach((value, name) => {
        out[name] = out[name] === undefined ? value : `${out[name]}, ${value}`;
      });
      const result: BytesResult = { t: 'b', s: response.status, h: out, b: await response.arrayBuffer() };
      return result;
    })
    .then(undefined, encodeError);
}
