import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';

export interface LoadSpec {
  base: string;
  /** Paths to request; several are taken round-robin. */
  paths: string[];
  method?: string;
  body?: string;
  headers: Record<string, string>;
  connections: number;
  durationSec: number;
}

export interface LoadResult {
  rps: number;
  p50Ms: number;
  p99Ms: number;
  requests: number;
  errors: number;
  /** The server's CPU time per request over the load, µs (all its threads and processes; from /proc). */
  cpuUsPerRequest?: number;
}

export type LoadTool = 'wrk' | 'autocannon';

export function pickTool(requested?: string): LoadTool {
  if (requested === 'wrk' || requested === 'autocannon') return requested;
  try {
    execFileSync('wrk', ['--version'], { stdio: 'ignore' });
    return 'wrk';
  } catch (err) {
    // wrk prints its version and exits 1; only a missing binary is ENOENT.
    return (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'autocannon' : 'wrk';
  }
}

/** Runs the load generator in its own process: wrk (one thread) or autocannon. */
export function runLoad(tool: LoadTool, spec: LoadSpec): Promise<LoadResult> {
  return tool === 'wrk' ? runWrk(spec) : runAutocannon(spec);
}

function runWrk(spec: LoadSpec): Promise<LoadResult> {
  const dir = mkdtempSync(path.join(tmpdir(), 'islet-wrk-'));
  const script = path.join(dir, 'script.lua');
  const lua = [
    `wrk.method = ${JSON.stringify(spec.method ?? 'GET')}`,
    spec.body !== undefined ? `wrk.body = ${luaString(spec.body)}` : '',
    ...Object.entries(spec.headers).map(([k, v]) => `wrk.headers[${JSON.stringify(k)}] = ${JSON.stringify(v)}`),
    `local paths = { ${spec.paths.map((p) => JSON.stringify(p)).join(', ')} }`,
    'local i = 0',
    'request = function() i = i % #paths + 1; return wrk.format(nil, paths[i]) end',
  ].join('\n');
  writeFileSync(script, lua);
  const args = ['-t1', `-c${spec.connections}`, `-d${spec.durationSec}s`, '--latency', '-s', script, spec.base];
  return new Promise((resolve, reject) => {
    execFile('wrk', args, { maxBuffer: 16 * 1024 * 1024 }, (err, stdout) => {
      if (err) return reject(err);
      resolve(parseWrk(stdout));
    });
  });
}

function luaString(text: string): string {
  return `"${text.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`;
}

function toMs(value: string, unit: string): number {
  return unit === 'us' ? Number(value) / 1000 : unit === 's' ? Number(value) * 1000 : unit === 'm' ? Number(value) * 60_000 : Number(value);
}

export function parseWrk(out: string): LoadResult {
  const latency = (p: string) => {
    const m = new RegExp(`^\\s+${p}%\\s+([\\d.]+)(us|ms|s|m)$`, 'm').exec(out);
    return m ? toMs(m[1]!, m[2]!) : NaN;
  };
  const requests = Number(/(\d+) requests in/.exec(out)?.[1] ?? 0);
  const non2xx = Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0);
  const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
  const socketErrors = socket ? socket.slice(1).reduce((a, b) => a + Number(b), 0) : 0;
  return { rps: Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? 0), p50Ms: latency('50'), p99Ms: latency('99'), requests, errors: non2xx + socketErrors };
}

function runAutocannon(spec: LoadSpec): Promise<LoadResult> {
  const runner = path.join(__dirname, 'autocannon-runner.js');
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [runner, JSON.stringify(spec)], { maxBuffer: 16 * 1024 * 1024 }, (err, stdout) => {
      if (err) return reject(err);
      resolve(JSON.parse(stdout) as LoadResult);
    });
  });
}
