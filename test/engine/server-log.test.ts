import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import t from 'tap';
import { openStore } from '../../supervisor/compose';
import { fixture, startTestServer } from '../helpers/server';

// Work no caller waits on (here: recording when a key was last used) that fails is a warning in
// the server's log, a JSON line with its code and task, and a count in /metrics: before, its
// `.catch(() => undefined)` hid it.

const TOKEN = 'server-log-test-token';

/** The JSON lines written to stderr while `work` runs. */
async function serverLogOf(work: () => Promise<void>): Promise<Record<string, unknown>[]> {
  const written: string[] = [];
  const write = process.stderr.write;
  process.stderr.write = ((line: string) => written.push(String(line)) > 0) as typeof process.stderr.write;
  try {
    await work();
  } finally {
    process.stderr.write = write;
  }
  return written.filter((line) => line.startsWith('{')).map((line) => JSON.parse(line) as Record<string, unknown>);
}

t.test('a failed key-use write is logged with its code and task, and counted in islet_background_errors_total', async (t) => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'islet-server-log-'));
  const store = await openStore({ dataDir });
  let refused = 0;
  store.touchKeys = async () => {
    refused++;
    throw new Error('EIO: the disk said no');
  };
  const s = await startTestServer({ dataDir, metricsToken: TOKEN, engine: { store } });
  t.teardown(() => s.stop());
  await s.deploy('ok', fixture('probes-node8'), 'ok');
  t.equal((await s.call('ok')).status, 200);
  const lines = await serverLogOf(() => s.internals.keyUses.flush());
  t.ok(refused > 0, 'the store was asked');
  const line = lines.find((l) => l.task === 'key-use-write');
  t.match(line, { level: 'warn', code: 'ERR_BACKGROUND', task: 'key-use-write', err: { message: 'EIO: the disk said no' } }, JSON.stringify(lines));
  t.match(line?.msg, s.accountId, 'the line names the account');
  const metrics = await (await fetch(`${s.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })).text();
  t.match(metrics, /^islet_background_errors_total\{task="key-use-write"\} [1-9]\d*$/m, 'counted');
  t.match(metrics, /^islet_background_errors_total\{task="catalog-refresh"\} 0$/m, 'every task has its series, at 0 until it fails');
});
