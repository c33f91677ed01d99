import { ServiceError } from './errors';
import { cronProblem, DEFAULT_RETRIES, MAX_RETRIES, MAX_SCHEDULES, timezoneProblem } from './jobs/cron';
import type { Limits } from './limits';

export const RUNTIMES = ['node8', 'python2', 'python3'] as const;
export type RuntimeName = (typeof RUNTIMES)[number];

/**
 * Why a runtime name is refused. A Node or Python version's name is not made an alias of node8 or
 * python3: node8 is a V8 isolate with the Node built-ins that fit a sandbox (no servers, sockets or
 * writes), not the Node.js of that version, and a name that promised it would be read back in every
 * listing. The refusal says which name to write instead.
 */
export function unknownRuntime(runtime: unknown): string {
  const shown = JSON.stringify(runtime);
  const expected = `expected one of ${RUNTIMES.join(', ')}`;
  if (typeof runtime === 'string' && /^(node(js)?[\d.x]*|javascript|js|typescript|ts|bun|deno)$/i.test(runtime)) {
    return `unknown runtime ${shown}: JavaScript and TypeScript run as node8 (a V8 isolate with the Node built-ins that fit a sandbox, whichever Node version the code was written for); write runtime: node8`;
  }
  if (typeof runtime === 'string' && /^(python|py|cpython)[\d.]*$/i.test(runtime)) {
    return `unknown runtime ${shown}: Python runs as python3 (CPython 3.14 in Pyodide; python2 is the same with the Python 2 names that are cheap to provide); write runtime: python3`;
  }
  return `unknown runtime ${shown} (${expected})`;
}

/** What a deploy asks for: one entry of `service.yml`, with env already resolved to strings. */
export interface FunctionSpec {
  name: string;
  runtime: RuntimeName;
  file: string;
  entrypoint: string;
  env: Record<string, string>;
  /** Wall-clock timeout in ms; the server default when absent. */
  timeoutMs?: number;
  /** Memory per instance in MB; the server default when absent. */
  memoryMb?: number;
  /** Cron expressions (5 fields, or 6 with seconds) the function runs on (`schedule` in service.yml). */
  schedules?: string[];
  /** The IANA time zone its schedules are read in (default UTC). */
  timezone?: string;
  /** After a missed tick (no node was up), run the latest one once when a node is back (default false). */
  catchup?: boolean;
  /** Runs again of an asynchronous invocation that failed (default 2). */
  retries?: number;
}

/** A deployed version, as stored beside its code in `manifest.json`. Immutable once stored. */
export interface FunctionManifest extends FunctionSpec {
  account: string;
  /** 1, 2, 3… per function (0 while a deploy checks it, before it is stored). */
  version: number;
  deployedAt: string;
  /** The deployer's note (`islet deploy --message`). */
  message?: string;
  /** sha256 over the sorted file paths and contents of the deployed code. */
  contentHash: string;
  /** Relative POSIX paths of every deployed file. */
  files: string[];
  bytes: number;
  /**
   * How the entry is called, as the deploy's check found it: `handler(body, context)`, or a
   * default export's `fetch(request, env, ctx)` (node8). Absent in versions deployed before islet
   * kept it.
   */
  style?: HandlerStyle;
}

/** How a function's entry is called (see FunctionManifest.style). */
export type HandlerStyle = 'handler' | 'fetch';

const FUNCTION_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const JS_IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
const PY_IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * A key derived from a manifest, made once per manifest object and then reused: the hot path looks
 * functions up by these keys on every call, and a fresh string each time costs a flatten and a hash.
 */
export function keyPerManifest<M extends object>(make: (manifest: M) => string): (manifest: M) => string {
  const keys = new WeakMap<M, string>();
  return (manifest) => {
    let key = keys.get(manifest);
    if (key === undefined) {
      key = make(manifest);
      keys.set(manifest, key);
    }
    return key;
  };
}

export function isFunctionName(value: string): boolean {
  return FUNCTION_NAME.test(value);
}

