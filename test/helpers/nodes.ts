import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { packFolder } from '../../cli/pack';
import type { EngineApi } from '../../engine/api';
import type { Engine } from '../../engine/engine';
import type { Limits } from '../../engine/limits';
import type { NewAccount, Store } from '../../engine/store/store';
import { startServer, type RunningServer } from '../../http/server';
import { openEngine } from '../../supervisor/compose';
import { functionFolder } from './functions';
import { collectIsolateHandles } from './isolates';

/**
 * An islet node on a shared store, in this process: its own engine, catalog, store connection
 * (pool and LISTEN), code cache, logs and port, the way `islet serve --store` composes a worker.
 * (The kill -9 tests run nodes as real processes instead.)
 */
export interface TestNode {
  url: string;
  /** The engine as the node's HTTP server holds it: calls and management (engine/api.ts). */
  engine: EngineApi;
  /** The concrete engine, for a test that must reach what neither interface offers (catalog, store, logs…). */
  internals: Engine;
  /** A new account with its admin key. */
  createAccount(): Promise<NewAccount>;
  store: Store;
  server: RunningServer;
  dataDir: string;
  stop(): Promise<void>;
}

export async function startNode(storeUrl: string, limits: Partial<Limits> = {}, metricsToken?: string): Promise<TestNode> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'islet-node-'));
  const { engine, store, cluster } = await openEngine({ dataDir, storeUrl, cacheDir: path.join(dataDir, 'cache'), limits: { pythonSpare: false, ...limits } });
  const server = await startServer({ engine, host: '127.0.0.1', port: 0, metricsToken });
  cluster?.start(server.url);
  return {
    url: server.url,
    engine,
    internals: engine,
    createAccount: () => engine.createAccount(),
    store,
    server,
    dataDir,
    async stop() {
      cluster?.stop();
      server.close();
      await engine.close();
      await store.close();
      collectIsolateHandles();
    },
  };
}

/** A client of one account, talking to any node over HTTP. */
export function client(accountId: string, apiKey: string) {
  const headers = { 'X-Service-Api-Key': apiKey };
  return {
    apiKey,
    async deploy(node: { url: string }, name: string, source: string): Promise<Response> {
      const form = new FormData();
      form.set('spec', JSON.stringify({ runtime: 'node8', file: 'function.js', entrypoint: 'handler', env: {} }));
      form.set('bundle', new Blob([await packFolder(functionFolder(source))]), 'bundle.tar.gz');
      return fetch(`${node.url}/v2/accounts/${accountId}/functions/${name}`, { method: 'PUT', headers, body: form });
    },
    remove(node: { url: string }, name: string): Promise<Response> {
      return fetch(`${node.url}/v2/accounts/${accountId}/functions/${name}`, { method: 'DELETE', headers });
    },
    call(node: { url: string }, name: string): Promise<Response> {
      return fetch(`${node.url}/v2/run/${accountId}/${name}`, { headers });
    },
    /** The body of a call, or the status when it is not 200. */
    async answer(node: { url: string }, name: string): Promise<string> {
      const res = await fetch(`${node.url}/v2/run/${accountId}/${name}`, { headers });
      const body = await res.text();
      return res.status === 200 ? body : String(res.status);
    },
    async logs(node: { url: string }, name: string): Promise<{ node?: string; level: string; message: string }[]> {
      const res = await fetch(`${node.url}/v2/accounts/${accountId}/functions/${name}/logs`, { headers });
      return ((await res.json()) as { entries: { node?: string; level: string; message: string }[] }).entries;
    },
  };
}
