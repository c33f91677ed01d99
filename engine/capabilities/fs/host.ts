import { promises as fsp, readFileSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { NATIVE_OFF_THREAD } from '../../sandbox/protocol';
import { joinWithinRoot } from '../../node8/paths';
import { NativeError, type NativeInput, type NativeOutput } from '../../node8/host/native';

/** Files larger than this are read off the server's thread (asynchronously) even by readFileSync. */
const MAIN_THREAD_FILE_BYTES = 1024 * 1024;

/**
 * The host half of node8's read-only `fs`: the function's own deployed files and nothing else. The
 * sandbox sees them under `/`; a path outside them does not exist (ENOENT), and nothing is written.
 */
export interface FunctionFiles {
  codeDir: string;
  /** Relative POSIX paths of every deployed file. */
  files: ReadonlySet<string>;
  /** Folders that hold them (made on first use). */
  dirs?: Map<string, Set<string>>;
}

function enoent(syscall: string, p: string): NativeError {
  return new NativeError(`ENOENT: no such file or directory, ${syscall} '${p}'`, 'ENOENT');
}

/** `/a/../b` → `b`; undefined when the path is not absolute or climbs above `/`. */
function relativeOf(p: unknown): string | undefined {
  if (typeof p !== 'string' || !p.startsWith('/') || p.includes('\0')) return undefined;
  return joinWithinRoot('', p);
}

/** Every folder and its entries, from the file list ('' is the root). */
function folders(files: FunctionFiles): Map<string, Set<string>> {
  if (files.dirs) return files.dirs;
  const dirs = new Map<string, Set<string>>([['', new Set()]]);
  for (const file of files.files) {
    const parts = file.split('/');
    for (let i = 0; i < parts.length; i++) {
      const dir = parts.slice(0, i).join('/');
      let entries = dirs.get(dir);
      if (!entries) dirs.set(dir, (entries = new Set()));
      entries.add(parts[i]!);
    }
  }
  files.dirs = dirs;
  return dirs;
}

export function fsCall({ payload: p }: NativeInput, files: FunctionFiles): NativeOutput {
  const shown = String(p.path);
  const rel = relativeOf(p.path);
  const isFile = rel !== undefined && files.files.has(rel);
  const dirs = folders(files);
  const isDir = rel !== undefined && dirs.has(rel);
  switch (p.op) {
    case 'readFile':
      if (isDir) throw new NativeError(`EISDIR: illegal operation on a directory, read`, 'EISDIR');
      if (!isFile) throw enoent('open', shown);
      if (statSync(path.join(files.codeDir, rel)).size > MAIN_THREAD_FILE_BYTES) throw new NativeError('a large file is read off the server\'s thread', NATIVE_OFF_THREAD);
      return { json: {}, bytes: [readFileSync(path.join(files.codeDir, rel))] };
    case 'stat': {
      if (!isFile && !isDir) throw enoent('stat', shown);
      const stat = statSync(path.join(files.codeDir, rel ?? ''));
      return { json: { kind: isFile ? 'file' : 'dir', size: isFile ? stat.size : 4096, mtimeMs: stat.mtimeMs, ino: stat.ino } };
    }
    case 'readdir': {
      if (isFile) throw new NativeError(`ENOTDIR: not a directory, scandir '${shown}'`, 'ENOTDIR');
      if (!isDir) throw enoent('scandir', shown);
      const prefix = rel === '' ? '' : `${rel}/`;
      const entries = [...dirs.get(rel)!].sort().map((name) => [name, dirs.has(`${prefix}${name}`) ? 'dir' : 'file']);
      return { json: { entries } };
    }
    default:
      throw new NativeError(`unknown fs operation ${String(p.op)}`);
  }
}

/** `fsCall` off the server's thread: a file is read asynchronously, the rest answers at once. */
export async function fsCallAsync(input: NativeInput, files: FunctionFiles): Promise<NativeOutput> {
  const rel = input.payload.op === 'readFile' ? relativeOf(input.payload.path) : undefined;
  if (rel !== undefined && files.files.has(rel)) return { json: {}, bytes: [await fsp.readFile(path.join(files.codeDir, rel))] };
  return fsCall(input, files);
}
