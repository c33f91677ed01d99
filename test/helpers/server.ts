// First: it chooses where everything below writes its temporary files.
import { DISK_TMP } from './scratch';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import type { ClientGone, EngineApi } from '../../engine/api';
import type { Engine, InvokeResponse } from '../../engine/engine';
import type { Limits } from '../../engine/limits';
import type { NewAccount, Store } from '../../engine/store/store';
import { startServer, type RunningServer } from '../../http/server';
import { openEngine, type ComposeOptions } from '../../supervisor/compose';
import { collectIsolateHandles } from './isolates';

/** The repository root (tests run from dist/test/…). */
export const ROOT = path.resolve(__dirname, '..', '..', '..');

/** Machine-local caches shared by the test servers (the Python snapshot is made once, not per test). */
export const TEST_CACHE = path.join(DISK_TMP, 'islet-test-cache');

export function fixture(name: string): string {
  return path.join(ROOT, 'test', 'fixtures', name);
}

export interface TestServer {
  /** The engine as the HTTP server holds it: calls and management (engine/api.ts). */
  engine: EngineApi;
  /**
   * The concrete engine, for a test that must reach what neither interface offers: its log store,
   * catalog, store, pool, counters.
   */
  internals: Engine;
  server: RunningServer;
  url: string;
  /** The console's origin (its own port): the console is at `${consoleUrl}/console/`. */
  consoleUrl: string;
  dataDir: string;
  accountId: string;
  apiKey: string;
  /** Deploys `entrypoint` of `file` in a fixture folder as function `name`. */
  deploy(name: string, folder: string, entrypoint: string, extra?: Record<string, unknown>): Promise<void>;
  /** The same for a python2 function in `function.py`. */
  deployPython(name: string, folder: string, entrypoint: string, extra?: Record<string, unknown>): Promise<void>;
  /** A new account with its admin key (what `islet account create` makes). */
  createAccount(): Promise<NewAccount>;
  /** Calls a function over HTTP. */
  call(name: string, init?: CallInit): Promise<Response>;
  /** Calls a function through the engine, without HTTP (for input HTTP cannot carry, or for load). */
  invoke(name: string, init?: CallInit): Promise<InvokeResponse>;
  /** Invokes with `body` as JSON and answers the parsed result; any status but 200 throws with the body. */
  invokeJson(name: string, body?: unknown): Promise<Record<string, unknown>>;
  stop(): Promise<void>;
}

export interface CallInit {
  method?: string;
  query?: string;
  path?: string;
  body?: string | Uint8Array;
  headers?: Record<string, string>;
  /** API key to send; defaults to the account's; `null` sends none. */
  key?: string | null;
  account?: string;
  /** (invoke only) The client's line, as the HTTP server hands it: call its `onGone` to leave. */
  clientGone?: ClientGone;
}

export interface TestServerOptions {
  limits?: Partial<Limits>;
  dataDir?: string;
  engine?: Partial<ComposeOptions>;
  /** The bearer token that reads every metric. */
  metricsToken?: string;
}

export async function startTestServer(options: TestServerOptions = {}): Promise<TestServer> {
  const dataDir = options.dataDir ?? mkdtempSync(path.join(tmpdir(), 'islet-test-'));
  const { engine, store } = await openEngine({ dataDir, limits: options.limits, cacheDir: TEST_CACHE, ...options.engine });
  const { accountId, apiKey } = await engine.createAccount();
  return attach(engine, store, dataDir, accountId, apiKey, options.metricsToken);
}

/** Opens an engine and server on an existing data directory (a restart). */
export async function reopenTestServer(dataDir: string, accountId: string, apiKey: string, limits?: Partial<Limits>, options: Omit<TestServerOptions, 'limits' | 'dataDir'> = {}): Promise<TestServer> {
  const { engine, store } = await openEngine({ dataDir, limits, cacheDir: TEST_CACHE, ...options.engine });
  return attach(engine, store, dataDir, accountId, apiKey, options.metricsToken);
}

async function attach(engine: Engine, store: Store, dataDir: string, accountId: string, apiKey: string, metricsToken?: string): Promise<TestServer> {
  const server = await startServer({ engine, host: '127.0.0.1', port: 0, consolePort: 0, metricsToken });
  const t: TestServer = {
    engine,
    internals: engine,
    server,
    url: server.url,
    consoleUrl: server.consoleUrl!,
    dataDir,
    accountId,
    apiKey,
    async deploy(name, folder, entrypoint, extra = {}) {
      await engine.deploy(accountId, { name, runtime: 'node8', file: 'function.js', entrypoint, env: {}, ...extra }, { dir: folder });
    },
    async deployPython(name, folder, entrypoint, extra = {}) {
      await engine.deploy(accountId, { name, runtime: 'python2', file: 'function.py', entrypoint, env: {}, ...extra }, { dir: folder });
    },
    createAccount: () => engine.createAccount(),
    call(name, init = {}) {
      const headers: Record<string, string> = { ...init.headers };
      const key = init.key === undefined ? apiKey : init.key;
      if (key !== null) headers['X-Service-Api-Key'] = key;
      const url = `${server.url}/v2/run/${init.account ?? accountId}/${name}${init.path ?? ''}${init.query ? `?${init.query}` : ''}`;
      return fetch(url, { method: init.method ?? (init.body !== undefined ? 'POST' : 'GET'), headers, body: init.body, redirect: 'manual' });
    },
    invoke(name, init = {}) {
      const key = init.key === undefined ? apiKey : init.key;
      const body = init.body === undefined ? Buffer.alloc(0) : Buffer.isBuffer(init.body) ? init.body : Buffer.from(init.body);
      return engine.invoke({
        accountId: init.account ?? accountId,
        functionName: name,
        apiKey: key ?? undefined,
        method: init.method ?? (init.body !== undefined ? 'POST' : 'GET'),
        path: init.path ?? '/',
        rawQuery: init.query ?? '',
        headers: init.headers ?? {},
        body,
        ...(init.clientGone ? { clientGone: init.clientGone } : {}),
      });
    },
    async invokeJson(name, body) {
      const res = await this.invoke(name, body === undefined ? {} : { body: JSON.stringify(body) });
      if (res.status !== 200) throw new Error(`${name}: ${res.status} ${String(res.body)}`);
      return JSON.parse(String(res.body)) as Record<string, unknown>;
    },
    async stop() {
      server.close();
      await engine.close();
      await store.close();
      collectIsolateHandles();
    },
  };
  return t;
}

export function removeDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

/** Checks the headers every response carries (SPEC §2). */
export function serviceHeaders(res: Response): { requestId: string | null; duration: string | null } {
  return { requestId: res.headers.get('x-service-request-id'), duration: res.headers.get('x-service-duration-usecs') };
}
