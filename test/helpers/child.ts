import { spawn, type ChildProcess } from 'node:child_process';
import * as path from 'node:path';
import type { ChildConfig } from './child-server';

export interface ChildServer {
  url: string;
  accountId: string;
  apiKey: string;
  /** The server's data directory. */
  dataDir: string;
  process: ChildProcess;
  /** Errors of the config's `refused` deploys, by name. */
  refused: Record<string, { code: string; message: string }>;
  /** The accounts besides the first (`otherAccounts` of the config). */
  others: { accountId: string; apiKey: string }[];
  /** Calls a function of the first account, or of `account` (an index into `others` plus one). */
  call(name: string, init?: { method?: string; body?: string; key?: string | null; account?: number }): Promise<Response>;
  stop(): void;
}

/** Starts a test server in a child process (with --no-node-snapshot) and waits for it to be ready. */
export function startChildServer(config: ChildConfig): Promise<ChildServer> {
  const child = spawn(process.execPath, ['--no-node-snapshot', ...(process.env.ISLET_CHILD_PROF ? ['--cpu-prof', '--cpu-prof-dir=/tmp/prof'] : []), path.join(__dirname, 'child-server.js')], {
    env: { ...process.env, ISLET_TEST_CONFIG: JSON.stringify(config) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    let out = '';
    child.once('exit', (code) => reject(new Error(`test server exited with ${code}`)));
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const line = out.split('\n')[0];
      if (!out.includes('\n') || !line) return;
      const info = JSON.parse(line) as {
        url: string;
        accountId: string;
        apiKey: string;
        dataDir: string;
        refused: Record<string, { code: string; message: string }>;
        others: { accountId: string; apiKey: string }[];
      };
      child.removeAllListeners('exit');
      resolve({
        ...info,
        process: child,
        call(name, init = {}) {
          const headers: Record<string, string> = {};
          const account = init.account ? info.others[init.account - 1]! : info;
          const key = init.key === undefined ? account.apiKey : init.key;
          if (key !== null) headers['X-Service-Api-Key'] = key;
          return fetch(`${info.url}/v2/run/${account.accountId}/${name}`, { method: init.method ?? 'GET', headers, body: init.body });
        },
        stop() {
          child.kill('SIGKILL');
        },
      });
    });
  });
}
