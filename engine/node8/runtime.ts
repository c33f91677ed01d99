import { readFileSync, statSync } from 'node:fs';
import * as path from 'node:path';
import ivm from 'isolated-vm';
import { IsolateInstance } from '../isolate/instance';
import { sharedLibraryBytes } from '../isolate/libraries';
import type { FunctionManifest } from '../manifest';
import { loadError, loadTimeouts, validateByLoading, type Instance, type InstanceServices, type LoadTimeouts, type Runtime, type ValidatedCode } from '../runtime';
import { createBlankIsolate, type CachedScript, type Node8BlankIsolate } from './blank';
import { FunctionCodeStore, type FunctionCode } from './function-code';
import type { SocketLimits } from '../capabilities/sockets/limits';
import type { WebSocketLimits } from '../capabilities/websockets/limits';
import { moduleSource } from './module-source';
import { BUNDLE_FILENAME } from './stack-map';

export interface Node8RuntimeOptions {
  defaultTimeoutMs: number;
  defaultMemoryMb: number;
  responseBodyBytes: number;
  /** The largest request body a call may read whole; a call whose body is still arriving reads it as it comes. */
  requestBodyBytes: number;
  /** Folder for V8 code caches (machine-local, produced here, never taken from users). */
  cacheDir: string;
  /** Told when an instance dies on its own (memory limit, timeout) so the warm cache drops it; `catastrophic` after a fatal out-of-memory. */
  onInstanceDeath(instance: Instance, catastrophic: boolean): void;
  /** Told when an instance's size is known (after its code loaded) so the warm cache counts it. */
  onInstanceSized(instance: Instance): void;
  /** The bounds of functions' WebSockets (default WEBSOCKET_LIMITS). */
  webSockets?: WebSocketLimits;
  /** The bounds of functions' TCP sockets (default SOCKET_LIMITS). */
  sockets?: SocketLimits;
}

const SANDBOX_FILE = path.join(__dirname, 'sandbox.js');

/** Bundles up to this size are compiled synchronously (see compile). */
const SYNC_COMPILE_MAX_CHARS = 64 * 1024;

/** Delay before building the next spare isolate (about 2 ms of main-thread work). */
const REFILL_DELAY_MS = 5;

export class Node8Runtime implements Runtime {
  /** The sandbox reads a body still arriving (engine/capabilities/request-body). */
  readonly readsBodyStreams = true;
  private readonly sandbox: { source: string; cache?: ivm.ExternalCopy<ArrayBuffer> };
  /** One blank isolate of the default size, made ahead so a cold start skips creating it. */
  private spare: Node8BlankIsolate | undefined;
  private refill: NodeJS.Timeout | undefined;
  /** Built bundles and their V8 code caches, by the content they were built from. */
  private readonly codes: FunctionCodeStore;
  private closed = false;

  constructor(private readonly options: Node8RuntimeOptions) {
    this.sandbox = { source: readFileSync(SANDBOX_FILE, 'utf8') };
    this.codes = new FunctionCodeStore(options.cacheDir);
  }

  /** The instance takes calls at once; its module code runs ahead of them on the isolate's thread. */
  async createInstance(manifest: FunctionManifest, codeDir: string, services: InstanceServices): Promise<Instance> {
    return this.load(manifest, codeDir, services, loadTimeouts(manifest, this.options.defaultTimeoutMs, false), 'background');
  }

  validate(manifest: FunctionManifest, codeDir: string, services: InstanceServices): Promise<ValidatedCode> {
    return validateByLoading(manifest, () => this.load(manifest, codeDir, services, loadTimeouts(manifest, this.options.defaultTimeoutMs, true), 'wait'));
  }

  close(): void {
    this.closed = true;
    if (this.refill) clearTimeout(this.refill);
    if (this.spare && !this.spare.isolate.isDisposed) this.spare.isolate.dispose();
    this.spare = undefined;
  }

