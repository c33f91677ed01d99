import { readdirSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { createGzip } from 'node:zlib';
import { pipeline } from 'node:stream/promises';
import * as tar from 'tar';

export interface PackOptions {
  /**
   * Leave out what a Python interpreter in WebAssembly cannot use: compiled extension modules
   * (`*.so`, `*.pyd`, `*.dylib`) and bytecode caches (`__pycache__`, `*.pyc`).
   */
  python?: boolean;
  /** Whether a file or folder is packed (beyond the rules above); what it leaves out is counted in `leftOut`. */
  keep?: (rel: string, isDir: boolean) => boolean;
  leftOut?: { files: number; bytes: number };
}

/**
 * Packs a function folder as tar.gz: every file, node_modules and pip-installed packages
 * included; `.git` and the symlinks npm puts in node_modules/.bin left out. The tar is made while
 * the files are read and compressed at level 1 in Node's thread pool as it comes: for a 32 MB
 * folder of 873 files (babel with its locale data) this took 0.5-0.7 s instead of 1.3-1.9 s, for a
 * bundle 13% larger (10.6 MB instead of 9.4), which a deploy uploads in a fraction of the time saved.
 */
export async function packFolder(dir: string, options: PackOptions = {}): Promise<Buffer> {
  const chunks: Buffer[] = [];
  await pipeline(
    tar.c(
      {
        cwd: dir,
        portable: true,
        follow: false,
        filter: (entryPath, stat) => {
          const p = entryPath.replace(/^\.\//, '');
          if (p === '.git' || p.startsWith('.git/')) return false;
          if ('isSymbolicLink' in stat && stat.isSymbolicLink() && /(^|\/)node_modules\/\.bin\//.test(p)) return false;
          if (options.python && (/(^|\/)__pycache__(\/|$)/.test(p) || /\.(so|pyd|dylib|pyc)$/.test(p))) return false;
          if (options.keep && p !== '.') {
            const isDir = 'isDirectory' in stat && stat.isDirectory();
            if (options.keep(p, isDir)) return true;
            if (options.leftOut) {
              // A folder left out is counted by its files.
              const counted = isDir ? countFiles(path.join(dir, p)) : { files: 1, bytes: stat.size };
              options.leftOut.files += counted.files;
              options.leftOut.bytes += counted.bytes;
            }
            return false;
          }
          return true;
        },
      },
      ['.'],
    ),
    createGzip({ level: 1 }),
    async (source: AsyncIterable<Buffer>) => {
      for await (const chunk of source) chunks.push(chunk);
    },
  );
  return Buffer.concat(chunks);
}

/** Files (regular ones, symlinks not followed) under a folder and their bytes. */
function countFiles(dir: string): { files: number; bytes: number } {
  const total = { files: 0, bytes: 0 };
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      const inner = countFiles(full);
      total.files += inner.files;
      total.bytes += inner.bytes;
    } else if (entry.isFile()) {
      total.files += 1;
      total.bytes += statSync(full).size;
    }
  }
  return total;
}
