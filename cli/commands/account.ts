import * as path from 'node:path';
import { FileStore } from '../../engine/store/file/store';

/** `islet account create [--data DIR] [--json]`: offline; writes the account into a data directory. */
export async function createAccount(dataDir: string, json: boolean): Promise<string> {
  // Not `clean`: a server may be running on the directory (it sees the account after a restart).
  const store = await FileStore.open(path.resolve(dataDir), { clean: false });
  const { accountId, apiKey } = await store.createAccount();
  if (json) return `${JSON.stringify({ accountId, apiKey })}\n`;
  return `Created account ${accountId}\nAPI key: ${apiKey}\n(the key is shown only now; only its hash is stored in ${path.resolve(dataDir)})\n`;
}
