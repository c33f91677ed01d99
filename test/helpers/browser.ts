import { existsSync, mkdirSync } from 'node:fs';
import * as path from 'node:path';
import type { Browser } from 'playwright-core';

/** Debian's Chromium (`apt-get install chromium`; .ci/run installs it), or CHROMIUM_PATH. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/**
 * Why the browser tests cannot run here, or undefined when they can. Only a developer's machine
 * may lack Chromium: in CI (CI set) its absence fails the tests instead of skipping them.
 */
export function browserMissing(): string | undefined {
  if (existsSync(CHROMIUM)) return undefined;
  const reason = `no Chromium at ${CHROMIUM}: install it (apt-get install chromium) or set CHROMIUM_PATH to run the console's browser tests`;
  if (process.env.CI) throw new Error(`${reason} (CI must run them: .ci/run installs it)`);
  return reason;
}

/** A headless Chromium driven by playwright-core (which downloads no browser of its own). */
export async function launchBrowser(): Promise<Browser> {
  const { chromium } = await import('playwright-core');
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
}

/** Where screenshots go when ISLET_SCREENSHOTS names a folder (they are for people to look at, never kept in git). */
export function screenshotPath(name: string): string | undefined {
  const dir = process.env.ISLET_SCREENSHOTS;
  if (!dir) return undefined;
  mkdirSync(dir, { recursive: true });
  return path.join(dir, `${name}.png`);
}
