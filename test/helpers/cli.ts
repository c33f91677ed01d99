import { execFile } from 'node:child_process';
import * as path from 'node:path';
import { ROOT } from './server';

export const ISLET_BIN = path.join(ROOT, 'bin', 'islet');

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** A command of the CLI is stopped after this long: a limit that catches hangs, not a timing. */
const CLI_LIMIT_MS = 180_000;

/** Runs the real `islet` executable. */
export function islet(args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(ISLET_BIN, args, { cwd: options.cwd, env: options.env, timeout: CLI_LIMIT_MS }, (error, stdout, stderr) => {
      const code = error ? (typeof (error as NodeJS.ErrnoException).code === 'number' ? Number((error as NodeJS.ErrnoException).code) : 1) : 0;
      const killed = error && (error as { killed?: boolean }).killed ? `\n(the test stopped \`islet ${args.join(' ')}\` after ${CLI_LIMIT_MS / 1000} s)` : '';
      resolve({ code, stdout: String(stdout), stderr: String(stderr) + killed });
    });
  });
}
