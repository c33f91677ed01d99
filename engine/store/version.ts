import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import * as path from 'node:path';
import * as tar from 'tar';
import { listFiles } from '../bundle';
import { ServiceError } from '../errors';
import type { FunctionManifest, FunctionSpec } from '../manifest';

/**
 * The manifest of a new version from its unpacked files: their list, their sha256 (over the sorted
 * paths and contents: what makes two versions' code the same). Its number is 0 until the store
 * gives it the next one. Refuses a spec whose file is not among them.
 */
export async function describeVersion(codeDir: string, account: string, spec: FunctionSpec, message?: string): Promise<FunctionManifest> {
  const files = await listFiles(codeDir);
  if (!files.includes(spec.file)) {
    throw new ServiceError('ERR_INVALID_FUNCTION', `functions.${spec.name}.file: ${spec.file} is not in the deployed folder`, { key: 'file' });
  }
  const { hash, bytes } = await hashFiles(codeDir, files);
  return {
    ...spec,
    account,
    version: 0,
    deployedAt: new Date().toISOString(),
    ...(message ? { message } : {}),
    contentHash: hash,
    files,
    bytes,
  };
}

async function hashFiles(dir: string, files: string[]): Promise<{ hash: string; bytes: number }> {
  const hash = createHash('sha256');
  let bytes = 0;
  for (const file of files) {
    hash.update(file).update('\0');
    for await (const chunk of createReadStream(path.join(dir, file))) {
      hash.update(chunk as Buffer);
      bytes += (chunk as Buffer).length;
    }
    hash.update('\0');
  }
  return { hash: hash.digest('hex'), bytes };
}

/** A version's files as one tar.gz (how a shared store keeps code; unpacked again by materializeBundle). */
export async function packFiles(codeDir: string, files: string[]): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of tar.c({ gzip: true, cwd: codeDir, portable: true, noDirRecurse: true }, files) as AsyncIterable<Buffer>) chunks.push(chunk);
  return Buffer.concat(chunks);
}