  private takeBlank(memoryMb: number): Node8BlankIsolate {
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
   * Compiles the version's bundle and runs its module code in a blank isolate. With 'wait' the
   * instance is returned once the code has loaded; with 'background' at once (see loadInBackground).
   * A deploy ('wait') builds the bundle from the files; a cold start finds it built.
   */
  private async load(manifest: FunctionManifest, codeDir: string, services: InstanceServices, timeouts: LoadTimeouts, mode: 'wait' | 'background'): Promise<IsolateInstance> {
    const timeoutMs = timeouts.load;
    let code: FunctionCode;
    try {
      // Before any isolate: a version whose files are gone is the store's fault (ERR_INTERNAL), not the function's.
      statSync(path.join(codeDir, manifest.file));
      code = mode === 'wait' ? await this.codes.build(manifest, codeDir) : await this.codes.get(manifest, codeDir);
    } catch (err) {
      throw loadError(err, manifest, timeoutMs);
    }
    const blank = this.takeBlank(manifest.memoryMb ?? this.options.defaultMemoryMb);
    const files = new Set(manifest.files);
    const where = { codeDir, files };
    blank.bridge.files = where;
    const mapStack = (text: string) => code.stacks.map(text);
    const instance = new IsolateInstance(blank, {
      timeoutMs: timeouts.call,
      files: where,
      responseBodyBytes: this.options.responseBodyBytes,
      readsBodyStreams: { requestBodyBytes: this.options.requestBodyBytes },
      services: { ...services, log: (requestId, level, text) => services.log(requestId, level, mapStack(text)) },
      readModule: (rel) => moduleSource(where.codeDir, files, rel),
      mapStack,
      onDeath: (dead, catastrophic) => this.options.onInstanceDeath(dead, catastrophic),
      remeasure: (grown) => this.measure(grown),
      webSockets: this.options.webSockets,
      sockets: this.options.sockets,
    });
    const failure = (err: unknown) => loadError(err, manifest, timeoutMs, mapStack);
    try {
      const main = await this.compile(blank.isolate, blank.context, code, timeoutMs);
      const config = JSON.stringify({
        accountId: manifest.account,
        env: manifest.env,
        main: manifest.file,
        entrypoint: manifest.entrypoint,
        memoryMb: manifest.memoryMb ?? this.options.defaultMemoryMb,
      });
      // Module code runs on the isolate's thread, never this one: a fatal out-of-memory parks the
      // thread it happens on for good. A bundle with top-level await answers a promise.
      const loaded = instance.untilDeath(blank.initRef.apply(undefined, [config, main.derefInto()], { timeout: timeoutMs, result: { promise: true } })).then((style) => {
        // The sandbox answers the style of the entry it found.
        instance.style = style === 'fetch' ? 'fetch' : 'handler';
      });
      if (mode === 'background') {
        instance.loadInBackground(loaded, failure);
        void loaded.then(
          () => this.measure(instance),
          () => undefined,
        );
        return instance;
      }
      await loaded;
      instance.sizeMb = sizeMbOf(blank.isolate.getHeapStatisticsSync());
      return instance;
    } catch (err) {
      instance.dispose();
      throw failure(err);
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
   * Compiles the version's bundle with its V8 code cache. Compiling runs no user code; a small
   * bundle is compiled on this thread (tens of µs, and one round trip to the isolate's thread
   * less), a large one on the isolate's thread so it cannot stall the server.
   */
  private async compile(isolate: ivm.Isolate, context: ivm.Context, code: FunctionCode, timeoutMs: number): Promise<ivm.Reference<unknown>> {
    const options = { filename: BUNDLE_FILENAME, ...(code.cache ? { cachedData: code.cache } : { produceCachedData: true }) };
    const small = code.source.length <= SYNC_COMPILE_MAX_CHARS;
    const script: CachedScript = small ? isolate.compileScriptSync(code.source, options) : await isolate.compileScript(code.source, options);
    if ((!code.cache || script.cachedDataRejected) && script.cachedData) this.codes.keepCodeCache(code, script.cachedData);
    // Running the script only evaluates the wrapper expression (a function); no user code runs.
    return (small ? script.runSync(context, { reference: true, timeout: timeoutMs }) : await script.run(context, { reference: true, timeout: timeoutMs })) as ivm.Reference<unknown>;
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
