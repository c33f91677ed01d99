import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { freePort } from './free-port';

/**
 * A private MariaDB server for a test file: mariadb-install-db into a temporary folder, then
 * mariadbd on a free loopback port with a user and a database made by its init file. Run as root
 * it runs as root (`--user=root`). Durability and the caches are turned down: these tests are about
 * islet's sockets, not the disk.
 */
export interface PrivateMariaDb {
  port: number;
  user: string;
  password: string;
  database: string;
  /** The server's process (for its CPU time). */
  pid: number;
  stop(): void;
}

const USER = 'islet';
const PASSWORD = 'islet-test-password';
const DATABASE = 'islet';

/** Where a binary of Debian's mariadb-server is: /usr/sbin or /usr/bin, else the PATH. */
function binary(name: string): string | undefined {
  const found = spawnSync('sh', ['-c', `command -v ${name} || ls /usr/sbin/${name} /usr/bin/${name} 2>/dev/null`], { encoding: 'utf8' })
    .stdout.trim()
    .split('\n')[0];
  return found || undefined;
}

/** Why the MariaDB tests cannot run here, if they cannot (CI must have it: .ci/run installs mariadb-server). */
export function mariadbMissing(): string | undefined {
  return binary('mariadbd') && binary('mariadb-install-db') ? undefined : 'MariaDB is not installed: apt-get install mariadb-server';
}

/** The settings of both the install's bootstrap server and the test's: small caches, no durability, no name lookups. */
const LEAN = [
  '--skip-name-resolve',
  '--innodb-buffer-pool-size=16M',
  '--innodb-log-file-size=8M',
  '--innodb-flush-log-at-trx-commit=0',
  '--innodb-doublewrite=0',
  '--skip-log-bin',
  '--performance-schema=OFF',
];

export async function startMariaDb(): Promise<PrivateMariaDb> {
  const installDb = binary('mariadb-install-db');
  const mariadbd = binary('mariadbd');
  if (!installDb || !mariadbd) throw new Error('no MariaDB binaries');
  const dir = mkdtempSync(path.join(tmpdir(), 'islet-mariadb-'));
  const data = path.join(dir, 'data');
  const asRoot = process.getuid?.() === 0 ? ['--user=root'] : [];
  execFileSync(installDb, ['--no-defaults', `--datadir=${data}`, '--auth-root-authentication-method=normal', '--skip-test-db', ...asRoot, ...LEAN], { stdio: ['ignore', 'pipe', 'pipe'] });
  const init = path.join(dir, 'init.sql');
  writeFileSync(init, `CREATE DATABASE IF NOT EXISTS ${DATABASE};\nCREATE USER IF NOT EXISTS '${USER}'@'%' IDENTIFIED BY '${PASSWORD}';\nGRANT ALL ON ${DATABASE}.* TO '${USER}'@'%';\n`);
  const port = await freePort();
  const child: ChildProcess = spawn(
    mariadbd,
    [
      '--no-defaults',
      `--datadir=${data}`,
      `--socket=${path.join(dir, 'mariadb.sock')}`,
      `--pid-file=${path.join(dir, 'mariadb.pid')}`,
      `--port=${port}`,
      '--bind-address=127.0.0.1',
      `--init-file=${init}`,
      ...asRoot,
      ...LEAN,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  await new Promise<void>((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => reject(new Error(`mariadbd did not start: ${output}`)), 60_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`mariadbd exited (${code}): ${output}`));
    });
    // It logs to stderr: "ready for connections" once the init file has run.
    child.stderr!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (/ready for connections/.test(output)) {
        clearTimeout(timer);
        resolve();
      }
    });
  });
  child.stderr!.resume();
  return {
    port,
    user: USER,
    password: PASSWORD,
    database: DATABASE,
    pid: child.pid!,
    stop() {
      child.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
