import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { freePort } from './free-port';

/** A private redis-server for a test file: no persistence, on a free loopback port. */
export interface PrivateRedis {
  port: number;
  stop(): void;
}

/** The redis-server binary, if installed. */
function redisBin(): string | undefined {
  const found = spawnSync('sh', ['-c', 'command -v redis-server || ls /usr/bin/redis-server 2>/dev/null'], { encoding: 'utf8' }).stdout.trim().split('\n')[0];
  return found || undefined;
}

/** Why redis tests cannot run here, if they cannot (CI must have it: .ci/run installs redis-server). */
export function redisMissing(): string | undefined {
  return redisBin() ? undefined : 'redis-server is not installed: apt-get install redis-server';
}

export async function startRedis(): Promise<PrivateRedis> {
  const bin = redisBin();
  if (!bin) throw new Error('no redis-server');
  const dir = mkdtempSync(path.join(tmpdir(), 'islet-redis-'));
  const port = await freePort();
  const child: ChildProcess = spawn(bin, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir], { stdio: ['ignore', 'pipe', 'pipe'] });
  await new Promise<void>((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => reject(new Error(`redis-server did not start: ${output}`)), 30_000);
    child.once('exit', (code) => reject(new Error(`redis-server exited (${code}): ${output}`)));
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (/Ready to accept connections/.test(output)) {
        clearTimeout(timer);
        resolve();
      }
    });
  });
  return {
    port,
    stop() {
      child.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
