import { createReadStream, promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import * as tar from 'tar';
import { ServiceError } from './errors';
import { normalizeRelative } from './manifest';

/** Where deployed code comes from: a folder on this machine, or a tar.gz bundle (bytes or a file). */
export type BundleSource = { dir: string } | { tarball: Uint8Array } | { tarballFile: string };

export interface BundleLimits {
  /** Bytes the unpacked code may take (guards against archive bombs). */
  maxUnpackedBytes: number;
  maxFiles: number;
}

export const DEFAULT_BUNDLE_LIMITS: BundleLimits = { maxUnpackedBytes: 250 * 1024 * 1024, maxFiles: 20_000 };

function bad(message: string): ServiceError {
  return new ServiceError('ERR_BAD_REQUEST', message);
}

/** npm puts symlinks to executables in node_modules/.bin; they are not code and are skipped. */
function isBinLink(rel: string): boolean {
  return /(^|\/)node_modules\/\.bin(\/|$)/.test(rel);
}

/** Copies or unpacks a bundle into `dest` (an empty folder). Only regular files and folders are accepted. */
export async function materializeBundle(source: BundleSource, dest: string, limits = DEFAULT_BUNDLE_LIMITS): Promise<void> {
  if ('dir' in source) await copyFolder(source.dir, dest, limits);
  else await unpackTarball('tarball' in source ? Readable.from([Buffer.from(source.tarball)]) : createReadStream(source.tarballFile), dest, limits);
}

async function copyFolder(src: string, dest: string, limits: BundleLimits): Promise<void> {
  let bytes = 0;
  let files = 0;
  const walk = async (rel: string): Promise<void> => {
    const entries = await fsp.readdir(path.join(src, rel), { withFileTypes: true });
    for (const entry of entries) {
      const childRel = rel ? `${rel}/${entry.name}` : entry.name;
      if (entry.name === '.git' && entry.isDirectory()) continue;
      if (entry.isDirectory()) {
        await fsp.mkdir(path.join(dest, childRel), { recursive: true });
        await walk(childRel);
      } else if (entry.isFile()) {
        const stat = await fsp.stat(path.join(src, childRel));
        bytes += stat.size;
        files += 1;
        if (bytes > limits.maxUnpackedBytes) throw bad(`the function folder is larger than ${limits.maxUnpackedBytes} bytes`);
        if (files > limits.maxFiles) throw bad(`the function folder has more than ${limits.maxFiles} files`);
        await fsp.copyFile(path.join(src, childRel), path.join(dest, childRel));
      } else if (entry.isSymbolicLink()) {
        if (isBinLink(childRel)) continue;
        throw bad(`${childRel}: symbolic links are not supported in a function folder`);
      }
    }
  };
  await walk('');
}

async function unpackTarball(input: Readable, dest: string, limits: BundleLimits): Promise<void> {
  let bytes = 0;
  let files = 0;
  let refusal: ServiceError | undefined;
  const extractor = tar.x({
    cwd: dest,
    strict: true,
    preservePaths: false,
    noChmod: true,
    filter: (entryPath, entry) => {
      if (refusal) return false;
      const type = 'type' in entry ? entry.type : 'File';
      const rel = normalizeRelative(entryPath.replace(/\/+$/, ''));
      const fail = (message: string): boolean => {
        refusal = bad(`bundle entry ${JSON.stringify(entryPath)}: ${message}`);
        extractor.abort(refusal);
        return false;
      };
      if ((type === 'SymbolicLink' || type === 'Link') && rel !== undefined && isBinLink(rel)) return false;
      if (rel === undefined) {
        if (entryPath.replace(/\/+$/, '') === '.' || entryPath === './') return true;
        return fail('absolute paths and ".." are not allowed');
      }
      if (type !== 'File' && type !== 'OldFile' && type !== 'ContiguousFile' && type !== 'Directory') {
        return fail(`${type} entries are not allowed (only files and folders)`);
      }
      if (type !== 'Directory') {
        bytes += 'size' in entry ? Number(entry.size) : 0;
        files += 1;
        if (bytes > limits.maxUnpackedBytes) return fail(`the unpacked bundle is larger than ${limits.maxUnpackedBytes} bytes`);
        if (files > limits.maxFiles) return fail(`the bundle has more than ${limits.maxFiles} files`);
      }
      return true;
    },
  });
  try {
    await pipeline(input, extractor);
  } catch (err) {
    if (refusal) throw refusal;
    throw bad(`the bundle is not a valid tar.gz archive: ${(err as Error).message}`);
  }
  if (refusal) throw refusal;
}

/** Every regular file below `dir`, as sorted relative POSIX paths. */
export async function listFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (rel: string): Promise<void> => {
    for (const entry of await fsp.readdir(path.join(dir, rel), { withFileTypes: true })) {
      const childRel = rel ? `${rel}/${entry.name}` : entry.name;
      if (entry.isDirectory()) await walk(childRel);
      else if (entry.isFile()) out.push(childRel);
    }
  };
  await walk('');
  return out.sort();
}
