import type { Test } from 'tap';

/**
 * A test whose machine lacks what it needs (Debian packages that .ci/run installs): skipped with a
 * message on a developer's machine, failed under CI, which must run it.
 */
export function missingRequirement(t: Test, what: string): void {
  if (process.env.CI) t.fail(`${what} (CI must run this test: .ci/run installs it)`);
  else t.plan(0, `skip: ${what} (.ci/run installs it)`);
}
