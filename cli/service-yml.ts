import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { isMap, isScalar, isSeq, LineCounter, parseDocument, type Node, type YAMLMap } from 'yaml';
import { cronProblem, MAX_RETRIES, MAX_SCHEDULES, timezoneProblem } from '../engine/jobs/cron';
import { RUNTIMES, unknownRuntime, type FunctionSpec } from '../engine/manifest';
import { CliError } from './errors';

/**
 * One function of service.yml, ready to deploy (env resolved to strings): what a deploy asks for,
 * with the runtime as written (the server names an unknown one).
 */
export type DeploySpec = Omit<FunctionSpec, 'runtime'> & { runtime: string };

export interface ServiceFile {
  /** The path shown in messages. */
  file: string;
  dir: string;
  /** Line of a key path such as `functions.hello.entrypoint` (for errors reported later by the server). */
  lineOf(keyPath: string): number | undefined;
  /** The named function, validated, with env resolved from `environment` where the file leaves it empty. */
  spec(name: string, environment: NodeJS.ProcessEnv): DeploySpec;
  names(): string[];
}

const KNOWN_KEYS = new Set(['file', 'entrypoint', 'runtime', 'env', 'timeout', 'memory', 'schedule', 'timezone', 'catchup', 'retries', 'handler', 'description']);

/** Reads and checks `service.yml`; every error names the file, the line and the key. */
export function readServiceFile(dir: string, shownDir = dir): ServiceFile {
  const file = path.join(shownDir, 'service.yml');
  let text: string;
  try {
    text = readFileSync(path.join(dir, 'service.yml'), 'utf8');
  } catch {
    throw new CliError(`${file}: not found (run islet in a function folder, or pass --dir)`);
  }
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, uniqueKeys: true });
  if (doc.errors.length > 0) {
    const err = doc.errors[0]!;
    const line = err.linePos?.[0]?.line ?? 1;
    throw new CliError(`${file}:${line}: ${err.message.split('\n')[0]}`);
  }
  const lineAt = (node: Node | null | undefined): number => (node?.range ? lines.linePos(node.range[0]).line : 1);
  const fail = (node: Node | null | undefined, key: string, message: string): never => {
    throw new CliError(`${file}:${lineAt(node)}: ${key}: ${message}`);
  };

  const root = doc.contents;
  if (!isMap(root)) fail(root, 'functions', 'service.yml must be a map with a "functions" key');
  const functionsPair = (root as YAMLMap).items.find((p) => isScalar(p.key) && p.key.value === 'functions');
  if (!functionsPair) fail(root, 'functions', 'missing (service.yml must list its functions under "functions")');
  const functionsNode = functionsPair!.value as Node | null;
  if (!isMap(functionsNode)) fail((functionsNode ?? functionsPair!.key) as Node, 'functions', 'must be a map of function names to their settings');
  const functionsMap = functionsNode as YAMLMap;

  const entryNode = (name: string): { key: Node; value: Node | null } | undefined => {
    const pair = functionsMap.items.find((p) => isScalar(p.key) && String(p.key.value) === name);
    return pair ? { key: pair.key as Node, value: pair.value as Node | null } : undefined;
  };
  const names = () => functionsMap.items.map((p) => (isScalar(p.key) ? String(p.key.value) : '')).filter(Boolean);

  return {
    file,
    dir,
    names,
    lineOf(keyPath) {
      const parts = keyPath.split('.');
      let node: Node | null | undefined = root as Node;
      for (const part of parts) {
        if (!isMap(node)) return undefined;
        const pair: { key: unknown; value: unknown } | undefined = (node as YAMLMap).items.find((p) => isScalar(p.key) && String(p.key.value) === part);
        if (!pair) return lineAt(node);
        node = (pair.value as Node | null) ?? (pair.key as Node);
        if (part === parts[parts.length - 1]) return lineAt(pair.key as Node);
      }
      return lineAt(node);
    },
    spec(name, environment) {
      const entry = entryNode(name);
      if (!entry) throw new CliError(`${file}: functions.${name}: not found (functions in this file: ${names().join(', ') || 'none'})`);
      const key = `functions.${name}`;
      if (!isMap(entry.value)) fail(entry.value ?? entry.key, key, 'must be a map with file, entrypoint and runtime');
      const map = entry.value as YAMLMap;
      const get = (k: string) => map.items.find((p) => isScalar(p.key) && p.key.value === k);
      for (const pair of map.items) {
        const k = isScalar(pair.key) ? String(pair.key.value) : '';
        if (!KNOWN_KEYS.has(k)) fail(pair.key as Node, `${key}.${k}`, `unknown key (expected ${[...KNOWN_KEYS].filter((x) => x !== 'handler' && x !== 'description').join(', ')})`);
      }
      const str = (k: string, required: boolean): string | undefined => {
        const pair = get(k);
        if (!pair || pair.value === null || (isScalar(pair.value) && (pair.value.value === null || pair.value.value === ''))) {
          if (required) fail((pair?.key as Node) ?? entry.key, `${key}.${k}`, 'missing');
          return undefined;
        }
        if (!isScalar(pair.value) || typeof pair.value.value !== 'string') fail(pair.value as Node, `${key}.${k}`, 'must be a string');
        return (pair.value as { value: string }).value;
      };
      const runtime = str('runtime', true)!;
      if (!(RUNTIMES as readonly string[]).includes(runtime)) fail(get('runtime')!.value as Node, `${key}.runtime`, unknownRuntime(runtime));
      const fileName = str('file', true)!;
      try {
        readFileSync(path.join(dir, fileName));
      } catch {
        fail(get('file')!.value as Node, `${key}.file`, `${fileName} does not exist in ${shownDir}`);
      }
      const entrypoint = str('entrypoint', false) ?? str('handler', false) ?? 'handler';
      const env: Record<string, string> = {};
      const envPair = get('env');
      if (envPair && envPair.value !== null && !(isScalar(envPair.value) && envPair.value.value === null)) {
        if (!isMap(envPair.value)) fail(envPair.value as Node, `${key}.env`, 'must be a map of variable names to string values');
        for (const pair of (envPair.value as YAMLMap).items) {
          const varName = isScalar(pair.key) ? String(pair.key.value) : '';
          const value = pair.value as Node | null;
          if (value === null || (isScalar(value) && (value.value === null || value.value === ''))) {
            const fromShell = environment[varName];
            if (fromShell === undefined)
              fail(pair.key as Node, `${key}.env.${varName}`, `no value in the file and ${varName} is not set in your environment: set it (export ${varName}=...) or give a value in the file`);
            env[varName] = fromShell!;
          } else if (isScalar(value) && typeof value.value === 'string') {
            env[varName] = value.value;
          } else {
            const kind = isScalar(value) ? typeof value.value : isMap(value) ? 'a map' : 'a list';
            fail(value, `${key}.env.${varName}`, `value must be a string, got ${kind} (quote it: "${isScalar(value) ? String(value.value) : '...'}")`);
          }
        }
      }
      const spec: DeploySpec = { name, runtime, file: fileName, entrypoint, env };
      for (const [k, field, unit] of [
        ['timeout', 'timeoutMs', 'ms'],
        ['memory', 'memoryMb', 'MB'],
      ] as const) {
        const pair = get(k);
        if (!pair) continue;
        if (!isScalar(pair.value) || typeof pair.value.value !== 'number' || !Number.isInteger(pair.value.value) || pair.value.value <= 0) {
          fail((pair.value as Node) ?? (pair.key as Node), `${key}.${k}`, `must be a whole number of ${unit}`);
        }
        spec[field] = (pair.value as { value: number }).value;
      }
      Object.assign(spec, readJobKeys(get, key, fail));
      return spec;
    },
  };
}

