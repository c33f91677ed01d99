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
const CLI_LIMIT_MS = 600_000;

export interface CliOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** Standard input (`--data @-`). */
  stdin?: Buffer;
}

/**
 * Runs a command of the CLI in this process, as bin/islet runs it (cli/index.ts `run`), with its own
 * env, folder, stdout, stderr and exit code: a process per command cost the suite about 0.4 s of CPU
 * each, over some 200 commands. What only the executable shows (its exit status, a terminal, a
 * command that runs until stopped) goes through `isletProcess`.
 */
export async function islet(args: string[], options: CliOptions = {}): Promise<CliResult> {
  const { run } = await import('../../cli/index');
  const stdout: Buffer[] = [];
  let stderr = '';
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<number>((resolve) => {
    timer = setTimeout(() => {
      stderr += `\n(the test gave up on \`islet ${args.join(' ')}\` after ${CLI_LIMIT_MS / 1000} s)`;
      resolve(1);
    }, CLI_LIMIT_MS);
  });
  const code = await Promise.race([
    run(args, {
      env: options.env ?? process.env,
      cwd: options.cwd ?? process.cwd(),
      stdout: (chunk) => stdout.push(Buffer.from(chunk)),
      stderr: (text) => (stderr += text),
      stderrIsTTY: false,
      stdinIsTTY: false,
      stdin: () => options.stdin ?? Buffer.alloc(0),
    }),
    limit,
  ]).finally(() => clearTimeout(timer));
  return { code, stdout: Buffer.concat(stdout).toString('utf8'), stderr };
}

/** Runs the real `islet` executable. */
export function isletProcess(args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): Promise<CliResult> {
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
