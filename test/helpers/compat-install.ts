import { execFileSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import * as path from 'node:path';

/**
 * `npm ci` of a compatibility suite's packages (from its lock file), unless its node_modules
 * already matches the lock file. Under a lock: test files run in parallel and may ask together.
 */
export function ensureCompatInstalled(suite: string): void {
  const installed = () => {
    const marker = path.join(suite, 'node_modules', '.package-lock.json');
    return existsSync(marker) && statSync(marker).mtimeMs >= statSync(path.join(suite, 'package-lock.json')).mtimeMs;
  };
  if (installed()) return;
  const script = `[ -f node_modules/.package-lock.json ] && [ node_modules/.package-lock.json -nt package-lock.json ] || npm ci --prefer-offline --no-audit --no-fund --loglevel=error`;
  execFileSync('flock', [path.join(suite, '.install-lock'), 'sh', '-c', script], { cwd: suite, stdio: 'inherit', timeout: 300_000 });
}
