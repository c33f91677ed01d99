/**
 * `node dist/bench/log-sink.js [rows-per-second] [seconds]`: what writing functions' log lines to
 * PostgreSQL would cost, against appending them to local files as islet does. It writes call lines
 * like islet's at a full warm-hello rate, batched every 250 ms as LogStore batches them, into a
 * private PostgreSQL (multi-row INSERT ... SELECT FROM unnest, one statement per batch), and reads
 * the CPU time of the database's processes and of this process from /proc. The figure that
 * decided the design is the CPU per line, beside islet's CPU per hello call.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { Client } from 'pg';
import { LogStore } from '../engine/logs';
import { postgresMissing, startPostgres } from '../test/helpers/postgres';
import { cpuMs } from './scale';

function line(i: number): string {
  const requestId = i.toString(16).padStart(32, '0');
  return `{"t":${Date.now()},"requestId":"${requestId}","level":"call","message":"GET 200 ${(20 + (i % 50)).toFixed(3)} us"}`;
}

async function main(): Promise<void> {
  const perSecond = Number(process.argv[2] ?? 20_000);
  const seconds = Number(process.argv[3] ?? 10);
  const missing = postgresMissing();
  if (missing) {
    console.log(`skipped: ${missing}`);
    return;
  }
  const pg = await startPostgres();
  const client = new Client(pg.url);
  await client.connect();
  await client.query('CREATE TABLE islet_logs (t timestamptz NOT NULL, account text NOT NULL, name text NOT NULL, node text NOT NULL, line text NOT NULL)');
  await client.query('CREATE INDEX ON islet_logs (account, name, t)');
  const batch = Math.round(perSecond / 4);
  const pids = pg.pids();
  const run = async (write: (rows: string[]) => Promise<void>) => {
    const [db0, self0] = [cpuMs(pids), cpuMs([process.pid])];
    const started = performance.now();
    let written = 0;
    for (let tick = 0; tick < seconds * 4; tick++) {
      const rows = Array.from({ length: batch }, (_, i) => line(written + i));
      await write(rows);
      written += rows.length;
      const next = started + (tick + 1) * 250;
      await new Promise((r) => setTimeout(r, Math.max(0, next - performance.now())));
    }
    return { written, dbUs: ((cpuMs(pids) - db0) * 1000) / written, selfUs: ((cpuMs([process.pid]) - self0) * 1000) / written };
  };
  const toPostgres = await run(async (rows) => {
    await client.query('INSERT INTO islet_logs (t, account, name, node, line) SELECT now(), $1, $2, $3, l FROM unnest($4::text[]) AS l', ['a1b2c3d4e5f60718', 'hello', 'node-1', rows]);
  });
  const logs = new LogStore(mkdtempSync(path.join(tmpdir(), 'islet-logsink-')));
  const toFiles = await run(async (rows) => {
    for (const row of rows) logs.appendLine('a1b2c3d4e5f60718/hello', row);
    await logs.flush();
  });
  console.log(`${perSecond} lines/s for ${seconds} s, batches of ${batch} every 250 ms`);
  console.log(`PostgreSQL: ${toPostgres.dbUs.toFixed(2)} us of database CPU + ${toPostgres.selfUs.toFixed(2)} us in the writer per line`);
  console.log(`local files: ${toFiles.selfUs.toFixed(2)} us in the writer per line (no database)`);
  await client.end();
  pg.destroy();
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