export function isPublicName(name: string): boolean {
  return name.startsWith('public_');
}

export function isPython(runtime: RuntimeName): boolean {
  return runtime === 'python2' || runtime === 'python3';
}

function invalid(message: string, key: string): ServiceError {
  return new ServiceError('ERR_INVALID_FUNCTION', message, { key });
}

/** Checks a spec's shape and returns a normalised copy; every error names the offending key. */
export function validateSpec(input: unknown, limits: Limits): FunctionSpec {
  if (typeof input !== 'object' || input === null) throw invalid('function spec must be an object', 'spec');
  const spec = input as Record<string, unknown>;
  const name = spec.name;
  if (typeof name !== 'string' || !isFunctionName(name)) {
    throw invalid(`invalid function name ${JSON.stringify(name)}: use 1-128 characters of A-Z a-z 0-9 _ -, starting with a letter or digit`, 'name');
  }
  const runtime = spec.runtime;
  if (typeof runtime !== 'string' || !(RUNTIMES as readonly string[]).includes(runtime)) {
    throw invalid(`functions.${name}.runtime: ${unknownRuntime(runtime)}`, 'runtime');
  }
  const file = spec.file;
  if (typeof file !== 'string' || file.length === 0) throw invalid(`functions.${name}.file: must be a file path`, 'file');
  const normalizedFile = normalizeRelative(file);
  if (normalizedFile === undefined) throw invalid(`functions.${name}.file: ${JSON.stringify(file)} must be a path inside the function folder`, 'file');
  const entrypoint = spec.entrypoint ?? 'handler';
  const identifier = isPython(runtime as RuntimeName) ? PY_IDENTIFIER : JS_IDENTIFIER;
  if (typeof entrypoint !== 'string' || !identifier.test(entrypoint)) {
    throw invalid(`functions.${name}.entrypoint: ${JSON.stringify(entrypoint)} is not a valid identifier`, 'entrypoint');
  }
  const env: Record<string, string> = {};
  if (spec.env !== undefined && spec.env !== null) {
    if (typeof spec.env !== 'object' || Array.isArray(spec.env)) throw invalid(`functions.${name}.env: must be a map of names to strings`, 'env');
    for (const [key, value] of Object.entries(spec.env as Record<string, unknown>)) {
      if (!ENV_NAME.test(key)) throw invalid(`functions.${name}.env.${key}: invalid variable name`, `env.${key}`);
      if (typeof value !== 'string') throw invalid(`functions.${name}.env.${key}: value must be a string, got ${typeof value}`, `env.${key}`);
      env[key] = value;
    }
  }
  const result: FunctionSpec = { name, runtime: runtime as RuntimeName, file: normalizedFile, entrypoint, env };
  if (spec.timeoutMs !== undefined) {
    const t = spec.timeoutMs;
    if (typeof t !== 'number' || !Number.isInteger(t) || t < 1 || t > limits.maxTimeoutMs) {
      throw invalid(`functions.${name}.timeout: must be a whole number of ms from 1 to ${limits.maxTimeoutMs}`, 'timeout');
    }
    result.timeoutMs = t;
  }
  if (spec.memoryMb !== undefined) {
    const m = spec.memoryMb;
    if (typeof m !== 'number' || !Number.isInteger(m) || m < 16 || m > limits.maxMemoryMb) {
      throw invalid(`functions.${name}.memory: must be a whole number of MB from 16 to ${limits.maxMemoryMb}`, 'memory');
    }
    result.memoryMb = m;
  }
  Object.assign(result, validateJobFields(spec, name));
  return result;
}

