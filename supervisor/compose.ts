import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { Engine, type RuntimeRegistration } from '../engine/engine';
import type { Limits } from '../engine/limits';
import { LogStore, type LogStoreOptions } from '../engine/logs';
import { Node8Runtime } from '../engine/node8/runtime';
import type { Coordinator } from '../engine/store/coordinator';
import { FileStore } from '../engine/store/file/store';
import { PostgresStore } from '../engine/store/postgres/store';
import type { Store } from '../engine/store/store';
import { PythonRuntime } from '../python/runtime';
import { ClusterLogs, nodeId } from './cluster-logs';

export interface StoreOptions {
  /** The data directory: the file store (unless `storeUrl`), the logs and (by default) the machine-local caches. */
  dataDir: string;
  /** `postgres://…`: the shared store of several nodes, instead of the data directory. */
  storeUrl?: string;
  /** Machine-local caches (V8 code caches, the Python snapshot, a shared store's code); default `<dataDir>/cache`. */
  cacheDir?: string;
  /** How the processes of this machine share the store (the supervisor's workers). */
  coordinator?: Coordinator;
  /** Clean what crashed deploys left in the data directory (only while no other process uses it). */
  clean?: boolean;
  /** The newest this many versions of a function are kept, and every serving one besides (default 10). */
  keepVersions?: number;
}

/** The store the options name: PostgreSQL for a `postgres://` URL, else the data directory. */
export async function openStore(options: StoreOptions): Promise<Store> {
  // Uploads a crashed process left half-received (the store's own leftovers are its to clean).
  if (options.clean) await fsp.rm(stagingDir(options.dataDir), { recursive: true, force: true });
  if (options.storeUrl !== undefined) {
    if (!/^postgres(ql)?:\/\//.test(options.storeUrl)) throw new Error(`--store: ${options.storeUrl} is not a postgres:// URL (without --store, the data directory is the store)`);
    const cacheDir = options.cacheDir ?? path.join(options.dataDir, 'cache');
    return PostgresStore.open({ url: options.storeUrl, cacheDir: path.join(cacheDir, 'store'), coordinator: options.coordinator, keepVersions: options.keepVersions, nodeId: nodeId(options.dataDir) });
  }
  return FileStore.open(options.dataDir, { coordinator: options.coordinator, clean: options.clean, keepVersions: options.keepVersions });
}

export interface ComposeOptions extends StoreOptions {
  limits?: Partial<Limits>;
  allowPrivateEgress?: boolean;
  /** An open store to serve from instead of the one the options name. */
  store?: Store;
  /** How this process writes the functions' logs beside others. */
  logs?: LogStoreOptions;
  /** Count calls for /metrics and `islet stats` (default true). */
  metrics?: boolean;
}

/**
 * The composition root of a serving process: it chooses the store and the runtimes, and opens an
 * engine on them. Nothing below it knows which store or which runtimes it was given.
 */
export async function openEngine(options: ComposeOptions): Promise<{ engine: Engine; store: Store; cluster: ClusterLogs | undefined }> {
  const store = options.store ?? (await openStore(options));
  const cacheDir = options.cacheDir ?? path.join(options.dataDir, 'cache');
  const logs = new LogStore(options.dataDir, options.logs);
  // Several nodes on one shared store: a read of logs gathers every node's lines.
  const cluster = store.nodes ? new ClusterLogs(logs, nodeId(options.dataDir), store.nodes) : undefined;
  const engine = await Engine.open({
    store,
    logs,
    logReader: cluster,
    runtimes: defaultRuntimes(cacheDir),
    limits: options.limits,
    allowPrivateEgress: options.allowPrivateEgress,
    metrics: options.metrics,
    stagingDir: stagingDir(options.dataDir),
  });
  return { engine, store, cluster };
}

/** The data directory's staging area: uploads being received. */
function stagingDir(dataDir: string): string {
  return path.join(dataDir, 'staging');
}

/** node8 (V8 isolates) and python2/python3 (Pyodide in an isolate). */
export function defaultRuntimes(cacheDir: string): RuntimeRegistration[] {
  return [
    {
      names: ['node8'],
      create: ({ limits, onInstanceDeath, onInstanceSized }) =>
        new Node8Runtime({
          defaultTimeoutMs: limits.timeoutMs,
          defaultMemoryMb: limits.memoryMb,
          responseBodyBytes: limits.responseBodyBytes,
          requestBodyBytes: limits.requestBodyBytes,
          cacheDir: path.join(cacheDir, 'node8'),
          onInstanceDeath,
          onInstanceSized,
          webSockets: limits.webSockets,
          sockets: limits.sockets,
        }),
    },
    {
      names: ['python2', 'python3'],
      create: ({ limits, onInstanceDeath }) =>
        new PythonRuntime({
          defaultTimeoutMs: limits.timeoutMs,
          defaultMemoryMb: limits.memoryMb,
          responseBodyBytes: limits.responseBodyBytes,
          requestBodyBytes: limits.requestBodyBytes,
          cacheDir,
          keepSpare: limits.pythonSpare,
          onInstanceDeath,
        }),
    },
  ];
}
