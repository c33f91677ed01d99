import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { startServer } from '../http/server';
import { openEngine } from './compose';

/**
 * `npm start`: serves islet on a local data directory. On an empty data directory it creates the
 * first account and prints its id and key (the key is shown only this once; only its hash is stored).
 */
export async function serve(argv: string[] = process.argv.slice(2)): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      port: { type: 'string', default: process.env.PORT ?? '8080' },
      host: { type: 'string', default: process.env.HOST ?? '127.0.0.1' },
      data: { type: 'string', default: process.env.ISLET_DATA ?? path.join(process.cwd(), '.islet-data') },
      'allow-private-egress': { type: 'boolean', default: false },
    },
    allowPositionals: false,
  });
  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`--port: ${values.port} is not a port number`);
  const dataDir = path.resolve(values.data!);
  const { engine, store } = await openEngine({ dataDir, allowPrivateEgress: values['allow-private-egress'] });
  if (engine.catalog.accountCount === 0) {
    const account = await engine.createAccount();
    console.log('Created the first account (the key is shown only now; keep it):');
    console.log(`  account id: ${account.accountId}`);
    console.log(`  API key:    ${account.apiKey}`);
  }
  const server = await startServer({ engine, host: values.host!, port });
  console.log(`islet listening on ${server.url} (data: ${dataDir})`);
  const stop = () => {
    server.close();
    engine.close().then(() => store.close()).finally(() => process.exit(0));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

if (require.main === module) {
  serve().catch((err: unknown) => {
    console.error(`islet: ${(err as Error).message}`);
    process.exit(1);
  });
}
