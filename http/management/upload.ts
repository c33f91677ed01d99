import { randomBytes } from 'node:crypto';
import { createWriteStream, promises as fsp, type WriteStream } from 'node:fs';
import * as path from 'node:path';
import type { HttpResponse } from '@trufflesuite/uws-js-unofficial';
import busboy from 'busboy';
import { ServiceError } from '../../engine/errors';
import type { ResponseState } from '../respond';

/** A deploy upload as received: its fields, and its bundle in a file of the staging area. */
export interface ReceivedUpload {
  fields: Record<string, string>;
  /** The `bundle` file part, written to disk (undefined when the upload had none). */
  bundleFile: string | undefined;
  /** Deletes the bundle's file (call it whatever happened). */
  discard(): Promise<void>;
}

export interface Upload {
  received: Promise<ReceivedUpload>;
  /** The client went away: stop, and delete what was written. */
  abort(): void;
}

/**
 * Receives a deploy upload (multipart/form-data: fields and one `bundle` file) as it arrives,
 * without holding it: the request body streams through busboy, the bundle into a file of `dir`
 * (the data directory's staging area). uWS is paused while the disk is behind, so memory holds a
 * few chunks whatever the upload's size. Past `limit` bytes of body the upload is refused with
 * ERR_PAYLOAD_TOO_LARGE at once and its file deleted; the caller answers and closes the connection.
 * Buffered whole, six concurrent keyless 100 MiB uploads took two workers from 80 MB to 650 MB.
 */
export function receiveUpload(res: HttpResponse, state: ResponseState, headers: Record<string, string>, limit: number, dir: string): Upload {
  const bundleFile = path.join(dir, `upload-${randomBytes(8).toString('hex')}.tar.gz`);
  let file: WriteStream | undefined;
  const discard = async () => {
    file?.destroy();
    await fsp.rm(bundleFile, { force: true });
  };
  let abort = () => undefined as void;
  const received = new Promise<ReceivedUpload>((resolve, reject) => {
    let settled = false;
    const fail = (err: Error) => {
      if (settled) return;
      settled = true;
      // Nothing more of the body is read (the refusal that follows says so, and closes).
      if (!state.aborted) res.pause();
      parser?.destroy();
      void discard().finally(() => reject(err));
    };
    let parser: busboy.Busboy | undefined;
    try {
      parser = busboy({ headers: { 'content-type': headers['content-type'] ?? '' }, limits: { files: 1, fields: 8, fieldSize: 1024 * 1024 } });
    } catch (err) {
      fail(new ServiceError('ERR_BAD_REQUEST', `a deploy is a multipart/form-data upload with a spec field and a bundle file: ${(err as Error).message}`));
      res.onData(() => undefined);
      return;
    }
    const fields: Record<string, string> = {};
    let fileDone: Promise<void> = Promise.resolve();
    parser.on('field', (name, value) => {
      fields[name] = value;
    });
    parser.on('file', (name, stream) => {
      // A part cut short (the upload refused or the client gone) errors its stream: what failed is
      // reported by `fail` already, and an unheard error would end the process.
      stream.on('error', () => undefined);
      if (name !== 'bundle' || file) {
        stream.resume();
        return;
      }
      file = createWriteStream(bundleFile, { mode: 0o600 });
      const written = file;
      fileDone = new Promise((done) => written.on('close', done));
      // A disk that fails (full, say) stops the upload at once; the error is the server's, not the client's.
      written.on('error', fail);
      stream.pipe(written);
    });
    parser.on('error', (err: Error) => fail(new ServiceError('ERR_BAD_REQUEST', `unreadable deploy upload: ${err.message}`)));
    parser.on('close', () => {
      void fileDone.then(() => {
        if (settled) return;
        settled = true;
        resolve({ fields, bundleFile: file ? bundleFile : undefined, discard });
      });
    });
    abort = () => fail(new ServiceError('ERR_BAD_REQUEST', 'the client went away during the upload'));
    const hasBody = (headers['content-length'] !== undefined && headers['content-length'] !== '0') || headers['transfer-encoding'] !== undefined;
    const started = fsp.mkdir(dir, { recursive: true }).catch(fail);
    if (!hasBody) {
      void started.then(() => parser!.end());
      return;
    }
    let size = 0;
    let paused = false;
    parser.on('drain', () => {
      if (paused && !settled && !state.aborted) {
        paused = false;
        res.resume();
      }
    });
    res.onData((chunk, isLast) => {
      if (settled) return;
      size += chunk.byteLength;
      if (size > limit) return fail(new ServiceError('ERR_PAYLOAD_TOO_LARGE', `the bundle is over the limit of ${limit} bytes`));
      // uWS reuses the chunk's memory after this callback returns: copy it.
      const copy = Buffer.from(new Uint8Array(chunk));
      // The folder is there before the first part reaches the disk (busboy emits parts as it parses).
      void started.then(() => {
        if (settled) return;
        if (!parser!.write(copy) && !paused && !isLast && !state.aborted) {
          paused = true;
          res.pause();
        }
        if (isLast) parser!.end();
      });
    });
  });
  return { received, abort: () => abort() };
}
