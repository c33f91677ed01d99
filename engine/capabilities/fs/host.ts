import { promises as fsp, readFileSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { joinWithinRoot } from '../../node8/paths';
import { OpError } from '../errors';
import { offThread, type NativeOutput } from '../native-call';
import type { Infer } from '../schema';
import type { FILE_OPS, FS_CALLS } from './ops';

type FsPayload = Infer<(typeof FS_CALLS)['fs']>;

/** Files larger than this are read off the server's thread (asynchronously) even by readFileSync. */
const MAIN_THREAD_FILE_BYTES = 1024 * 1024;

/**
 * The host half of the function's own files, read-only: node8's `fs` sees them under `/`, where a
 * path outside them does not exist (ENOENT) and nothing is written; Python's under /function.
 */
export interface FunctionFiles {
  codeDir: string;
  /** Relative POSIX paths of every deployed file. */
  files: ReadonlySet<string>;
  /** Folders that hold them (made on first use). */
  dirs?: Map<string, Set<string>>;
}

function enoent(syscall: string, p: string): OpError {
  return new OpError('ENOENT', `ENOENT: no such file or directory, ${syscall} '${p}'`);
}

/** `/a/../b` → `b`; undefined when the path is not absolute or climbs above `/`. */
function relativeOf(p: string): string | undefined {
  if (!p.startsWith('/') || p.includes('\0')) return undefined;
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

/** node8's native call on the server's thread (a large file is read off it). */
export function fsCall(p: FsPayload, files: FunctionFiles): NativeOutput {
  const shown = p.path;
  const rel = relativeOf(p.path);
  const isFile = rel !== undefined && files.files.has(rel);
  const dirs = folders(files);
  const isDir = rel !== undefined && dirs.has(rel);
  switch (p.op) {
    case 'readFile':
      if (isDir) throw new OpError('EISDIR', `EISDIR: illegal operation on a directory, read`);
      if (!isFile) throw enoent('open', shown);
      if (statSync(path.join(files.codeDir, rel)).size > MAIN_THREAD_FILE_BYTES) throw offThread("a large file is read off the server's thread");
      return { json: {}, bytes: [readFileSync(path.join(files.codeDir, rel))] };
    case 'stat': {
      if (!isFile && !isDir) throw enoent('stat', shown);
      const stat = statSync(path.join(files.codeDir, rel ?? ''));
      return { json: { kind: isFile ? 'file' : 'dir', size: isFile ? stat.size : 4096, mtimeMs: stat.mtimeMs, ino: stat.ino } };
    }
    case 'readdir': {
      if (isFile) throw new OpError('ENOTDIR', `ENOTDIR: not a directory, scandir '${shown}'`);
      if (!isDir) throw enoent('scandir', shown);
      const prefix = rel === '' ? '' : `${rel}/`;
      const entries = [...dirs.get(rel)!].sort().map((name) => [name, dirs.has(`${prefix}${name}`) ? 'dir' : 'file']);
      return { json: { entries } };
    }
  }
}

/** `fsCall` off the server's thread: a file is read asynchronously, the rest answers at once. */
export async function fsCallAsync(p: FsPayload, files: FunctionFiles): Promise<NativeOutput> {
  const rel = p.op === 'readFile' ? relativeOf(p.path) : undefined;
  if (rel !== undefined && files.files.has(rel)) return { json: {}, bytes: [await fsp.readFile(path.join(files.codeDir, rel))] };
  return fsCall(p, files);
}

/** Python's: one of the function's files by the relative path the deploy listed; nothing else. */
export async function readFunctionFile(p: Infer<(typeof FILE_OPS)['file']>, files: FunctionFiles | undefined): Promise<{ payload: string; body: Buffer }> {
  if (!files || !files.files.has(p.path)) throw new OpError('ERR_NO_FILE', `no file ${JSON.stringify(p.path)} in the function`);
  return { payload: '', body: await fsp.readFile(path.join(files.codeDir, p.path)) };
}
