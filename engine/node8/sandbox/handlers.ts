/**
 * The two handler styles of node8 functions:
 * - the seed's `handler(body, context)`, returning a value or a `context.HTTPResponse`;
 * - a module whose default export has `fetch(request, env, ctx)`, called with a standard Request
 *   and answering a Response, as a Workers module does (a Hono or itty-router app deploys as is).
 * A third, a Node HTTP server app (`http.createServer(handler).listen()` while the module loads),
 * is not an export: the runtime takes it from the server that listens (engine/capabilities/http-server).
 */
import type { ServeCall } from './internal';

export type SeedHandler = (body: unknown, context: unknown) => unknown;
export interface FetchTarget {
  fetch(request: unknown, env: unknown, ctx: unknown): unknown;
  /** A Workers-style `scheduled(controller, env, ctx)`, for the function's schedules. */
  scheduled?(controller: unknown, env: unknown, ctx: unknown): unknown;
}
export type Entry = { style: 'seed'; handler: SeedHandler } | { style: 'fetch'; target: FetchTarget } | { style: 'server'; serve: ServeCall };

function hasFetch(value: unknown): value is FetchTarget {
  return (typeof value === 'object' || typeof value === 'function') && value !== null && (typeof (value as FetchTarget).fetch === 'function' || typeof (value as FetchTarget).scheduled === 'function');
}

/**
 * The entry of a loaded module: an ES module's namespace (`esm`), or a CommonJS module's exports,
 * which are also its default export. The rule (README, "Two handler styles"):
 * - `entrypoint: default` is the default export: fetch style if it has a `fetch` method, else
 *   seed style if it is a function;
 * - another name (`handler` when left out) is the ES module's named export of that name, or else
 *   the default export's property; when the default export has a `fetch` method, an ES module's
 *   default export's properties do not count (they are not the module's exports: h3 2's app has
 *   a `handler(event)` of its own beside `fetch`, which failed when called seed style), and of a
 *   CommonJS module's exports only an own property counts (`Object.hasOwn`). itty-router's router
 *   inherits from a Proxy that answers every name with a route-adding function, so
 *   `router.handler` looked like a seed handler, and the call waited on the router (whose `then`
 *   the Proxy also answers) until ERR_TIMEOUT;
 * - without that export, a default export with a `fetch` method is fetch style when the name is
 *   `handler`.
 */
export function pickEntry(namespace: Record<string, unknown>, esm: boolean, main: string, entrypoint: string): Entry {
  const fallback = (esm ? namespace.default : namespace) as Record<string, unknown> | undefined;
  const candidate = entrypoint === 'default' ? fallback : namedExport(namespace, esm, fallback, entrypoint);
  const server = [candidate, fallback].find(isServerApp);
  if (server !== undefined) throw new Error(serverAppMessage(main, server === candidate ? `its export "${entrypoint}"` : 'its export'));
  if (typeof candidate === 'function' && !hasFetch(candidate)) return { style: 'seed', handler: candidate as SeedHandler };
  if (hasFetch(candidate)) return { style: 'fetch', target: candidate };
  if (candidate === undefined && entrypoint === 'handler' && hasFetch(fallback)) return { style: 'fetch', target: fallback };
  const found = candidate === undefined ? 'nothing' : typeof candidate;
  const inherited = candidate === undefined && hasFetch(fallback) && isObject(fallback) && fallback[entrypoint] !== undefined;
  throw new Error(
    `${main} does not export a function named "${entrypoint}" (found ${found}${inherited ? (esm ? `: its default export has a fetch method, and an ES module's "${entrypoint}" is its named export, not the default export's property` : `: its default export has a fetch method and no "${entrypoint}" of its own`) : ''}; a module whose default export has a fetch(request, env, ctx) method can use entrypoint: default; a Node server app calls http.createServer(handler).listen() while it loads)`,
  );
}

/**
 * The export `name`: an ES module's own named export, or the default export's property. When the
 * default export has a `fetch` method: none of an ES module's, and only an own one of CommonJS
 * exports (`exports.handler` beside a helper named `fetch`).
 */
function namedExport(namespace: Record<string, unknown>, esm: boolean, fallback: unknown, name: string): unknown {
  if (esm && namespace[name] !== undefined) return namespace[name];
  if (!isObject(fallback)) return undefined;
  if (hasFetch(fallback) && (esm || !Object.prototype.hasOwnProperty.call(fallback, name))) return undefined;
  return fallback[name];
}

function isObject(value: unknown): value is Record<string, unknown> {
  return (typeof value === 'object' || typeof value === 'function') && value !== null;
}

/**
 * An Express, Connect, Koa or Fastify app: something to run behind a Node HTTP server. Called as a
 * handler, an Express app failed deep inside Express (its request and response are Node's).
 */
function isServerApp(value: unknown): boolean {
  if ((typeof value !== 'object' && typeof value !== 'function') || value === null || hasFetch(value)) return false;
  const app = value as Record<string, unknown>;
  return typeof app.listen === 'function' && ['use', 'handle', 'callback', 'register'].some((m) => typeof app[m] === 'function');
}

/** What a Node server app exported as a handler gets: a sentence saying how it runs. */
export function serverAppMessage(main: string, what: string): string {
  return `${main}: ${what} is a Node server app (Express, Connect, Koa or Fastify), which is not a handler: call its listen() as the module loads (app.listen(3000); the port is ignored) and islet serves it. Or export handler(body, context), or a default export with fetch(request, env, ctx) (a Hono or itty-router app is one and runs as it is)`;
}
