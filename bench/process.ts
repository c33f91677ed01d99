import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';

/**
 * Starts one of the bench's scripts (server.js, baseline.js) in its own Node process with
 * --no-node-snapshot (and `nodeFlags`), and waits for the one JSON line it prints when it is ready.
 */
export function startProcess<T>(script: string, env: Record<string, string>, nodeFlags: string[] = []): Promise<{ child: ChildProcess; ready: T }> {
  const child = spawn(process.execPath, ['--no-node-snapshot', ...nodeFlags, path.join(__dirname, script)], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let out = '';
    child.once('exit', (code) => reject(new Error(`${script} exited with ${code}`)));
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (!out.includes('\n')) return;
      child.removeAllListeners('exit');
      resolve({ child, ready: JSON.parse(out.split('\n')[0]!) as T });
    });
  });
}

/** A process's resident memory in MB (Linux). */
export function rssMb(pid: number): number {
  return Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;
}
