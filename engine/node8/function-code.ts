import { createHash } from 'node:crypto';
import { promises as fsp, readFileSync, statSync } from 'node:fs';
import * as path from 'node:path';
import ivm from 'isolated-vm';
import { LRUCache } from 'lru-cache';
import { toArrayBuffer } from '../bytes';
import type { FunctionManifest } from '../manifest';
import { BUILD_RECIPE, buildFunction, type FunctionBuild } from './build';
import { StackMapper } from './stack-map';
import { backgroundFailed } from '../server-log';

/** A function version's bundle as isolates run it, with its V8 code cache and its stack mapper. */
export interface FunctionCode {
  source: string;
  async: boolean;
  stacks: StackMapper;
  /** V8's code cache of `source` (machine code made here, never taken from users). */
  cache: ivm.ExternalCopy<ArrayBuffer> | undefined;
  cacheBytes: number;
  cacheFile: string;
}

/** Files up to this size are read synchronously (a local read of a small file; a cold start skips a thread-pool round trip). */
const SYNC_READ_MAX_BYTES = 256 * 1024;

/**
 * Builds of function versions (see build.ts), kept by the content they were built from: in memory,
 * then on disk in the machine-local cache folder, then built again from the deployed files when
 * the cache lost them. A deploy builds; a cold start finds the build.
 */
export class FunctionCodeStore {
  private readonly codes = new LRUCache<string, FunctionCode>({
    maxSize: 64 * 1024 * 1024,
    sizeCalculation: (c) => c.source.length + c.cacheBytes + 64,
  });

  constructor(private readonly cacheDir: string) {}

  /** Builds the version's code from its files and keeps the result (a deploy). */
  async build(manifest: FunctionManifest, codeDir: string): Promise<FunctionCode> {
    const build = await buildFunction(codeDir, manifest.file);
    const key = buildKey(manifest);
    const code = this.remember(key, build);
    await fsp.mkdir(this.buildsDir(), { recursive: true });
    await Promise.all([
      fsp.writeFile(path.join(this.buildsDir(), `${key}.js`), build.source),
      fsp.writeFile(path.join(this.buildsDir(), `${key}.json`), JSON.stringify({ async: build.async, shifts: build.shifts, map: build.map })),
    ]);
    return code;
  }

  /** The version's code: kept, read from the cache folder, or built again. */
  async get(manifest: FunctionManifest, codeDir: string): Promise<FunctionCode> {
    const key = buildKey(manifest);
    const known = this.codes.get(key);
    if (known) return known;
    const [source, meta] = await Promise.all([readMaybeSync(path.join(this.buildsDir(), `${key}.js`)), readMaybeSync(path.join(this.buildsDir(), `${key}.json`))]);
    if (source === undefined || meta === undefined) return this.build(manifest, codeDir);
    const { async, shifts, map } = JSON.parse(meta.toString('utf8')) as Pick<FunctionBuild, 'async' | 'shifts' | 'map'>;
    return this.remember(key, { source: source.toString('utf8'), async, shifts, map });
  }

  /** Keeps the code cache V8 produced for `code` (in memory and on disk). */
  keepCodeCache(code: FunctionCode, cache: ivm.ExternalCopy<ArrayBuffer>): void {
    code.cache = cache;
    const bytes = Buffer.from(cache.copy());
    code.cacheBytes = bytes.byteLength;
    fsp
      .mkdir(this.cacheDir, { recursive: true })
      .then(() => fsp.writeFile(code.cacheFile, bytes))
      // Without it the next process compiles the code again.
      .catch((err: unknown) => backgroundFailed('code-cache-write', err, `the V8 code cache ${code.cacheFile} was not written`));
  }

  private remember(key: string, build: Omit<FunctionBuild, 'inputs'>): FunctionCode {
    const cacheFile = path.join(this.cacheDir, `${createHash('sha256').update(process.versions.v8).update('\0').update(build.source).digest('hex').slice(0, 40)}.v8cache`);
    let cacheBytes: Buffer | undefined;
    try {
      cacheBytes = readFileSync(cacheFile);
    } catch {
      cacheBytes = undefined;
    }
    const code: FunctionCode = {
      source: build.source,
      async: build.async,
      stacks: new StackMapper(build),
      cache: cacheBytes ? new ivm.ExternalCopy(toArrayBuffer(cacheBytes)) : undefined,
      cacheBytes: cacheBytes?.byteLength ?? 0,
      cacheFile,
    };
    this.codes.set(key, code);
    return code;
  }

  private buildsDir(): string {
    return path.join(this.cacheDir, 'builds');
  }
}

/** Builds depend on the deployed files, the entry file and how islet builds. */
function buildKey(manifest: FunctionManifest): string {
  return createHash('sha256').update(`${BUILD_RECIPE}\0${manifest.contentHash}\0${manifest.file}`).digest('hex').slice(0, 40);
}

/** A file's bytes, read synchronously when small; undefined when it is missing. */
async function readMaybeSync(file: string): Promise<Buffer | undefined> {
  try {
    if (statSync(file).size <= SYNC_READ_MAX_BYTES) return readFileSync(file);
    return await fsp.readFile(file);
  } catch {
    return undefined;
  }
}
