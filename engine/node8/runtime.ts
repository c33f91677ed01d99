import { createHash } from 'node:crypto';
import { promises as fsp, readFileSync, statSync } from 'node:fs';
import * as path from 'node:path';
import ivm from 'isolated-vm';
import { LRUCache } from 'lru-cache';
import { toArrayBuffer } from '../bytes';
import type { FunctionManifest } from '../manifest';
import { loadError, VALIDATE_TIMEOUT_MS, validateByLoading, type Instance, type InstanceServices, type Runtime } from '../runtime';
import type { BlankIsolate } from '../isolate/bridge';
import { createBlankIsolate, type CachedScript } from './blank';
import { sharedLibraryBytes } from '../isolate/libraries';
import { IsolateInstance } from '../isolate/instance';

export interface Node8RuntimeOptions {
  defaultTimeoutMs: number;
  defaultMemoryMb: number;
  responseBodyBytes: number;
  /** Folder for V8 code caches (machine-local, produced here, never taken from users). */
  cacheDir: string;
  /** Told when an instance dies on its own (memory limit, timeout) so the warm cache drops it. */
  onInstanceDeath(instance: Instance): void;
  /** Told when an instance's size is known (after its code loaded) so the warm cache counts it. */
  onInstanceSized(instance: Instance): void;
}

const SANDBOX_FILE = path.join(__dirname, 'sandbox.js');

/** Entry files up to this size are compiled synchronously (see compileMain). */
const SYNC_COMPILE_MAX_CHARS = 64 * 1024;

/** Delay before building the next spare isolate (about 2 ms of main-thread work). */
const REFILL_DELAY_MS = 5;

/** Entry files up to this size are read synchronously (a local read of a small file). */
const SYNC_READ_MAX_BYTES = 256 * 1024;

interface CompiledMain {
  wrapper: string;
  cacheFile: string;
  cache: ExternalCopyBuffer | undefined;
  cacheBytes: number;
}
type ExternalCopyBuffer = ivm.ExternalCopy<ArrayBuffer>;

export class Node8Runtime implements Runtime {
  private readonly sandbox: { source: string; cache?: ivm.ExternalCopy<ArrayBuffer> };
  /** One blank isolate of the default size, made ahead so a cold start skips creating it. */
  private spare: BlankIsolate | undefined;
  private refill: NodeJS.Timeout | undefined;
  /** Entry-file wrappers and their V8 code caches, by content hash (shared by versions with equal code). */
  private readonly mains = new LRUCache<string, CompiledMain>({ maxSize: 64 * 1024 * 1024, sizeCalculation: (m) => m.wrapper.length + m.cacheBytes + 64 });
  private closed = false;

  constructor(private readonly options: Node8RuntimeOptions) {
    this.sandbox = { source: readFileSync(SANDBOX_FILE, 'utf8') };
  }

  /** The instance takes calls at once; its module code runs ahead of them on the isolate's thread. */
  async createInstance(manifest: FunctionManifest, codeDir: string, services: InstanceServices): Promise<Instance> {
    return this.load(manifest, codeDir, services, manifest.timeoutMs ?? this.options.defaultTimeoutMs, 'background');
  }

  validate(manifest: FunctionManifest, codeDir: string, services: InstanceServices): Promise<void> {
    return validateByLoading(manifest, () => this.load(manifest, codeDir, services, Math.min(manifest.timeoutMs ?? this.options.defaultTimeoutMs, VALIDATE_TIMEOUT_MS), 'wait'));
  }

  close(): void {
    this.closed = true;
    if (this.refill) clearTimeout(this.refill);
    if (this.spare && !this.spare.isolate.isDisposed) this.spare.isolate.dispose();
    this.spare = undefined;
  }

  private takeBlank(memoryMb: number): BlankIsolate {
    const spare = this.spare;
    if (memoryMb === this.options.defaultMemoryMb && spare && !spare.isolate.isDisposed) {
      this.spare = undefined;
      this.scheduleRefill();
      return spare;
    }
    if (memoryMb === this.options.defaultMemoryMb) this.scheduleRefill();
    return createBlankIsolate(memoryMb, this.sandbox);
  }

  /** Builds the next spare shortly after, not inside the cold start that took the last one. */
  private scheduleRefill(): void {
    if (this.refill || this.closed) return;
    this.refill = setTimeout(() => {
      this.refill = undefined;
      if (!this.spare && !this.closed) this.spare = createBlankIsolate(this.options.defaultMemoryMb, this.sandbox);
    }, REFILL_DELAY_MS);
    this.refill.unref();
  }

