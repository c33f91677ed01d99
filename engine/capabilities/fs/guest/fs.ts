// node8's `fs` and `fs/promises`: a read-only view of the function's own deployed files, under `/`
// (the function's folder; relative paths start there too). Packages that read their own data
// files work; writes fail with EROFS, and nothing outside the function's folder exists.
import { nativeSync } from '../../guest/native';
import { utf8Decoder } from '../../../sandbox/guest/utf8';

declare const require: (id: string) => unknown;
type BufferLike = Uint8Array & { toString(encoding?: string): string };
const { Buffer } = require('buffer') as { Buffer: { from(b: Uint8Array): BufferLike } };

type PathLike = string | URL | Uint8Array;
type Callback<T> = (err: Error | null, value?: T) => void;

function pathOf(path: PathLike): string {
  let text: string;
  if (typeof path === 'string') text = path;
  else if (path instanceof Uint8Array) text = utf8Decoder.decode(path);
  else if (typeof (path as URL)?.href === 'string') {
    if ((path as URL).protocol !== 'file:') throw Object.assign(new TypeError('The URL must be of scheme file'), { code: 'ERR_INVALID_URL_SCHEME' });
    text = decodeURIComponent((path as URL).pathname);
  } else throw Object.assign(new TypeError('The "path" argument must be of type string or an instance of Buffer or URL'), { code: 'ERR_INVALID_ARG_TYPE' });
  return text.startsWith('/') ? text : `/${text.replace(/^\.\//, '')}`;
}

function encodingOf(options: unknown): string | undefined {
  if (typeof options === 'string') return options;
  if (typeof options === 'object' && options !== null && typeof (options as { encoding?: unknown }).encoding === 'string') return (options as { encoding: string }).encoding;
  return undefined;
}

function erofs(syscall: string, path?: PathLike): Error {
  const where = path === undefined ? '' : ` '${pathOf(path)}'`;
  return Object.assign(new Error(`EROFS: read-only file system, ${syscall}${where}`), { code: 'EROFS', errno: -30, syscall, ...(path === undefined ? {} : { path: pathOf(path) }) });
}

function withPath<T>(syscall: string, path: PathLike, work: () => T): T {
  try {
    return work();
  } catch (err) {
    throw Object.assign(err as Error, { syscall, path: pathOf(path), errno: (err as { code?: string }).code === 'ENOENT' ? -2 : -1 });
  }
}

/** What Stats and Dirent both answer: a function's files are only regular files and folders. */
class EntryKind {
  constructor(private readonly kind: string) {}
  isFile(): boolean {
    return this.kind === 'file';
  }
  isDirectory(): boolean {
    return this.kind === 'dir';
  }
  isSymbolicLink(): boolean {
    return false;
  }
  isBlockDevice(): boolean {
    return false;
  }
  isCharacterDevice(): boolean {
    return false;
  }
  isFIFO(): boolean {
    return false;
  }
  isSocket(): boolean {
    return false;
  }
}

class Stats extends EntryKind {
  readonly dev = 1;
  readonly mode: number;
  readonly nlink = 1;
  readonly uid = 1000;
  readonly gid = 1000;
  readonly rdev = 0;
  readonly blksize = 4096;
  readonly blocks: number;
  readonly atime: Date;
  readonly mtime: Date;
  readonly ctime: Date;
  readonly birthtime: Date;
  readonly atimeMs: number;
  readonly mtimeMs: number;
  readonly ctimeMs: number;
  readonly birthtimeMs: number;
  constructor(
    kind: string,
    readonly size: number,
    mtimeMs: number,
    readonly ino: number,
  ) {
    super(kind);
    this.mode = kind === 'file' ? 0o100444 : 0o40555;
    this.blocks = Math.ceil(size / 512);
    this.atimeMs = this.mtimeMs = this.ctimeMs = this.birthtimeMs = mtimeMs;
    this.atime = this.mtime = this.ctime = this.birthtime = new Date(mtimeMs);
  }
}

class Dirent extends EntryKind {
  constructor(
    readonly name: string,
    kind: string,
    readonly parentPath: string,
  ) {
    super(kind);
  }
  get path(): string {
    return this.parentPath;
  }
}

function readFileSync(path: PathLike | number, options?: unknown): BufferLike | string {
  if (typeof path === 'number') throw Object.assign(new Error('EBADF: bad file descriptor, read'), { code: 'EBADF' });
  const bytes = withPath('open', path, () => nativeSync('fs', { op: 'readFile', path: pathOf(path) }).bytes[0] ?? new Uint8Array(0));
  const buffer = Buffer.from(bytes);
  const encoding = encodingOf(options);
  return encoding ? buffer.toString(encoding) : buffer;
}

function statSync(path: PathLike, options?: { throwIfNoEntry?: boolean }): Stats | undefined {
  try {
    const s = withPath('stat', path, () => nativeSync('fs', { op: 'stat', path: pathOf(path) }).json as { kind: string; size: number; mtimeMs: number; ino: number });
    return new Stats(s.kind, s.size, s.mtimeMs, s.ino);
  } catch (err) {
    if (options?.throwIfNoEntry === false && (err as { code?: string }).code === 'ENOENT') return undefined;
    throw err;
  }
}

