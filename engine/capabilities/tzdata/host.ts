import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { OpError } from '../errors';
import type { OpAnswer } from '../host-ops';
import type { Infer } from '../schema';
import type { TZDATA_OPS } from './ops';

/** Where the IANA time-zone database is read from: the system's (Debian's tzdata package). */
export const ZONEINFO_DIR = process.env.TZDIR || '/usr/share/zoneinfo';
const ZONE_KEY = /^[A-Za-z0-9_+-]+(?:\/[A-Za-z0-9_+-]+){0,3}$/;
/** The database's text files that libraries read beside the zones (pytz reads tzdata.zi for its version). */
const ZONE_TEXTS = new Set(['tzdata.zi', 'zone.tab', 'zone1970.tab', 'iso3166.tab', 'leapseconds']);
const zones = new Map<string, Promise<Buffer | undefined>>();
let zoneList: Promise<[string, number][]> | undefined;

/**
 * The host half of tzdata: a file of the system's IANA database by key (`Europe/Paris`, or one of
 * ZONE_TEXTS), read once and kept; an empty key lists `[key, size]` of them all. Only names of that
 * database are read, never a path. The Python sandbox shows them as a read-only
 * /usr/share/zoneinfo whose files load on first read.
 */
export function readZone({ key }: Infer<(typeof TZDATA_OPS)['tzdata']>): Promise<OpAnswer> {
  if (key === '') {
    zoneList ??= listZones(ZONEINFO_DIR, '').then((keys) => keys.sort((a, b) => (a[0] < b[0] ? -1 : 1)));
    return zoneList.then((keys) => ({ payload: JSON.stringify(keys) }));
  }
  if (!(ZONE_KEY.test(key) || ZONE_TEXTS.has(key)) || key.length > 128) return Promise.reject(new OpError('ERR_NO_ZONE', `no time zone named ${JSON.stringify(key)}`));
  let file = zones.get(key);
  if (!file) {
    file = readZoneFile(path.join(ZONEINFO_DIR, key), ZONE_TEXTS.has(key));
    if (zones.size < 4096) zones.set(key, file);
  }
  return file.then((bytes) => {
    if (!bytes) throw new OpError('ERR_NO_ZONE', `no time zone named ${JSON.stringify(key)} in ${ZONEINFO_DIR}`);
    return { payload: '', body: bytes };
  });
}

async function readZoneFile(file: string, text: boolean): Promise<Buffer | undefined> {
  try {
    const bytes = await fsp.readFile(file);
    return bytes.length <= 1024 * 1024 && (text || bytes.subarray(0, 4).toString('latin1') === 'TZif') ? bytes : undefined;
  } catch {
    return undefined;
  }
}

/** `[key, size]` of the zones (TZif files) and ZONE_TEXTS under `root`; `posix/` and `right/` left out. */
async function listZones(root: string, prefix: string): Promise<[string, number][]> {
  let entries;
  try {
    entries = await fsp.readdir(path.join(root, prefix), { withFileTypes: true });
  } catch {
    return [];
  }
  const keys: [string, number][] = [];
  for (const entry of entries) {
    const key = prefix ? `${prefix}/${entry.name}` : entry.name;
    const texts = ZONE_TEXTS.has(key);
    if (!texts && (!ZONE_KEY.test(key) || key === 'localtime' || /^(posix|right)$/.test(key))) continue;
    // Debian links aliases (UTC, US/Eastern…) to their zone: follow links.
    // Benign: a dangling link is no zone.
    const stat = entry.isSymbolicLink() ? await fsp.stat(path.join(root, key)).catch(() => undefined) : entry;
    if (stat?.isDirectory()) keys.push(...(await listZones(root, key)));
    else if (stat?.isFile()) {
      const bytes = await readZoneFile(path.join(root, key), texts);
      if (bytes) keys.push([key, bytes.length]);
    }
  }
  return keys;
}