  /**
   * Compiles the entry file and runs the module code in a blank isolate. With 'wait' the instance
   * is returned once the code has loaded; with 'background' at once (see loadInBackground).
   */
  private async load(manifest: FunctionManifest, codeDir: string, services: InstanceServices, timeoutMs: number, mode: 'wait' | 'background'): Promise<IsolateInstance> {
    const blank = this.takeBlank(manifest.memoryMb ?? this.options.defaultMemoryMb);
    const files = new Set(manifest.files);
    const instance = new IsolateInstance(blank, {
      timeoutMs,
      responseBodyBytes: this.options.responseBodyBytes,
      services,
      readModule: (rel) => (files.has(rel) ? readFileSync(path.join(codeDir, rel), 'utf8') : undefined),
      onDeath: (dead) => this.options.onInstanceDeath(dead),
      remeasure: (grown) => this.measure(grown),
    });
    try {
      const main = await this.compileMain(blank.isolate, blank.context, manifest, codeDir, timeoutMs);
      const config = JSON.stringify({ accountId: manifest.account, env: manifest.env, files: manifest.files, main: manifest.file, entrypoint: manifest.entrypoint });
      // Module code runs on the isolate's thread, never this one: a fatal out-of-memory parks the
      // thread it happens on for good.
      const loaded = instance.untilDeath(blank.initRef.apply(undefined, [config, main.derefInto()], { timeout: timeoutMs })).then(() => undefined);
      if (mode === 'background') {
        instance.loadInBackground(loaded, (err) => loadError(err, manifest, timeoutMs));
        void loaded.then(() => this.measure(instance), () => undefined);
        return instance;
      }
      await loaded;
      instance.sizeMb = sizeMbOf(blank.isolate.getHeapStatisticsSync());
      return instance;
    } catch (err) {
      instance.dispose();
      throw loadError(err, manifest, timeoutMs);
    }
  }

  /**
   * Reads the instance's size for the warm cache. Asynchronously: the isolate may be busy with
   * calls, and a synchronous read would wait for them on this thread.
   */
  private measure(instance: IsolateInstance): void {
    instance.isolate.getHeapStatistics().then(
      (stats) => {
        if (instance.state === 'dead') return;
        instance.sizeMb = sizeMbOf(stats);
        this.options.onInstanceSized(instance);
      },
      () => undefined,
    );
  }

  /**
   * Compiles the entry file as a CommonJS wrapper, with V8's code cache kept per content (memory,
   * then disk). Compiling runs no user code; a small file is compiled on this thread (tens of µs,
   * and one round trip to the isolate's thread less), a large one on the isolate's thread so it
   * cannot stall the server.
   */
  private async compileMain(isolate: ivm.Isolate, context: ivm.Context, manifest: FunctionManifest, codeDir: string, timeoutMs: number): Promise<ivm.Reference<unknown>> {
    const main = await this.mainFor(manifest, codeDir);
    const options = { filename: `/${manifest.file}`, ...(main.cache ? { cachedData: main.cache } : { produceCachedData: true }) };
    const small = main.wrapper.length <= SYNC_COMPILE_MAX_CHARS;
    const script: CachedScript = small ? isolate.compileScriptSync(main.wrapper, options) : await isolate.compileScript(main.wrapper, options);
    if ((!main.cache || script.cachedDataRejected) && script.cachedData) {
      main.cache = script.cachedData;
      const bytes = Buffer.from(script.cachedData.copy());
      main.cacheBytes = bytes.byteLength;
      fsp.mkdir(this.options.cacheDir, { recursive: true })
        .then(() => fsp.writeFile(main.cacheFile, bytes))
        .catch(() => undefined);
    }
    // Running the script only evaluates the wrapper expression (a function); no user code runs.
    return (small ? script.runSync(context, { reference: true, timeout: timeoutMs }) : await script.run(context, { reference: true, timeout: timeoutMs })) as ivm.Reference<unknown>;
  }

  private async mainFor(manifest: FunctionManifest, codeDir: string): Promise<CompiledMain> {
    const key = mainKey(manifest);
    const known = this.mains.get(key);
    if (known) return known;
    const source = (await readSmallFileFast(path.join(codeDir, manifest.file)).then((b) => b!.toString('utf8'))).replace(/^#!.*/, '');
    const wrapper = `(function (exports, require, module, __filename, __dirname) {${source}\n})`;
    const cacheFile = path.join(this.options.cacheDir, `${createHash('sha256').update(process.versions.v8).update('\0').update(wrapper).digest('hex').slice(0, 40)}.v8cache`);
    const bytes = await readSmallFileFast(cacheFile, true);
    const main: CompiledMain = { wrapper, cacheFile, cache: bytes ? new ivm.ExternalCopy(toArrayBuffer(bytes)) : undefined, cacheBytes: bytes?.byteLength ?? 0 };
    this.mains.set(key, main);
    return main;
  }
}

function mainKey(manifest: FunctionManifest): string {
  return `${manifest.contentHash}/${manifest.file}`;
}

/**
 * Reads a file, synchronously when it is small (a cold start then waits for no thread-pool round
 * trip). With `optional`, a missing or unreadable file gives undefined.
 */
async function readSmallFileFast(file: string, optional = false): Promise<Buffer | undefined> {
  try {
    if (statSync(file).size <= SYNC_READ_MAX_BYTES) return readFileSync(file);
    return await fsp.readFile(file);
  } catch (err) {
    if (optional) return undefined;
    throw err;
  }
}

/**
 * The heap V8 has committed, what it allocated outside the heap, and external memory (ArrayBuffers,
 * the runtime's source) less the library text all isolates share.
 */
function sizeMbOf(stats: ivm.HeapStatistics): number {
  const external = Math.max(0, stats.externally_allocated_size - sharedLibraryBytes());
  return Math.max(1, Math.ceil((stats.total_heap_size + stats.malloced_memory + external) / (1024 * 1024)));
}

