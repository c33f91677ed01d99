import { accessSync, chmodSync, constants, mkdtempSync, rmSync, statfsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';

/**
 * The machine's own temporary folder, before the tests' choice below (for caches kept between
 * runs), handed on to the processes tests start, which see the chosen TMPDIR.
 */
process.env.ISLET_TEST_DISK_TMP ??= tmpdir();
export const DISK_TMP = process.env.ISLET_TEST_DISK_TMP;

/** A RAM-backed folder is used only with this much free room (Docker's default /dev/shm is 64 MB). */
const MIN_FREE_BYTES = 4 * 1024 ** 3;

/**
 * Tests write their data directories, function folders and uploads (everything under
 * `os.tmpdir()`, in this process and the servers and CLIs it starts) to /dev/shm when it is a
 * writable folder with room, unless TMPDIR is set: the file store fsyncs every file of a bundle
 * before it publishes a deploy, which is what a deploy costs with node_modules in it (the node8
 * compatibility suite's 54 deploys spent 56 s in `engine.deploy` on disk, 29 s on /dev/shm, at a
 * load of 3 to 4). What the tests check of durability is against kill -9, which a RAM folder keeps
 * as a disk does.
 */
function scratchBase(): string {
  if (process.env.TMPDIR) return process.env.TMPDIR;
  try {
    accessSync('/dev/shm', constants.W_OK);
    const fs = statfsSync('/dev/shm');
    if (fs.bavail * fs.bsize >= MIN_FREE_BYTES) return '/dev/shm';
  } catch {
    // No /dev/shm (not Linux): the machine's temporary folder.
  }
  return tmpdir();
}

/**
 * Each test process writes in a folder of its own, removed when it exits (the processes it starts
 * inherit it as their TMPDIR). Left in one shared folder, runs piled up thousands of entries there
 * (8,000 after a few runs, 11 GB), and every deploy's esbuild reads the entries of each folder
 * above the function's: 4% of the suite's CPU went to listing that one folder (perf, whole suite).
 */
function chooseScratch(): void {
  if (process.env.ISLET_TEST_SCRATCH) return;
  const dir = mkdtempSync(path.join(scratchBase(), 'islet-tests-'));
  // Open as /tmp is: the PostgreSQL and MariaDB servers tests start run as users of their own.
  chmodSync(dir, 0o1777);
  process.env.TMPDIR = dir;
  process.env.ISLET_TEST_SCRATCH = dir;
  process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
}

chooseScratch();
