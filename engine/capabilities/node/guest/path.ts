// node8's `path` (POSIX), from unenv (pathe underneath), with `posix` and `win32` views of itself.
import path from 'unenv/node/path';

export default path;
export const win32 = path;
