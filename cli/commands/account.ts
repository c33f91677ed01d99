import * as path from 'node:path';
import { AccountStore } from '../../engine/store/accounts';

/** `islet account create [--data DIR] [--json]`: offline; writes the account into a data directory. */
export async function createAccount(dataDir: string, json: boolean): Promise<string> {
  const store = new AccountStore(path.resolve(dataDir));
  await store.load();
  const { accountId, apiKey } = await store.create();
  if (json) return `${JSON.stringify({ accountId, apiKey })}\n`;
  return `Created account ${accountId}\nAPI key: ${apiKey}\n(the key is shown only now; only its hash is stored in ${path.resolve(dataDir)})\n`;
}
