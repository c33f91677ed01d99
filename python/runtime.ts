import { execFile } from 'node:child_process';
import { existsSync, promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { setFlagsFromString } from 'node:v8';
import ivm from 'isolated-vm';
import { toArrayBuffer } from '../engine/bytes';
import { ServiceError } from '../engine/errors';
import { serverLog } from '../engine/server-log';
import type { FunctionManifest } from '../engine/manifest';
import { takeEntryPoints, type BlankIsolate } from '../engine/isolate/bridge';
import { PREBUILT_SNAPSHOT_DIR, SNAPSHOT_MAKER, snapshotName } from './snapshot-name';
import { installLibraries } from '../engine/isolate/libraries';
import { IsolateInstance } from '../engine/isolate/instance';
import { RUNTIME_FILENAME } from '../engine/sandbox/protocol';
import { installPythonBridge, type PythonBridge } from './bridge';
import { loadError, loadTimeouts, validateByLoading, type Instance, type InstanceServices, type LoadTimeouts, type Runtime, type ValidatedCode } from '../engine/runtime';

export interface PythonRuntimeOptions {
  defaultTimeoutMs: number;
  defaultMemoryMb: number;
  responseBodyBytes: number;
  /** The limit of a body read whole (`req.body`); a larger one reaches the handler as a stream. */
  requestBodyBytes: number;
  /** Where the memory snapshot is kept (made once, at first use). */
  cacheDir: string;
  /** Keep one interpreter booted ahead (see Limits.pythonSpare). */
  keepSpare: boolean;
  onInstanceDeath(instance: Instance, catastrophic: boolean): void;
}

/** Pyodide's files and the snapshot, read once and copied into each new isolate. */
interface Assets {
  /** pyodide.asm.wasm, compiled once here: every isolate gets the same compiled code (see boot). */
  module: CompiledWasm;
  stdlib: ivm.ExternalCopy<ArrayBuffer>;
  snapshot: ivm.ExternalCopy<ArrayBuffer>;
  lock: string;
  asmSource: string;
  loaderSource: string;
  sandboxSource: string;
  snapshotBytes: number;
}

/** A compiled WebAssembly.Module of this process (the server's TypeScript library types only the namespace). */
type CompiledWasm = object;
const compileWasm = (bytes: Uint8Array): Promise<CompiledWasm> => (globalThis as unknown as { WebAssembly: { compile(bytes: Uint8Array): Promise<CompiledWasm> } }).WebAssembly.compile(bytes);

const PYODIDE_DIR = path.dirname(require.resolve('pyodide/package.json'));
const SANDBOX_FILE = path.join(__dirname, 'sandbox.js');
/** Time allowed to boot an interpreter from the snapshot. */
const BOOT_TIMEOUT_MS = 30_000;

/** python2/python3 functions: Pyodide booted from a memory snapshot inside an isolated-vm isolate. */
export class PythonRuntime implements Runtime {
  readonly readsBodyStreams = 'past-whole-limit';
  private assets: Promise<Assets> | undefined;
  /** One booted interpreter of the default size, ready (or booting) for the next cold start. */
  private spare: Promise<BlankIsolate> | undefined;
  private closed = false;

  constructor(private readonly options: PythonRuntimeOptions) {}

  createInstance(manifest: FunctionManifest, codeDir: string, services: InstanceServices): Promise<Instance> {
    return this.load(manifest, codeDir, services, loadTimeouts(manifest, this.options.defaultTimeoutMs, false));
  }

  validate(manifest: FunctionManifest, codeDir: string, services: InstanceServices): Promise<ValidatedCode> {
    return validateByLoading(manifest, () => this.load(manifest, codeDir, services, loadTimeouts(manifest, this.options.defaultTimeoutMs, true)));
  }

  /** The snapshot file: the one the build made, else this server's own (made at first use). */
  snapshotFile(): string {
    const name = snapshotName();
    const prebuilt = path.join(PREBUILT_SNAPSHOT_DIR, name);
    return existsSync(prebuilt) ? prebuilt : path.join(this.options.cacheDir, name);
  }

  private loadAssets(): Promise<Assets> {
    this.assets ??= (async () => {
      const file = this.snapshotFile();
      if (!existsSync(file)) {
        // Said while it happens: the deploy or call that waits for it is otherwise silent.
        const started = performance.now();
        serverLog.info({ file }, `making Python's memory snapshot in ${path.dirname(file)}, once (the build makes it ahead; about 5 s of CPU)`);
        await makeSnapshot(file);
        serverLog.info({ file, durationMs: Math.round(performance.now() - started) }, `Python's memory snapshot made in ${((performance.now() - started) / 1000).toFixed(1)} s`);
      }
      const read = (name: string) => fsp.readFile(path.join(PYODIDE_DIR, name));
      const [wasm, stdlib, snapshot, lock, asm, loader, sandbox] = await Promise.all([
        read('pyodide.asm.wasm'),
        read('python_stdlib.zip'),
        fsp.readFile(file),
        read('pyodide-lock.json'),
        read('pyodide.asm.mjs'),
        read('pyodide.mjs'),
        fsp.readFile(SANDBOX_FILE),
      ]);
      return {
        module: await compileWasm(wasm),
        stdlib: new ivm.ExternalCopy(toArrayBuffer(stdlib)),
        snapshot: new ivm.ExternalCopy(toArrayBuffer(snapshot)),
        lock: lock.toString('utf8'),
        asmSource: asm.toString('utf8'),
        loaderSource: loader.toString('utf8'),
        sandboxSource: sandbox.toString('utf8'),
        snapshotBytes: snapshot.byteLength,
      };
    })();
    this.assets.catch(() => (this.assets = undefined));
    return this.assets;
  }

  /**
   * An interpreter booted from the snapshot, with no function yet: the spare when one is ready or
   * on its way (a cold start then waits for its rest), else a new one. Taking the spare starts the
   * next one once it is booted: one boot at a time, on the isolate's thread.
   */
  private takeInterpreter(memoryMb: number): Promise<BlankIsolate> {
    if (!this.options.keepSpare || memoryMb !== this.options.defaultMemoryMb || this.closed) return this.boot(memoryMb);
    const taken = this.spare ?? this.boot(memoryMb);
    this.spare = undefined;
    const refill = () => {
      if (this.closed || this.spare) return;
      const next = this.boot(memoryMb);
      this.spare = next;
      next.catch(() => {
        if (this.spare === next) this.spare = undefined;
      });
    };
    taken.then(refill, refill);
    return taken;
  }

  /**
   * Disposes the spare once its boot has ended. Disposing an isolate in mid-boot leaves its thread
   * releasing it after the caller may have exited, which crashes isolated-vm 5.0 at exit.
   */
  async close(): Promise<void> {
    this.closed = true;
    const spare = this.spare;
    this.spare = undefined;
    const blank = await spare?.catch(() => undefined);
    if (blank && !blank.isolate.isDisposed) blank.isolate.dispose();
  }

  /** Boots Pyodide from the memory snapshot in a new isolate; no user code runs here. */
  private async boot(memoryMb: number): Promise<BlankIsolate> {
    const assets = await this.loadAssets();
    const bridge: PythonBridge = { target: undefined, timeoutMs: 0, files: undefined };
    // The interpreter's memory is WebAssembly memory, which isolated-vm does not count: the sandbox
    // caps it at the function's memory. The isolate's own limit covers the JS side and the copies.
    const isolate = new ivm.Isolate({ memoryLimit: Math.max(256, memoryMb * 2), onCatastrophicError: () => bridge.target?.onCatastrophe() });
    try {
      const context = contextWithGc(isolate);
      installPythonBridge(isolate, context, bridge);
      installLibraries(context, ['buffer']);
      const wasmCap = Math.max(memoryMb * 1024 * 1024, assets.snapshotBytes + 16 * 1024 * 1024);
      // The files are set one by one on a reference: passed as evalClosure's arguments, the copies
      // of the snapshot and the zip (34 MB) sometimes outlived the boot's gc() (1 boot in 7,
      // measured), until a later collection. Set this way, none has in 50 boots.
      const pyFiles = await context.evalClosure('return globalThis.__isletPy = { lock: $0, memoryCap: $1 };', [assets.lock, wasmCap], { result: { reference: true } });
      // A copy of a compiled module is a handle on the same code. Released at once: one kept alive
      // would hold the process open at exit.
      pyFiles.setSync('module', new ivm.ExternalCopy(assets.module).copyInto({ release: true }));
      pyFiles.setSync('stdlib', assets.stdlib.copyInto());
      pyFiles.setSync('snapshot', assets.snapshot.copyInto());
      pyFiles.release();
      await (await isolate.compileScript(assets.sandboxSource, { filename: RUNTIME_FILENAME })).run(context);
      const namespaces: ivm.Reference<unknown>[] = [];
      for (const [name, source] of [
        ['pyodide.asm.mjs', assets.asmSource],
        ['pyodide.mjs', assets.loaderSource],
      ] as const) {
        const module = await isolate.compileModule(source, { filename: name });
        await module.instantiate(context, () => {
          throw new Error('imports are not available');
        });
        await module.evaluate();
        namespaces.push(module.namespace);
      }
      await context.evalClosure(
        'return __isletBoot($0, $1)',
        namespaces.map((n) => n.derefInto()),
        { result: { promise: true }, timeout: BOOT_TIMEOUT_MS },
      );
      return { isolate, context, memoryMb, bridge, ...takeEntryPoints(context) };
    } catch (err) {
      if (!isolate.isDisposed) isolate.dispose();
      throw err;
    }
  }

  private async load(manifest: FunctionManifest, codeDir: string, services: InstanceServices, timeouts: LoadTimeouts): Promise<IsolateInstance> {
    const timeoutMs = timeouts.load;
    let blank: BlankIsolate | undefined;
    let instance: IsolateInstance | undefined;
    try {
      blank = await this.takeInterpreter(manifest.memoryMb ?? this.options.defaultMemoryMb);
      const where = { codeDir, files: new Set(manifest.files) };
      instance = new IsolateInstance(blank, {
        timeoutMs: timeouts.call,
        files: where,
        responseBodyBytes: this.options.responseBodyBytes,
        readsBodyStreams: { requestBodyBytes: this.options.requestBodyBytes },
        services,
        onDeath: (dead, catastrophic) => this.options.onInstanceDeath(dead, catastrophic),
        disposeOnTimeout: true,
      });
      // The files' names and sizes: their bytes are read from the host when the sandbox first needs them.
      const sizes = await Promise.all(manifest.files.map(async (rel) => [rel, (await fsp.stat(path.join(codeDir, rel))).size] as const));
      const config = JSON.stringify({ accountId: manifest.account, env: manifest.env, main: manifest.file, entrypoint: manifest.entrypoint, runtime: manifest.runtime });
      Object.assign(blank.bridge as PythonBridge, { timeoutMs: timeouts.call, files: where });
      const failure = await instance.untilDeath(blank.initRef.apply(undefined, [config, JSON.stringify(sizes)], { timeout: timeoutMs, result: { copy: true } }));
      if (typeof failure === 'string') throw moduleFailure(failure);
      const heap = blank.isolate.getHeapStatisticsSync();
      const assets = await this.loadAssets();
      // The interpreter's WebAssembly memory starts at the snapshot's size and is not in the heap figures.
      instance.sizeMb = Math.ceil((heap.total_heap_size + heap.externally_allocated_size + assets.snapshotBytes) / (1024 * 1024));
      return instance;
    } catch (err) {
      if (instance) instance.dispose();
      else if (blank && !blank.isolate.isDisposed) blank.isolate.dispose();
      throw loadError(err, manifest, timeoutMs);
    }
  }
}

/** Whether this process runs with --expose-gc itself (tests do): then every context has gc() anyway. */
const PROCESS_EXPOSES_GC = typeof (globalThis as { gc?: unknown }).gc === 'function';

/**
 * A context with V8's gc() on its global object, for the sandbox to take before any user code
 * runs and call once boot is over. V8 installs gc() in contexts made while --expose-gc is set, so
 * the flag is on only while this one is made (synchronously). A node8 context that another
 * isolate's thread happens to be making in that window could get gc() too: it would only let that
 * function collect its own isolate's garbage.
 */
function contextWithGc(isolate: ivm.Isolate): ivm.Context {
  if (PROCESS_EXPOSES_GC) return isolate.createContextSync();
  setFlagsFromString('--expose-gc');
  try {
    return isolate.createContextSync();
  } finally {
    setFlagsFromString('--no-expose-gc');
  }
}

/**
 * Why the function's module did not load, as the sandbox reported it: the message, the innermost
 * file of the function's folder and its line, and the traceback of the function's own frames.
 */
function moduleFailure(json: string): ServiceError {
  const failure = JSON.parse(json) as { message?: unknown; file?: unknown; line?: unknown; stack?: unknown };
  const details: Record<string, unknown> = {};
  if (typeof failure.file === 'string') details.file = failure.file;
  if (typeof failure.line === 'number') details.line = failure.line;
  if (typeof failure.stack === 'string' && failure.stack) details.stack = failure.stack;
  return new ServiceError('ERR_FUNCTION_FAILED', String(failure.message), details);
}

function makeSnapshot(file: string): Promise<void> {
  return fsp.mkdir(path.dirname(file), { recursive: true }).then(
    () =>
      new Promise<void>((resolve, reject) => {
        // Without the parent's NODE_OPTIONS: loaders or flags meant for the server (or a test runner) do not belong here.
        execFile(process.execPath, [SNAPSHOT_MAKER, file], { timeout: 120_000, env: { ...process.env, NODE_OPTIONS: '' } }, (err, _stdout, stderr) => {
          if (err) reject(new ServiceError('ERR_INTERNAL', `could not make the Python snapshot: ${stderr || err.message}`));
          else resolve();
        });
      }),
  );
}
