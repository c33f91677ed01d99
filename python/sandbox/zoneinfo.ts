/**
 * The IANA time-zone database as a read-only /usr/share/zoneinfo, where zoneinfo, dateutil and pytz
 * look for it. The host lists the files (names and sizes) once per interpreter; each file's bytes
 * are read from the host the first time something reads it, so an interpreter that never touches a
 * time zone holds only the names (about 600 file nodes).
 */
export const ZONEINFO_ROOT = '/usr/share/zoneinfo';

/** The part of Emscripten's FS this needs. */
export interface ZoneFs {
  mkdirTree(path: string): void;
  create(path: string, mode: number): { usedBytes: number; contents: unknown };
  chmod(path: string, mode: number): void;
}

/** Reads one file of the database, or lists `[name, size]` of all of them when `key` is empty. */
export type ZoneReader = (key: string) => { text: string; bytes: Uint8Array | undefined } | undefined;

export function mountZoneinfo(fs: ZoneFs, read: ZoneReader): void {
  const listing = read('');
  if (!listing) return;
  const files = JSON.parse(listing.text) as [string, number][];
  const dirs = new Set<string>([ZONEINFO_ROOT]);
  fs.mkdirTree(ZONEINFO_ROOT);
  for (const [key, size] of files) {
    const full = `${ZONEINFO_ROOT}/${key}`;
    const dir = full.slice(0, full.lastIndexOf('/'));
    if (!dirs.has(dir)) {
      fs.mkdirTree(dir);
      dirs.add(dir);
    }
    // A regular file, r--r--r--. Emscripten's memory file system reads `contents` up to
    // `usedBytes`: the contents arrive on first read.
    const node = fs.create(full, 0o100444);
    node.usedBytes = size;
    let bytes: Uint8Array | undefined;
    Object.defineProperty(node, 'contents', {
      get: () => (bytes ??= read(key)?.bytes ?? new Uint8Array(size)),
      set: () => {
        throw new Error(`${full} is read-only`);
      },
    });
  }
  for (const dir of dirs) fs.chmod(dir, 0o40555);
}
