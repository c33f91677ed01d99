import { execFile } from 'node:child_process';
import * as path from 'node:path';
import { ROOT } from './server';

export const ISLET_BIN = path.join(ROOT, 'bin', 'islet');

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the real `islet` executable. */
export function islet(args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(ISLET_BIN, args, { cwd: options.cwd, env: options.env, timeout: 60_000 }, (error, stdout, stderr) => {
      const code = error ? (typeof (error as NodeJS.ErrnoException).code === 'number' ? Number((error as NodeJS.ErrnoException).code) : 1) : 0;
      resolve({ code, stdout: String(stdout), stderr: String(stderr) });
    });
  });
}
