import { createHash } from 'node:crypto';
import { promises as fsp, readFileSync } from 'node:fs';
import * as path from 'node:path';
import ivm from 'isolated-vm';
import { ServiceError } from '../errors';
import type { FunctionManifest } from '../manifest';
import type { Instance, InstanceServices, Runtime } from '../runtime';
import { Node8Instance } from './instance';

export interface Node8RuntimeOptions {
  defaultTimeoutMs: number;
  defaultMemoryMb: number;
  responseBodyBytes: number;
  /** Folder for V8 code caches (machine-local, produced here, never taken from users). */
  cacheDir: string;
  /** Told when an instance dies on its own (memory limit, timeout) so the warm cache drops it. */
  onInstanceDeath(instance: Instance): void;
}

/** isolated-vm sets these on a Script compiled with cachedData options (missing from its typings). */
type CachedScript = ivm.Script & ivm.CachedDataResult & { cachedDataRejected?: boolean };

const SANDBOX_FILE = path.join(__dirname, 'sandbox.js');
const SANDBOX_NAME = 'islet:runtime';

/** Time allowed for a module's top-level code at deploy-time validation. */
const VALIDATE_TIMEOUT_MS = 10_000;

export class Node8Runtime implements Runtime {
  private readonly sandboxSource: string;
  private sandboxCache: ivm.ExternalCopy<ArrayBuffer> | undefined;

  constructor(private readonly options: Node8RuntimeOptions) {
    this.sandboxSource = readFileSync(SANDBOX_FILE, 'utf8');
  }

  async createInstance(manifest: FunctionManifest, codeDir: string, services: InstanceServices): Promise<Instance> {
    return this.load(manifest, codeDir, services, manifest.timeoutMs ?? this.options.defaultTimeoutMs);
  }

  async validate(manifest: FunctionManifest, codeDir: string, services: InstanceServices): Promise<void> {
    let instance: Instance;
    try {
      instance = await this.load(manifest, codeDir, services, Math.min(manifest.timeoutMs ?? this.options.defaultTimeoutMs, VALIDATE_TIMEOUT_MS));
    } catch (err) {
      if (err instanceof ServiceError && err.code === 'ERR_FUNCTION_FAILED') {
        throw new ServiceError('ERR_INVALID_FUNCTION', `functions.${manifest.name}: ${err.message}`, err.details);
      }
      throw err;
    }
    instance.dispose();
  }

  private async load(manifest: FunctionManifest, codeDir: string, services: InstanceServices, timeoutMs: number): Promise<Node8Instance> {
    const memoryMb = manifest.memoryMb ?? this.options.defaultMemoryMb;
    let instance: Node8Instance | undefined;
    const isolate = new ivm.Isolate({
      memoryLimit: memoryMb,
      onCatastrophicError: () => instance?.onCatastrophe(),
    });
    try {
      const context = await isolate.createContext();
      const files = new Set(manifest.files);
      instance = new Node8Instance(isolate, context, {
        timeoutMs,
        responseBodyBytes: this.options.responseBodyBytes,
        services,
        readModule: (rel) => (files.has(rel) ? readFileSync(path.join(codeDir, rel), 'utf8') : undefined),
        onDeath: (dead) => this.options.onInstanceDeath(dead),
      }, memoryMb);
      const global = context.global;
      const bridge = instance.hostBridge();
      const host = await isolate.compileScript('({})').then((s) => s.run(context, { reference: true }));
      for (const [name, callback] of Object.entries(bridge)) await host.set(name, callback);
      await global.set('__isletHost', host.derefInto());
      await global.set('__isletConfig', JSON.stringify({
        accountId: manifest.account,
        env: manifest.env,
        files: manifest.files,
        main: manifest.file,
        entrypoint: manifest.entrypoint,
      }));
      await this.runSandbox(isolate, context, timeoutMs);
      const api = (await global.get('__islet', { reference: true })) as ivm.Reference<Record<string, unknown>>;
      instance.callRef = (await api.get('call', { reference: true })) as ivm.Reference<unknown>;
      instance.fireRef = (await api.get('fire', { reference: true })) as ivm.Reference<unknown>;
      const provideMain = (await api.get('provideMain', { reference: true })) as ivm.Reference<unknown>;
      const init = (await api.get('init', { reference: true })) as ivm.Reference<unknown>;
      await context.eval('delete globalThis.__islet; delete globalThis.__isletHost; delete globalThis.__isletConfig;');
      const main = await this.compileMain(isolate, context, manifest, codeDir, timeoutMs);
      await provideMain.apply(undefined, [main.derefInto()], { timeout: timeoutMs });
      await init.apply(undefined, [], { timeout: timeoutMs });
      instance.sizeMb = await estimateSizeMb(isolate);
      return instance;
    } catch (err) {
      const loaded = instance;
      if (loaded) loaded.dispose();
      else if (!isolate.isDisposed) isolate.dispose();
      throw loadError(err, manifest, timeoutMs);
    }
  }

