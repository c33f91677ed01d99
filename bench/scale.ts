/**
 * The scale scenarios of `npm run bench`: islet under its supervisor with 1 and N workers, a
 * rolling restart under load, and a CPU-bound function with one instance and with several. Each
 * reports the server's CPU time per request across all its threads and processes (from /proc), so
 * that the rate on more cores can be read off a 2-core machine where the load generator takes a
 * core of its own.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { packFolder } from '../cli/pack';
import type { LoadResult } from './load';

const ROOT = path.resolve(__dirname, '..', '..');
const CLK_TCK = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;
  } catch {
    return 100;
  }
})();

/** CPU time (user + system, every thread) of the processes so far, in ms. */
export function cpuMs(pids: number[]): number {
  let ticks = 0;
  for (const pid of pids) {
    try {
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // gone (a worker replaced during the load)
    }
  }
  return (ticks * 1000) / CLK_TCK;
}

/** Runs a load and adds the server's CPU time per request (µs) over it. */
export async function withCpu(pids: () => number[], load: () => Promise<LoadResult>): Promise<LoadResult> {
  const before = pids();
  const start = cpuMs(before);
  const result = await load();
  const used = cpuMs(before) - start;
  return { ...result, cpuUsPerRequest: result.requests > 0 ? (used * 1000) / result.requests : NaN };
}

export interface SupervisedServer {
  url: string;
  accountId: string;
  apiKey: string;
  child: ChildProcess;
  /** The supervisor and its workers now. */
  pids(): Promise<number[]>;
  /** Deploys with this server's first account, or the one given (a node that did not create it). */
  deploy(name: string, entrypoint: string, dir: string, extra?: Record<string, unknown>, as?: { accountId: string; apiKey: string }): Promise<void>;
  stop(): void;
}

/** `islet serve --workers N` on a fresh data directory, as a user runs it. */
export function startSupervised(workers: number, extraArgs: string[] = []): Promise<SupervisedServer> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'islet-bench-workers-'));
  // /healthz lists the workers for the operator only (the metrics token).
  const token = 'bench-scale-token';
  const child = spawn(
    process.execPath,
    ['--no-node-snapshot', path.join(ROOT, 'dist', 'supervisor', 'main.js'), '--port', '0', '--data', dataDir, '--workers', String(workers), '--metrics-token', token, ...extraArgs],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
      detached: true,
    },
  );
  return new Promise((resolve, reject) => {
    let out = '';
    child.once('exit', (code) => reject(new Error(`islet serve exited with ${code}`)));
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const url = /listening on (http:\/\/\S+)/.exec(out)?.[1];
      if (!url) return;
      child.removeAllListeners('exit');
      // Only the node that created the first account prints it.
      const accountId = /account id: (\S+)/.exec(out)?.[1] ?? '';
      const apiKey = /API key:\s+(\S+)/.exec(out)?.[1] ?? '';
      resolve({
        url,
        accountId,
        apiKey,
        child,
        async pids() {
          const health = (await (await fetch(`${url}/healthz`, { headers: { connection: 'close', authorization: `Bearer ${token}` } })).json()) as { workers: { pid: number }[] };
          return [child.pid!, ...health.workers.map((w) => w.pid)];
        },
        async deploy(name, entrypoint, dir, extra = {}, as = { accountId, apiKey }) {
          const form = new FormData();
          form.set('spec', JSON.stringify({ runtime: 'node8', file: 'function.js', entrypoint, env: {}, ...extra }));
          form.set('bundle', new Blob([await packFolder(dir)]), 'bundle.tar.gz');
          const res = await fetch(`${url}/v2/accounts/${as.accountId}/functions/${name}`, { method: 'PUT', headers: { 'X-Service-Api-Key': as.apiKey }, body: form });
          if (res.status >= 300) throw new Error(`deploy ${name}: ${res.status} ${await res.text()}`);
        },
        stop() {
          try {
            process.kill(-child.pid!, 'SIGKILL');
          } catch {
            // gone
          }
        },
      });
    });
  });
}
