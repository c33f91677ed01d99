/**
 * The control of the compatibility suites: runs each case's handler under plain Node (no islet),
 * from the same folder it is deployed from, and prints `{name: {ok, value} | {ok: false, error}}`
 * as one JSON line. Cases come as JSON in COMPAT_CASES.
 */
import { pathToFileURL } from 'node:url';
import * as path from 'node:path';

export interface ControlCase {
  name: string;
  dir: string;
  file: string;
  entrypoint: string;
  /** A fetch-style app's requests; a body is JSON unless its headers say otherwise. */
  requests?: [method: string, path: string, body?: string, headers?: Record<string, string>][];
}

/** The headers a case's request is sent with: JSON's content type for a body, then its own. */
export function requestHeaders(body: string | undefined, headers: Record<string, string> = {}): Record<string, string> {
  return { ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers };
}

export type CaseResult = { ok: true; value: unknown } | { ok: false; error: string };

/** What a fetch-style app answers to each request: status and text. */
export async function answerRequests(
  app: { fetch(request: Request, env: unknown, ctx: unknown): Promise<Response> | Response },
  requests: NonNullable<ControlCase['requests']>,
  origin: string,
  env: unknown,
): Promise<unknown[]> {
  const out: unknown[] = [];
  for (const [method, url, body, headers] of requests) {
    const init: RequestInit = { method, body, headers: requestHeaders(body, headers) };
    const res = await app.fetch(new Request(`${origin}${url}`, init), env, { waitUntil() {}, passThroughOnException() {} });
    out.push({ status: res.status, body: await res.text() });
  }
  return out;
}

/** A real dynamic import (TypeScript's CommonJS output would turn `import()` into `require`, which cannot load ES modules). */
const importModule = new Function('url', 'return import(url)') as (url: string) => Promise<Record<string, unknown>>;

async function runCase(c: ControlCase): Promise<CaseResult> {
  try {
    const ns = await importModule(pathToFileURL(path.join(c.dir, c.file)).href);
    const target = (c.entrypoint === 'default' ? ns.default : (ns[c.entrypoint] ?? (ns.default as Record<string, unknown> | undefined)?.[c.entrypoint])) as unknown;
    if (c.requests) return { ok: true, value: await answerRequests(target as Parameters<typeof answerRequests>[0], c.requests, 'http://localhost', process.env) };
    const value = await (target as (body: unknown, context: unknown) => unknown)({}, { request: { method: 'GET', path: '/', query: {}, headers: {} }, env: process.env });
    return { ok: true, value: JSON.parse(JSON.stringify(value ?? null)) };
  } catch (err) {
    return { ok: false, error: err instanceof Error ? `${err.name}: ${err.message}` : String(err) };
  }
}

async function main(): Promise<void> {
  const cases = JSON.parse(process.env.COMPAT_CASES ?? '[]') as ControlCase[];
  const results: Record<string, CaseResult> = {};
  for (const c of cases) results[c.name] = await runCase(c);
  process.stdout.write(`${JSON.stringify(results)}\n`);
}

if (require.main === module) {
  main().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}
