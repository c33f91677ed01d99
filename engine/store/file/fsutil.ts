import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';

/** fsync a file or a directory by path. */
export async function fsyncPath(p: string): Promise<void> {
  const handle = await fsp.open(p, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Write a file so that readers see either the old or the new content, never a mix, even after a crash. */
export async function writeFileAtomic(file: string, data: string | Uint8Array, mode = 0o644): Promise<void> {
  const dir = path.dirname(file);
  const tmp = path.join(dir, `.tmp-${path.basename(file)}-${randomBytes(6).toString('hex')}`);
  const handle = await fsp.open(tmp, 'w', mode);
  try {
    await handle.writeFile(data);
    await handle.sync();
  } finally {
    await handle.close();
  }
  await fsp.rename(tmp, file);
  await fsyncPath(dir);
}

/** fsync every file and directory below `dir` (and `dir` itself), so a later rename publishes durable content. */
export async function fsyncTree(dir: string): Promise<void> {
  const entries = await fsp.readdir(dir, { withFileTypes: true });
  for (const entry of entries) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) await fsyncTree(p);
    else if (entry.isFile()) await fsyncPath(p);
  }
  await fsyncPath(dir);
}

export async function readJsonFile<T>(file: string): Promise<T | undefined> {
  try {
    return JSON.parse(await fsp.readFile(file, 'utf8')) as T;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

export async function listDirs(dir: string): Promise<string[]> {
  try {
    const entries = await fsp.readdir(dir, { withFileTypes: true });
    return entries.filter((e) => e.isDirectory()).map((e) => e.name);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
}
