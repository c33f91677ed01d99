import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { Client } from 'undici';
import { packFolder } from '../../cli/pack';
import { functionFolder } from './functions';
import { ROOT } from './server';

export interface WorkerHealth {
  slot: number;
  pid: number;
  state: string;
  restarts: number;
  catastrophicOutOfMemory?: number;
}

export interface Health {
  status: string;
  worker: { pid: number; slot: number };
  workers: WorkerHealth[];
}

/** `islet serve` with its workers, in a process group of its own (so a test can crash it whole). */
export interface Supervised {
  url: string;
  port: number;
  /** The console's origin (its own port); empty when started without one. */
  consoleUrl: string;
  accountId: string;
  apiKey: string;
  dataDir: string;
  child: ChildProcess;
  /** Everything printed so far. */
  readonly stdout: string;
  readonly stderr: string;
  readonly exited: Promise<number | null>;
  /** Deploys `source` as function.js over the management API. */
  deploy(name: string, source: string, extra?: Record<string, unknown>): Promise<Response>;
  call(name: string, init?: { body?: string; key?: string }): Promise<Response>;
  health(): Promise<Health>;
  /** One call on a fresh connection: the worker that took the connection (by pid) and the answer. */
  callOnFreshConnection(name: string): Promise<{ pid: number; status: number; body: string }>;
  /** kill -9 of the supervisor and its workers together. */
  crash(): void;
}

export function serveArgs(dataDir: string, extra: string[] = []): string[] {
  return ['--no-node-snapshot', path.join(ROOT, 'dist', 'supervisor', 'main.js'), '--port', '0', '--data', dataDir, ...extra];
}

/** The metrics token a supervised server gets unless the test gives its own: /healthz shows the workers only with it. */
const HEALTH_TOKEN = 'supervised-test-token';

/** Starts `islet serve` (on `dataDir` when given: a restart, whose account is not printed again). */
export function startSupervised(extra: string[] = [], env: NodeJS.ProcessEnv = {}, restart?: { dataDir: string; accountId: string; apiKey: string }): Promise<Supervised> {
  const dataDir = restart?.dataDir ?? mkdtempSync(path.join(tmpdir(), 'islet-supervised-'));
  const given = extra.indexOf('--metrics-token');
  const token = given === -1 ? HEALTH_TOKEN : extra[given + 1]!;
  const args = given === -1 ? [...extra, '--metrics-token', token] : extra;
  const operator = { authorization: `Bearer ${token}` };
  const child = spawn(process.execPath, serveArgs(dataDir, args), {
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...env },
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    void exited.then((code) => reject(new Error(`islet serve exited with ${code}: ${stderr}`)));
    const poll = setInterval(() => {
      const m = /listening on (http:\/\/\S+)/.exec(stdout);
      // The line after it says where the console is (or that there is none).
      if (!m || !/^console\b.*\n/m.test(stdout)) return;
      const consoleUrl = /^console on (http:\/\/\S+)\/console\//m.exec(stdout)?.[1] ?? '';
      clearInterval(poll);
      const url = m[1]!;
      const accountId = /account id: (\S+)/.exec(stdout)?.[1] ?? restart?.accountId ?? '';
      const apiKey = /API key:\s+(\S+)/.exec(stdout)?.[1] ?? restart?.apiKey ?? '';
      const headers = { 'X-Service-Api-Key': apiKey };
      resolve({
        url,
        port: Number(new URL(url).port),
        consoleUrl,
        accountId,
        apiKey,
        dataDir,
        child,
        get stdout() {
          return stdout;
        },
        get stderr() {
          return stderr;
        },
        exited,
        async deploy(name, source, extra = {}) {
          const form = new FormData();
          form.set('spec', JSON.stringify({ runtime: 'node8', file: 'function.js', entrypoint: 'handler', env: {}, ...extra }));
          form.set('bundle', new Blob([await packFolder(functionFolder(source))]), 'bundle.tar.gz');
          return fetch(`${url}/v2/accounts/${accountId}/functions/${name}`, { method: 'PUT', headers, body: form });
        },
        call(name, init = {}) {
          return fetch(`${url}/v2/run/${accountId}/${name}`, { method: init.body ? 'POST' : 'GET', headers: { 'X-Service-Api-Key': init.key ?? apiKey }, body: init.body });
        },
        async health() {
          // A connection of its own each time: a kept-alive one may lead to a worker that is gone.
          const res = await fetch(`${url}/healthz`, { headers: { connection: 'close', ...operator } });
          return (await res.json()) as Health;
        },
        async callOnFreshConnection(name) {
          const client = new Client(url, { pipelining: 1 });
          try {
            const health = await client.request({ method: 'GET', path: '/healthz', headers: operator });
            const { worker } = (await health.body.json()) as Health;
            const res = await client.request({ method: 'GET', path: `/v2/run/${accountId}/${name}`, headers });
            return { pid: worker.pid, status: res.statusCode, body: await res.body.text() };
          } finally {
            await client.close();
          }
        },
        crash() {
          try {
            process.kill(-child.pid!, 'SIGKILL');
          } catch {
            // already gone
          }
        },
      });
    }, 20);
  });
}

/** Polls `check` until it holds; false after `ms`. */
export async function eventually(check: () => Promise<boolean> | boolean, ms: number): Promise<boolean> {
  const until = Date.now() + ms;
  for (;;) {
    if (
      await Promise.resolve()
        .then(check)
        .catch(() => false)
    )
      return true;
    if (Date.now() > until) return false;
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Keeps `clients` sequential callers busy until `stop` resolves; counts answers by outcome. */
export async function keepCalling(s: Supervised, name: string, clients: number, stop: Promise<unknown>): Promise<{ ok: number; failed: number; bodies: Set<string>; errors: string[] }> {
  const result = { ok: 0, failed: 0, bodies: new Set<string>(), errors: [] as string[] };
  let done = false;
  void stop.then(() => (done = true));
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (!done) {
        try {
          const res = await s.call(name);
          const body = await res.text();
          if (res.status === 200) {
            result.ok++;
            result.bodies.add(body);
          } else {
            result.failed++;
            result.errors.push(`${res.status} ${body}`);
          }
        } catch (err) {
          result.failed++;
          result.errors.push(String((err as Error).cause ?? err));
        }
      }
    }),
  );
  return result;
}