  private async runSandbox(isolate: ivm.Isolate, context: ivm.Context, timeoutMs: number): Promise<void> {
    const script: CachedScript = await isolate.compileScript(this.sandboxSource, {
      filename: SANDBOX_NAME,
      ...(this.sandboxCache ? { cachedData: this.sandboxCache } : { produceCachedData: true }),
    });
    if (!this.sandboxCache && script.cachedData) this.sandboxCache = script.cachedData;
    await script.run(context, { timeout: timeoutMs });
  }

  /** Compiles the entry file as a CommonJS wrapper, with V8's code cache kept per content. */
  private async compileMain(isolate: ivm.Isolate, context: ivm.Context, manifest: FunctionManifest, codeDir: string, timeoutMs: number): Promise<ivm.Reference<unknown>> {
    const source = (await fsp.readFile(path.join(codeDir, manifest.file), 'utf8')).replace(/^#!.*/, '');
    const wrapper = `(function (exports, require, module, __filename, __dirname) {${source}\n})`;
    const cacheFile = path.join(this.options.cacheDir, `${createHash('sha256').update(process.versions.v8).update('\0').update(wrapper).digest('hex').slice(0, 40)}.v8cache`);
    let cached: Buffer | undefined;
    try {
      cached = await fsp.readFile(cacheFile);
    } catch {
      cached = undefined;
    }
    const script: CachedScript = await isolate.compileScript(wrapper, {
      filename: `/${manifest.file}`,
      ...(cached ? { cachedData: new ivm.ExternalCopy(toArrayBuffer(cached)) } : { produceCachedData: true }),
    });
    if ((!cached || script.cachedDataRejected) && script.cachedData) {
      const bytes = Buffer.from(script.cachedData.copy());
      fsp.mkdir(this.options.cacheDir, { recursive: true })
        .then(() => fsp.writeFile(cacheFile, bytes))
        .catch(() => undefined);
    }
    return (await script.run(context, { reference: true, timeout: timeoutMs })) as ivm.Reference<unknown>;
  }
}

async function estimateSizeMb(isolate: ivm.Isolate): Promise<number> {
  const stats = await isolate.getHeapStatistics();
  return Math.max(1, Math.ceil((stats.total_heap_size + stats.externally_allocated_size) / (1024 * 1024)));
}

function toArrayBuffer(bytes: Buffer): ArrayBuffer {
  return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
}

/** Turns a failure while loading user code into ERR_FUNCTION_FAILED with the user's own message and location. */
function loadError(err: unknown, manifest: FunctionManifest, timeoutMs: number): ServiceError {
  if (err instanceof ServiceError) return err;
  const e = err as NodeJS.ErrnoException;
  if (typeof e?.code === 'string' && /^E[A-Z]+$/.test(e.code)) {
    // The deployed files could not be read: the store's fault, not the function's.
    return new ServiceError('ERR_INTERNAL', `cannot load ${manifest.name}: ${e.message}`);
  }
  const message = String(e?.message ?? err);
  if (/Script execution timed out/.test(message)) {
    return new ServiceError('ERR_FUNCTION_FAILED', `loading ${manifest.file} took longer than ${timeoutMs} ms`);
  }
  if (/memory limit/i.test(message)) {
    return new ServiceError('ERR_FUNCTION_FAILED', `loading ${manifest.file} went over the memory limit`);
  }
  const stack = typeof e?.stack === 'string' ? e.stack.split('\n').filter((l) => !/islet:runtime|isolated-vm boundary|node:internal|\/dist\/engine\//.test(l)).join('\n') : undefined;
  const where = /\(?\/?([^\s():]+):(\d+):(\d+)\)?/.exec(stack?.split('\n').slice(1).join('\n') ?? '') ?? /\[?\/?([^\s():[\]]+):(\d+):(\d+)\]?/.exec(message);
  const details: Record<string, unknown> = {};
  if (stack) details.stack = stack;
  if (where) {
    details.file = where[1];
    details.line = Number(where[2]);
  }
  const location = where && !message.includes(`${where[1]}:${where[2]}`) ? ` (${where[1]}:${where[2]})` : '';
  return new ServiceError('ERR_FUNCTION_FAILED', `${e?.name && e.name !== 'Error' ? `${e.name}: ` : ''}${message}${location}`, details);
}
