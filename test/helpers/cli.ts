import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
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

/**
 * A work folder and the environment for the CLI against `server`: its credentials in ISLET_*, and a
 * home and config folder of the work folder's own (no login file of the machine's).
 */
export function cliWorkspace(server: { url: string; accountId: string; apiKey: string }): { work: string; env: NodeJS.ProcessEnv } {
  const work = mkdtempSync(path.join(tmpdir(), 'islet-cli-'));
  const env = { PATH: process.env.PATH, HOME: work, XDG_CONFIG_HOME: path.join(work, 'config'), ISLET_URL: server.url, ISLET_ACCOUNT: server.accountId, ISLET_API_KEY: server.apiKey };
  return { work, env };
}

/** A new function folder under `work` with `service.yml` and `files`. */
export function serviceFolder(work: string, yml: string, files: Record<string, string>): string {
  const dir = mkdtempSync(path.join(work, 'fn-'));
  writeFileSync(path.join(dir, 'service.yml'), yml);
  for (const [file, text] of Object.entries(files)) writeFileSync(path.join(dir, file), text);
  return dir;
}