/** The spec's schedules, time zone, catch-up and retries (engine/jobs), each error naming its key. */
function validateJobFields(spec: Record<string, unknown>, name: string): Pick<FunctionSpec, 'schedules' | 'timezone' | 'catchup' | 'retries'> {
  const out: Pick<FunctionSpec, 'schedules' | 'timezone' | 'catchup' | 'retries'> = {};
  if (spec.timezone !== undefined) {
    const problem = timezoneProblem(spec.timezone);
    if (problem) throw invalid(`functions.${name}.timezone: ${problem}`, 'timezone');
    out.timezone = spec.timezone as string;
  }
  const given = spec.schedules ?? spec.schedule;
  if (given !== undefined && given !== null) {
    const list = typeof given === 'string' ? [given] : given;
    if (!Array.isArray(list) || list.length > MAX_SCHEDULES) throw invalid(`functions.${name}.schedule: must be a cron expression or a list of at most ${MAX_SCHEDULES}`, 'schedule');
    const schedules: string[] = [];
    for (const item of list) {
      const problem = cronProblem(item, out.timezone);
      if (problem) throw invalid(`functions.${name}.schedule: ${problem}`, 'schedule');
      const expression = (item as string).trim().replace(/\s+/g, ' ');
      if (!schedules.includes(expression)) schedules.push(expression);
    }
    if (schedules.length > 0) out.schedules = schedules;
  }
  if (spec.catchup !== undefined) {
    if (typeof spec.catchup !== 'boolean') throw invalid(`functions.${name}.catchup: must be true or false`, 'catchup');
    if (spec.catchup) out.catchup = true;
  }
  if (spec.retries !== undefined) {
    const r = spec.retries;
    if (typeof r !== 'number' || !Number.isInteger(r) || r < 0 || r > MAX_RETRIES) throw invalid(`functions.${name}.retries: must be a whole number from 0 to ${MAX_RETRIES}`, 'retries');
    if (r !== DEFAULT_RETRIES) out.retries = r;
  }
  return out;
}

/** The retries of a function's asynchronous invocations. */
export function retriesOf(manifest: Pick<FunctionSpec, 'retries'>): number {
  return manifest.retries ?? DEFAULT_RETRIES;
}

/** Normalises a relative POSIX path; undefined when it is absolute or climbs out with `..`. */
export function normalizeRelative(p: string): string | undefined {
  if (p.includes('\0') || p.includes('\\')) return undefined;
  if (p.startsWith('/')) return undefined;
  const parts: string[] = [];
  for (const part of p.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') return undefined;
    parts.push(part);
  }
  return parts.length ? parts.join('/') : undefined;
}

/** What the management API shows of a deployed function: env names, never their values. */
export interface FunctionDescription {
  name: string;
  runtime: RuntimeName;
  file: string;
  entrypoint: string;
  /** The version described (the one serving most calls, in a function's description). */
  version: number;
  deployedAt: string;
  message: string | undefined;
  contentHash: string;
  bytes: number;
  files: number;
  env: string[];
  timeoutMs: number | undefined;
  memoryMb: number | undefined;
  public: boolean;
  /** How the entry is called (undefined for versions deployed before islet kept it). */
  style: HandlerStyle | undefined;
  /** Its cron schedules and their time zone (absent: none). */
  schedules?: string[];
  timezone?: string;
  retries: number;
  /** The versions serving and their shares of the calls (in a function's description). */
  traffic?: { version: number; percent: number }[];
}

export function describeFunction(m: FunctionManifest, traffic?: { version: number; percent: number }[]): FunctionDescription {
  return {
    name: m.name,
    runtime: m.runtime,
    file: m.file,
    entrypoint: m.entrypoint,
    version: m.version,
    deployedAt: m.deployedAt,
    message: m.message,
    contentHash: m.contentHash,
    bytes: m.bytes,
    files: m.files.length,
    env: Object.keys(m.env).sort(),
    timeoutMs: m.timeoutMs,
    memoryMb: m.memoryMb,
    public: isPublicName(m.name),
    style: m.style,
    ...(m.schedules ? { schedules: m.schedules, timezone: m.timezone ?? 'UTC' } : {}),
    retries: retriesOf(m),
    ...(traffic ? { traffic } : {}),
  };
}
