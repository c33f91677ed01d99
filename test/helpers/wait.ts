/**
 * Waits until `check` holds, looking every few milliseconds: for tests that wait on something a
 * timer or another process does. The deadline only catches a hang (a loaded machine stretches
 * every wait); it fails naming what never happened.
 */
export async function until(check: () => boolean | Promise<boolean>, what: string, ms = 60_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`waited ${ms / 1000} s for: ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}