type Pair = { key: unknown; value: unknown } | undefined;

/**
 * `schedule` (a cron expression or a list of them), `timezone`, `catchup` and `retries`, checked
 * here with the server's own rules so that each mistake names its line.
 */
function readJobKeys(
  get: (k: string) => Pair,
  key: string,
  fail: (node: Node | null | undefined, key: string, message: string) => never,
): Pick<DeploySpec, 'schedules' | 'timezone' | 'catchup' | 'retries'> {
  const out: Pick<DeploySpec, 'schedules' | 'timezone' | 'catchup' | 'retries'> = {};
  const zone = get('timezone');
  if (zone) {
    const value = isScalar(zone.value) ? zone.value.value : undefined;
    const problem = timezoneProblem(value);
    if (problem) fail((zone.value as Node) ?? (zone.key as Node), `${key}.timezone`, problem);
    out.timezone = value as string;
  }
  const schedule = get('schedule');
  if (schedule && schedule.value !== null && !(isScalar(schedule.value) && schedule.value.value === null)) {
    const items: Node[] = isSeq(schedule.value) ? (schedule.value.items as Node[]) : [schedule.value as Node];
    if (items.length > MAX_SCHEDULES) fail(schedule.value as Node, `${key}.schedule`, `at most ${MAX_SCHEDULES} cron expressions`);
    out.schedules = items.map((item) => {
      const value = isScalar(item) ? item.value : undefined;
      const problem = cronProblem(value, out.timezone);
      if (problem) fail(item, `${key}.schedule`, problem);
      return value as string;
    });
  }
  const catchup = get('catchup');
  if (catchup) {
    if (!isScalar(catchup.value) || typeof catchup.value.value !== 'boolean') fail((catchup.value as Node) ?? (catchup.key as Node), `${key}.catchup`, 'must be true or false');
    out.catchup = (catchup.value as { value: boolean }).value;
  }
  const retries = get('retries');
  if (retries) {
    const value = isScalar(retries.value) ? retries.value.value : undefined;
    if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > MAX_RETRIES)
      fail((retries.value as Node) ?? (retries.key as Node), `${key}.retries`, `must be a whole number from 0 to ${MAX_RETRIES}`);
    out.retries = value as number;
  }
  return out;
}