function readdirSync(path: PathLike, options?: unknown): (string | Dirent)[] {
  const dir = pathOf(path);
  const { entries } = withPath('scandir', path, () => nativeSync('fs', { op: 'readdir', path: dir }).json as { entries: [string, string][] });
  if (typeof options === 'object' && options !== null && (options as { withFileTypes?: boolean }).withFileTypes) return entries.map(([name, kind]) => new Dirent(name, kind, dir));
  return entries.map(([name]) => name);
}

function existsSync(path: PathLike): boolean {
  try {
    return statSync(path) !== undefined;
  } catch {
    return false;
  }
}

function accessSync(path: PathLike, mode = 0): void {
  statSync(path);
  if (mode & 2) throw erofs('access', path);
}

function realpathSync(path: PathLike): string {
  statSync(path);
  const parts: string[] = [];
  for (const part of pathOf(path).split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') parts.pop();
    else parts.push(part);
  }
  return `/${parts.join('/')}`;
}

const sync: Record<string, (...args: never[]) => unknown> = {
  readFileSync: readFileSync as never,
  statSync: statSync as never,
  lstatSync: statSync as never,
  readdirSync: readdirSync as never,
  existsSync: existsSync as never,
  accessSync: accessSync as never,
  realpathSync: Object.assign(realpathSync, { native: realpathSync }) as never,
};

const WRITES = [
  'writeFile',
  'appendFile',
  'mkdir',
  'mkdtemp',
  'rm',
  'rmdir',
  'unlink',
  'rename',
  'copyFile',
  'cp',
  'symlink',
  'link',
  'chmod',
  'chown',
  'lchown',
  'utimes',
  'lutimes',
  'truncate',
  'open',
  'opendir',
];

const fs: Record<string, unknown> = {};
const promises: Record<string, unknown> = {};

for (const [name, fn] of Object.entries(sync)) {
  fs[name] = fn;
  const base = name.replace(/Sync$/, '');
  if (base === 'exists') {
    fs.exists = (path: PathLike, callback: (exists: boolean) => void) => queueMicrotask(() => callback(existsSync(path)));
    continue;
  }
  fs[base] = (...args: unknown[]) => {
    const callback = args.pop() as Callback<unknown>;
    if (typeof callback !== 'function') throw Object.assign(new TypeError('The "cb" argument must be of type function'), { code: 'ERR_INVALID_ARG_TYPE' });
    let result: unknown;
    try {
      result = (fn as (...a: unknown[]) => unknown)(...args);
    } catch (err) {
      queueMicrotask(() => callback(err as Error));
      return;
    }
    queueMicrotask(() => callback(null, result));
  };
  promises[base] = async (...args: unknown[]) => (fn as (...a: unknown[]) => unknown)(...args);
}

for (const name of WRITES) {
  fs[`${name}Sync`] = (path?: PathLike) => {
    throw erofs(name, name === 'open' || name === 'opendir' ? undefined : path);
  };
  fs[name] = (...args: unknown[]) => {
    const callback = args[args.length - 1];
    const err = erofs(name, args[0] as PathLike);
    if (typeof callback === 'function') queueMicrotask(() => (callback as Callback<never>)(err));
    else throw err;
  };
  promises[name] = async (path?: PathLike) => {
    throw erofs(name, path);
  };
}
// Reading a file through open() would need descriptors; reads go through readFile.
fs.openSync = (path: PathLike, flags: unknown = 'r') => {
  const f = String(flags);
  if (/[wa+]/.test(f)) throw erofs('open', path);
  throw Object.assign(new Error(`file descriptors are not available in islet functions: use fs.readFileSync('${pathOf(path)}')`), { code: 'ERR_METHOD_NOT_IMPLEMENTED' });
};

fs.createReadStream = (path: PathLike, options?: { encoding?: string; start?: number; end?: number }) => {
  const { Readable } = require('stream') as { Readable: { from(items: unknown[], options?: object): unknown } };
  const data = readFileSync(path) as BufferLike;
  const slice = data.subarray(options?.start ?? 0, options?.end === undefined ? undefined : options.end + 1);
  return Readable.from([Buffer.from(slice)], { objectMode: false });
};
fs.createWriteStream = (path: PathLike) => {
  throw erofs('open', path);
};
fs.watch =
  fs.watchFile =
  fs.unwatchFile =
    () => {
      throw Object.assign(new Error('fs.watch is not available in islet functions'), { code: 'ERR_METHOD_NOT_IMPLEMENTED' });
    };
fs.Stats = Stats;
fs.Dirent = Dirent;
fs.constants = { F_OK: 0, R_OK: 4, W_OK: 2, X_OK: 1, O_RDONLY: 0, O_WRONLY: 1, O_RDWR: 2, S_IFMT: 0o170000, S_IFREG: 0o100000, S_IFDIR: 0o40000 };
Object.assign(fs, fs.constants as object);
fs.promises = promises;
promises.constants = fs.constants;

export default fs;
export { promises };
