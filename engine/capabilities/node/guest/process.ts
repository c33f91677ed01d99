// node8's `process` (made on first use): the function's declared env plus SERVICE_ACCOUNT_ID, fixed
// facts about a harmless Linux, and the event-emitter surface packages call (listeners are
// accepted and never fire). Nothing of the host's process reaches it.
import { INTERNAL, type Internal } from '../../../node8/sandbox/internal';

declare const require: (id: string) => unknown;
const internal = require(INTERNAL) as Internal;
const log = (level: 'info' | 'error' | 'warn', text: string) => internal.log(level, text);

type ProcessObject = Record<string, unknown> & { env: Record<string, string> };

function makeProcess(): ProcessObject {
  const started = Date.now();
  const hrtime = (prev?: [number, number]): [number, number] => {
    const now = Date.now();
    const t: [number, number] = [Math.floor(now / 1000), (now % 1000) * 1e6];
    if (!prev) return t;
    let seconds = t[0] - prev[0];
    let nanos = t[1] - prev[1];
    if (nanos < 0) {
      seconds -= 1;
      nanos += 1e9;
    }
    return [seconds, nanos];
  };
  const process: ProcessObject = {
    env: internal.env,
    argv: ['node'],
    argv0: 'node',
    execArgv: [],
    execPath: '/usr/local/bin/node',
    exitCode: undefined,
    pid: 1,
    ppid: 0,
    arch: 'x64',
    platform: 'linux',
    title: 'islet',
    version: 'v20.0.0',
    versions: { node: '20.0.0', islet: '1' },
    release: { name: 'node' },
    features: {},
    config: { variables: {} },
    browser: false,
    stdout: { isTTY: false, write: (chunk: unknown) => (log('info', String(chunk).replace(/\n$/, '')), true) },
    stderr: { isTTY: false, write: (chunk: unknown) => (log('error', String(chunk).replace(/\n$/, '')), true) },
    cwd: () => '/',
    chdir: () => {
      throw new Error('process.chdir() is not available in islet functions');
    },
    umask: () => 0o22,
    uptime: () => (Date.now() - started) / 1000,
    memoryUsage: Object.assign(() => ({ rss: 0, heapTotal: 0, heapUsed: 0, external: 0, arrayBuffers: 0 }), { rss: () => 0 }),
    cpuUsage: () => ({ user: 0, system: 0 }),
    nextTick: (fn: (...args: unknown[]) => void, ...args: unknown[]) => queueMicrotask(() => fn(...args)),
    hrtime: Object.assign(hrtime, { bigint: () => BigInt(Date.now()) * 1_000_000n }),
    emitWarning: (warning: unknown) => log('warn', `Warning: ${warning instanceof Error ? warning.message : String(warning)}`),
    binding: undefined,
    exit: () => {
      throw new Error('process.exit() is not available in islet functions');
    },
    abort: () => {
      throw new Error('process.abort() is not available in islet functions');
    },
    kill: () => {
      throw new Error('process.kill() is not available in islet functions');
    },
  };
  for (const name of ['on', 'once', 'off', 'addListener', 'removeListener', 'removeAllListeners', 'prependListener', 'prependOnceListener', 'setMaxListeners']) {
    process[name] = () => process;
  }
  process.emit = () => false;
  process.listeners = () => [];
  process.listenerCount = () => 0;
  process.getMaxListeners = () => 10;
  // `Object.prototype.toString.call(process)` is how packages (axios among them) tell Node.
  Object.defineProperty(process, Symbol.toStringTag, { value: 'process' });
  return process;
}

export default makeProcess();
