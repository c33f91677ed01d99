import * as path from 'node:path';
import { ServiceError } from './errors';

/**
 * `base` joined with `names`, where each name must be one plain path component (not empty, `.` or
 * `..`, with no `/`, `\` or NUL) and the result must resolve strictly below `base`. Every path
 * made from a name that came from a request goes through here: the names are checked at the
 * boundary already (engine/names.ts), and this is the second wall, so that a caller that forgot
 * cannot reach another account's folder. The refusal names the name, never a host path.
 */
export function containedPath(base: string, ...names: string[]): string {
  for (const name of names) {
    if (name === '' || name === '.' || name === '..' || /[/\\\0]/.test(name)) throw refused(name);
  }
  const root = path.resolve(base);
  const full = path.resolve(root, ...names);
  const rel = path.relative(root, full);
  if (rel === '' || rel === '..' || rel.startsWith(`..${path.sep}`) || path.isAbsolute(rel)) throw refused(names.join('/'));
  return full;
}

function refused(name: string): ServiceError {
  return new ServiceError('ERR_BAD_REQUEST', `refused the name ${JSON.stringify(name.length > 140 ? `${name.slice(0, 140)}…` : name)}: names are single words inside their account`);
}
