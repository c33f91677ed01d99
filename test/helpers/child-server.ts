/**
 * A test server in its own process, for tests that may leave the process unable to exit by itself
 * (a fatal out-of-memory parks an isolate thread for good). Reads its set-up from ISLET_TEST_CONFIG
 * and prints one JSON line `{url, accountId, apiKey}` when it is ready.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { startServer } from '../../http/server';
import { openEngine } from '../../supervisor/compose';
import { TEST_CACHE } from './server';

export interface ChildConfig {
  limits?: Record<string, number>;
  allowPrivateEgress?: boolean;
  /** Accounts besides the first (each deploy names its account by index; 0, the first, by default). */
  otherAccounts?: number;
  deploys: { name: string; folder: string; entrypoint: string; extra?: Record<string, unknown>; account?: number }[];
  /** Deploys expected to be refused: their errors are reported in the ready line as `refused`. */
  refused?: { name: string; folder: string; entrypoint: string }[];
}

async function main(): Promise<void> {
  const config = JSON.parse(process.env.ISLET_TEST_CONFIG ?? '{"deploys":[]}') as ChildConfig;
  const dataDir = mkdtempSync(path.join(tmpdir(), 'islet-child-'));
  const { engine } = await openEngine({ dataDir, limits: config.limits, cacheDir: TEST_CACHE, allowPrivateEgress: config.allowPrivateEgress });
  const { accountId, apiKey } = await engine.createAccount();
  const others = [];
  for (let i = 0; i < (config.otherAccounts ?? 0); i++) others.push(await engine.createAccount());
  const accounts = [{ accountId, apiKey }, ...others];
  for (const d of config.deploys) {
    await engine.deploy(accounts[d.account ?? 0]!.accountId, { name: d.name, runtime: 'node8', file: 'function.js', entrypoint: d.entrypoint, env: {}, ...d.extra }, { dir: d.folder });
  }
  const refused: Record<string, { code: string; message: string }> = {};
  for (const d of config.refused ?? []) {
    await engine.deploy(accountId, { name: d.name, runtime: 'node8', file: 'function.js', entrypoint: d.entrypoint, env: {} }, { dir: d.folder }).then(
      () => undefined,
      (err: { code: string; message: string }) => (refused[d.name] = { code: err.code, message: err.message }),
    );
  }
  const server = await startServer({ engine, host: '127.0.0.1', port: 0 });
  process.stdout.write(`${JSON.stringify({ url: server.url, accountId, apiKey, dataDir, refused, others })}\n`);
}

// A profiled child (ISLET_CHILD_PROF) writes its profile when it exits: SIGINT ends it cleanly.
process.on('SIGINT', () => process.exit(0));

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
