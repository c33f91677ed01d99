/**
 * Files in the interpreter's file system whose bytes stay on the host until something reads them:
 * the function's own folder (/function) and the IANA time-zone database (/usr/share/zoneinfo).
 * Each file is a node of Emscripten's memory file system with its size set; that file system reads
 * a file's `contents` up to `usedBytes`, and here `contents` is fetched from the host on first use.
 * A 32 MB folder of 873 files (babel and its locale data) was copied whole into every instance;
 * now an instance holds the files it read.
 */

/** The part of Emscripten's FS this needs. */
export interface LazyFs {
  ErrnoError: new (errno: number) => Error;
  mkdirTree(path: string): void;
  create(path: string, mode: number): { usedBytes: number; contents: unknown };
  chmod(path: string, mode: number): void;
}

const REGULAR_FILE = 0o100000;
/** Emscripten's EIO: Python sees an OSError when the host cannot give a file's bytes. */
const EIO = 29;

/**
 * Makes `root/<name>` for each `[name, size]`, reading a file's bytes with `read(name)` the first
 * time they are needed. Read-only trees refuse writes (mode r--, directories r-x); others take them.
 */
export function mountLazyFiles(fs: LazyFs, root: string, files: [string, number][], read: (name: string) => Uint8Array | undefined, readOnly: boolean): void {
  const dirs = new Set<string>([root]);
  fs.mkdirTree(root);
  for (const [name, size] of files) {
    const full = `${root}/${name}`;
    const dir = full.slice(0, full.lastIndexOf('/'));
    if (!dirs.has(dir)) {
      fs.mkdirTree(dir);
      dirs.add(dir);
    }
    const node = fs.create(full, REGULAR_FILE | (readOnly ? 0o444 : 0o644));
    node.usedBytes = size;
    let bytes: Uint8Array | null | undefined;
    Object.defineProperty(node, 'contents', {
      get: () => {
        if (bytes !== undefined) return bytes;
        const loaded = read(name);
        if (!loaded) throw new fs.ErrnoError(EIO);
        return (bytes = loaded);
      },
      set: (value: Uint8Array | null) => {
        if (readOnly) throw new Error(`${full} is read-only`);
        bytes = value;
      },
    });
  }
  if (readOnly) for (const dir of dirs) fs.chmod(dir, 0o40555);
}
