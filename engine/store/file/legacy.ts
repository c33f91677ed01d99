import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import type { FunctionManifest } from '../../manifest';
import { fsyncPath, listDirs, readJsonFile, writeFileAtomic } from './fsutil';

/**
 * Data directories written before versions were numbered kept a `current` file naming the serving
 * version by an opaque id (`versions/<id>/`). At start-up such a function becomes version 1, still
 * serving; the versions kept beside it (never reachable) are dropped. Each step can be repeated, so
 * a crash during the migration is finished at the next start.
 */
export async function migrateLegacy(functionDir: string): Promise<void> {
  const currentFile = path.join(functionDir, 'current');
  const trafficFile = path.join(functionDir, 'traffic.json');
  const versionsDir = path.join(functionDir, 'versions');
  let legacy: string;
  try {
    legacy = (await fsp.readFile(currentFile, 'utf8')).trim();
  } catch {
    return;
  }
  if (!(await readJsonFile(trafficFile))) {
    const from = path.join(versionsDir, legacy);
    const to = path.join(versionsDir, '1');
    const manifest = await readJsonFile<FunctionManifest>(path.join(from, 'manifest.json'));
    if (manifest) {
      await writeFileAtomic(path.join(from, 'manifest.json'), JSON.stringify({ ...manifest, version: 1 }, null, 2) + '\n');
      if (from !== to) {
        await fsp.rm(to, { recursive: true, force: true });
        await fsp.rename(from, to);
        await fsyncPath(versionsDir);
      }
    }
    if (!(await readJsonFile(path.join(to, 'manifest.json')))) return;
    await writeFileAtomic(trafficFile, JSON.stringify({ latest: 1, traffic: [{ version: 1, percent: 100 }] }) + '\n');
  }
  for (const dir of await listDirs(versionsDir)) {
    if (!/^\d+$/.test(dir)) await fsp.rm(path.join(versionsDir, dir), { recursive: true, force: true });
  }
  await fsp.rm(currentFile, { force: true });
}
