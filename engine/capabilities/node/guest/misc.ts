// node8's smaller modules: `os` (fixed, harmless values), `tty`, `perf_hooks` (from unenv),
// `diagnostics_channel` (diagnostics-channel.ts), `timers/promises` (over the runtime's timers), `module` (createRequire, isBuiltin)
// and `constants`.
import osModule from 'unenv/node/os';
import * as perfHooks from 'unenv/node/perf_hooks';
import ttyModule from 'unenv/node/tty';
import { INTERNAL, type Internal } from '../../../node8/sandbox/internal';
import * as diagnosticsChannel from './diagnostics-channel';

declare const require: (id: string) => unknown;
const internal = require(INTERNAL) as Internal;
const g = globalThis as unknown as Record<string, unknown>;

export const os = {
  ...osModule,
  hostname: () => 'islet',
  cpus: () => [{ model: 'islet', speed: 0, times: { user: 0, nice: 0, sys: 0, idle: 0, irq: 0 } }],
  availableParallelism: () => 1,
  arch: () => 'x64',
  machine: () => 'x86_64',
  release: () => '6.0.0',
  version: () => '#1 SMP',
  totalmem: () => internal.memoryLimitMb * 2 ** 20,
  freemem: () => internal.memoryLimitMb * 2 ** 19,
  userInfo: () => ({ uid: 1000, gid: 1000, username: 'islet', homedir: '/', shell: null }),
  homedir: () => '/',
  tmpdir: () => '/tmp',
};
export const tty = ttyModule;
export const diagnostics_channel = { ...diagnosticsChannel };
export const perf_hooks = { ...perfHooks, performance: g.performance, default: undefined };
delete (perf_hooks as Record<string, unknown>).default;

type Timers = { setTimeout(fn: () => void, ms?: number): unknown; clearTimeout(t: unknown): void; setImmediate(fn: () => void): unknown };
const timers = () => require('timers') as Timers;

function abortable<T>(
  signal: { aborted: boolean; reason: unknown; addEventListener(t: string, f: () => void, o?: object): void } | undefined,
  start: (resolve: (v: T) => void) => unknown,
  cancel: (handle: unknown) => void,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const handle = start(resolve);
    signal?.addEventListener(
      'abort',
      () => {
        cancel(handle);
        reject(signal.reason);
      },
      { once: true },
    );
  });
}

export const timersPromises = {
  setTimeout: <T>(ms?: number, value?: T, options: { signal?: never } = {}) =>
    abortable<T>(
      options.signal,
      (resolve) => timers().setTimeout(() => resolve(value as T), ms),
      (h) => timers().clearTimeout(h),
    ),
  setImmediate: <T>(value?: T, options: { signal?: never } = {}) =>
    abortable<T>(
      options.signal,
      (resolve) => timers().setImmediate(() => resolve(value as T)),
      (h) => timers().clearTimeout(h),
    ),
  async *setInterval<T>(ms?: number, value?: T) {
    for (;;) {
      await new Promise((resolve) => timers().setTimeout(resolve as () => void, ms));
      yield value;
    }
  },
  scheduler: {
    wait: (ms: number, options?: { signal?: never }) => timersPromises.setTimeout(ms, undefined, options),
    yield: () => timersPromises.setImmediate(),
  },
};

/** Node's module names node8 offers (derived from the capabilities' manifests by the build). */
const BUILTINS = ISLET_BUILTIN_MODULES.split(',');

/** A `require` resolving from the folder of `filename` (a path or file: URL in the function's folder). */
function createRequire(filename: string | { href: string }): (id: string) => unknown {
  const text = typeof filename === 'string' ? filename : filename.href;
  const path = text.startsWith('file://') ? decodeURIComponent(text.slice(7)) : text;
  const dir = path.endsWith('/') ? path : path.slice(0, path.lastIndexOf('/') + 1);
  return internal.requireFrom(dir || '/');
}

export const module = {
  builtinModules: BUILTINS,
  isBuiltin: (id: string) => BUILTINS.includes(id.startsWith('node:') ? id.slice(5) : id),
  createRequire,
  Module: class Module {},
  register: () => undefined,
  syncBuiltinESMExports: () => undefined,
  findSourceMap: () => undefined,
};

export const constants = { ...(osModule as unknown as { constants: Record<string, unknown> }).constants };
