// Node's modules a sandbox cannot offer (processes, UDP, servers, threads, the VM): they load,
// as workerd's do, so packages that only import them work, and every function of theirs throws an
// error naming the module.
import { notImplemented, notImplementedClass } from './not-implemented';

/** A module whose functions and classes throw when used; `values` are plain data that works. */
function module(name: string, functions: string[], classes: string[] = [], values: Record<string, unknown> = {}): Record<string, unknown> {
  const m: Record<string, unknown> = { ...values };
  for (const fn of functions) m[fn] = notImplemented(`${name}.${fn}`);
  for (const cls of classes) m[cls] = notImplementedClass(`${name}.${cls}`);
  return m;
}

const isIPv4 = (s: unknown) => typeof s === 'string' && /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/.test(s);
const isIPv6 = (s: unknown) => typeof s === 'string' && s.includes(':') && /^[0-9a-fA-F:.]+$/.test(s) && (s.match(/::/g)?.length ?? 0) <= 1;

export const child_process = module('child_process', ['exec', 'execFile', 'execFileSync', 'execSync', 'fork', 'spawn', 'spawnSync'], ['ChildProcess']);
export const cluster = module('cluster', ['fork', 'setupPrimary', 'setupMaster', 'disconnect', 'on', 'once'], ['Worker'], {
  isMaster: true,
  isPrimary: true,
  isWorker: false,
  workers: {},
  settings: {},
});
export const dgram = module('dgram', ['createSocket'], ['Socket']);
type Address = { address: string; family: number };
/**
 * What dns.lookup answers without a resolver: 'localhost' and IP literals (Fastify looks up the
 * host it listens on); undefined for a name, which needs the network.
 */
function localLookup(hostname: unknown): Address | undefined {
  if (hostname === 'localhost') return { address: '127.0.0.1', family: 4 };
  if (isIPv4(hostname)) return { address: hostname as string, family: 4 };
  if (isIPv6(hostname)) return { address: hostname as string, family: 6 };
  return undefined;
}

const nameLookup = (api: string, hostname: unknown) =>
  Object.assign(new Error(`${api} is not available in islet functions for a name (${JSON.stringify(hostname)}): it answers localhost and IP literals only`), { code: 'ERR_METHOD_NOT_IMPLEMENTED' });

function lookup(hostname: unknown, options: unknown, callback?: unknown): void {
  const done = (typeof options === 'function' ? options : callback) as (err: Error | null, address?: unknown, family?: number) => void;
  const all = typeof options === 'object' && options !== null && (options as { all?: unknown }).all === true;
  const found = localLookup(hostname);
  if (!found) throw nameLookup('dns.lookup', hostname);
  queueMicrotask(() => (all ? done(null, [found]) : done(null, found.address, found.family)));
}

async function lookupPromise(hostname: unknown, options?: unknown): Promise<Address | Address[]> {
  const found = localLookup(hostname);
  if (!found) throw nameLookup('dns.promises.lookup', hostname);
  return typeof options === 'object' && options !== null && (options as { all?: unknown }).all === true ? [found] : found;
}

export const dnsPromises = module(
  'dns.promises',
  ['lookupService', 'resolve', 'resolve4', 'resolve6', 'resolveAny', 'resolveCname', 'resolveMx', 'resolveNs', 'resolveTxt', 'resolveSrv', 'reverse'],
  ['Resolver'],
  { lookup: lookupPromise },
);
export const dns = module(
  'dns',
  ['lookupService', 'resolve', 'resolve4', 'resolve6', 'resolveAny', 'resolveCname', 'resolveMx', 'resolveNs', 'resolveTxt', 'resolveSrv', 'reverse', 'setServers', 'getServers'],
  ['Resolver'],
  { promises: dnsPromises, lookup },
);
export const domain = module('domain', ['create'], ['Domain']);
export const http2 = module('http2', ['connect', 'createServer', 'createSecureServer'], ['Http2ServerRequest', 'Http2ServerResponse'], { constants: {} });
export const inspector = module('inspector', ['open', 'close', 'url', 'waitForDebugger'], ['Session'], { console: (globalThis as unknown as Record<string, unknown>).console });
export const readline = module('readline', ['createInterface', 'clearLine', 'clearScreenDown', 'cursorTo', 'moveCursor', 'emitKeypressEvents'], ['Interface']);
export const repl = module('repl', ['start'], ['REPLServer']);
export const trace_events = module('trace_events', ['createTracing', 'getEnabledCategories']);
export const v8 = module(
  'v8',
  ['getHeapStatistics', 'getHeapSpaceStatistics', 'getHeapSnapshot', 'writeHeapSnapshot', 'setFlagsFromString', 'serialize', 'deserialize', 'takeCoverage', 'stopCoverage'],
  ['Serializer', 'Deserializer'],
  { cachedDataVersionTag: () => 0 },
);
export const vm = module('vm', ['createContext', 'isContext', 'runInContext', 'runInNewContext', 'runInThisContext', 'compileFunction', 'measureMemory'], ['Script', 'Module', 'SourceTextModule']);
export const wasi = module('wasi', [], ['WASI']);
export const worker_threads = module('worker_threads', ['markAsUntransferable', 'moveMessagePortToContext', 'receiveMessageOnPort', 'getEnvironmentData', 'setEnvironmentData'], ['Worker'], {
  isMainThread: true,
  parentPort: null,
  threadId: 0,
  workerData: null,
  resourceLimits: {},
  SHARE_ENV: Symbol.for('nodejs.worker_threads.SHARE_ENV'),
});
