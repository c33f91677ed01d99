/**
 * The operations between fs's guest halves (guest/fs.ts: node8's `fs`; the Python runtime's
 * /function, python/sandbox/lazy-files.ts) and its host half (host.ts): the function's own files,
 * read-only. The guests import types only.
 */
import { labelled, object, string, variants } from '../schema';

/** node8's native call: one file, one folder's entries, or what stat shows, of an absolute path under the function's `/`. */
export const FS_CALLS = {
  fs: variants('op', {
    readFile: object({ path: labelled('path', string()) }),
    stat: object({ path: labelled('path', string()) }),
    readdir: object({ path: labelled('path', string()) }),
  }),
};

export interface FsAnswers {
  /** readFile answers bytes; stat what it shows; readdir the names and kinds of the entries. */
  fs: Record<string, never> | { kind: 'file' | 'dir'; size: number; mtimeMs: number; ino: number } | { entries: [name: string, kind: 'file' | 'dir'][] };
}

/** Python's: one of the function's files by the relative path the deploy listed, answered as bytes. */
export const FILE_OPS = {
  file: object({ path: labelled('path', string()) }),
};
