import { execFileSync, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import type { Test } from 'tap';
import { freePort } from './free-port';

/**
 * A private PostgreSQL server for a test file: initdb into a temp directory, started on a free
 * port, stopped when the file ends. PostgreSQL refuses to run as root, so under root it runs as the
 * `postgres` OS user. Durability settings are off: these tests are about islet, not the disk.
 */
export interface PrivatePostgres {
  /** postgres://islet@127.0.0.1:<port>/islet */
  url: string;
  port: number;
  /** Stops the server (connections are cut); `start` brings it back on the same port and data. */
  stop(): void;
  start(): void;
  /** A fresh database on the same server (each store test gets its own). */
  createDatabase(name: string): string;
  /** The server's processes now (the postmaster and its children), for CPU readings. */
  pids(): number[];
  destroy(): void;
}

/** The folder of initdb and pg_ctl: Debian's versioned folder, else the PATH. */
export function postgresBin(): string | undefined {
  const debian = '/usr/lib/postgresql';
  if (existsSync(debian)) {
    const versions = readdirSync(debian)
      .filter((v) => existsSync(path.join(debian, v, 'bin', 'initdb')))
      .sort((a, b) => Number(b) - Number(a));
    if (versions[0]) return path.join(debian, versions[0], 'bin');
  }
  const found = spawnSync('sh', ['-c', 'command -v initdb'], { encoding: 'utf8' }).stdout.trim();
  return found ? path.dirname(found) : undefined;
}

/** Why PostgreSQL tests cannot run here, if they cannot (CI must have the binaries: .ci/run installs them). */
export function postgresMissing(): string | undefined {
  if (postgresBin()) return undefined;
  const message = 'PostgreSQL binaries (initdb, pg_ctl) are not installed: apt-get install postgresql';
  if (process.env.CI) throw new Error(`${message} (CI must run the PostgreSQL tests)`);
  return message;
}

export async function startPostgres(): Promise<PrivatePostgres> {
  const bin = postgresBin();
  if (!bin) throw new Error('no PostgreSQL binaries');
  const dir = mkdtempSync(path.join(tmpdir(), 'islet-pg-'));
  const asRoot = process.getuid?.() === 0;
  const run = (command: string, args: string[]) => {
    const file = path.join(bin, command);
    const [cmd, argv] = asRoot ? ['runuser', ['-u', 'postgres', '--', file, ...args]] : [file, args];
    execFileSync(cmd, argv, { stdio: ['ignore', 'pipe', 'pipe'], cwd: dir });
  };
  if (asRoot) {
    const postgres = Number(execFileSync('id', ['-u', 'postgres']).toString().trim());
    const group = Number(execFileSync('id', ['-g', 'postgres']).toString().trim());
    chownSync(dir, postgres, group);
  }
  const data = path.join(dir, 'data');
  run('initdb', ['-D', data, '-U', 'islet', '-A', 'trust', '--no-sync', '-E', 'UTF8', '--locale', 'C']);
  const port = await freePort();
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200`;
  const start = () => run('pg_ctl', ['-D', data, '-o', options, '-l', path.join(dir, 'log'), '-w', '-t', '60', 'start']);
  const stop = () => run('pg_ctl', ['-D', data, '-m', 'fast', '-w', 'stop']);
  start();
  const base = `postgres://islet@127.0.0.1:${port}`;
  const psql = (sql: string) => execFileSync(path.join(bin, 'psql'), ['-q', '-d', `${base}/postgres`, '-c', sql], { stdio: ['ignore', 'pipe', 'pipe'] });
  psql('CREATE DATABASE islet');
  return {
    url: `${base}/islet`,
    port,
    stop,
    start,
    pids() {
      const main = Number(readFileSync(path.join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
      const children = readFileSync(`/proc/${main}/task/${main}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
      return [main, ...children];
    },
    createDatabase(name) {
      psql(`CREATE DATABASE ${name}`);
      return `${base}/${name}`;
    },
    destroy() {
      try {
        run('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
      } catch {
        // already stopped
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Runs `tests` against a private PostgreSQL started for this test file (`pg()` once it is up), or
 * skips the file with a message when the binaries are missing (never under CI).
 */
export function withPostgres(t: Test, tests: (pg: () => PrivatePostgres) => void): void {
  const missing = postgresMissing();
  if (missing) {
    t.plan(0, `skip: ${missing}`);
    return;
  }
  let server: PrivatePostgres | undefined;
  t.before(async () => {
    server = await startPostgres();
  });
  t.teardown(() => server?.destroy());
  tests(() => server!);
}
