import * as path from 'node:path';
import { Engine, type RuntimeRegistration } from '../engine/engine';
import type { Limits } from '../engine/limits';
import { LogStore, type LogStoreOptions } from '../engine/logs';
import { Node8Runtime } from '../engine/node8/runtime';
import { FileStore, type FileStoreOptions } from '../engine/store/file/store';
import type { Store } from '../engine/store/store';
import { PythonRuntime } from '../python/runtime';

export interface ComposeOptions {
  /** The data directory: the file store, the logs and (by default) the machine-local caches. */
  dataDir: string;
  limits?: Partial<Limits>;
  allowPrivateEgress?: boolean;
  /** Machine-local caches (V8 code caches, the Python snapshot); default `<dataDir>/cache`. */
  cacheDir?: string;
  /** An open store to serve from instead of the data directory's own. */
  store?: Store;
  /** How the data directory's file store shares it with other processes. */
  fileStore?: FileStoreOptions;
  /** How this process writes the functions' logs beside others. */
  logs?: LogStoreOptions;
}

/**
 * The composition root of a serving process: it chooses the store and the runtimes, and opens an
 * engine on them. Nothing below it knows which store or which runtimes it was given.
 */
export async function openEngine(options: ComposeOptions): Promise<{ engine: Engine; store: Store }> {
  const store = options.store ?? (await FileStore.open(options.dataDir, options.fileStore));
  const cacheDir = options.cacheDir ?? path.join(options.dataDir, 'cache');
  const engine = await Engine.open({
    store,
    logs: new LogStore(options.dataDir, options.logs),
    runtimes: defaultRuntimes(cacheDir),
    limits: options.limits,
    allowPrivateEgress: options.allowPrivateEgress,
  });
  return { engine, store };
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
          cacheDir: path.join(cacheDir, 'node8'),
          onInstanceDeath,
          onInstanceSized,
        }),
    },
    {
      names: ['python2', 'python3'],
      create: ({ limits, onInstanceDeath }) =>
        new PythonRuntime({
          defaultTimeoutMs: limits.timeoutMs,
          defaultMemoryMb: limits.memoryMb,
          responseBodyBytes: limits.responseBodyBytes,
          cacheDir,
          keepSpare: limits.pythonSpare,
          onInstanceDeath,
        }),
    },
  ];
}
