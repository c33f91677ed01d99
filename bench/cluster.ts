/**
 * The PostgreSQL scenarios of `npm run bench` (when PostgreSQL's binaries are installed): deploy
 * propagation between two nodes, two nodes against one under the warm hello, the warm hello on
 * the PostgreSQL store against the file store (the call path must not touch the database), and
 * the PostgreSQL half of scenario 16 (the queue).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { Pool } from 'undici';
import { postgresMissing, startPostgres } from '../test/helpers/postgres';
import type { LoadResult, LoadSpec } from './load';
import { queueThroughput, recordQueue } from './queue';
import { startSupervised, type SupervisedServer } from './scale';
import { BENCH_FUNCTIONS } from './server';

type Load = Omit<LoadSpec, 'base' | 'connections' | 'durationSec'>;

export interface ClusterBench {
  quick: boolean;
  figures: Record<string, number>;
  percentile(values: number[], p: number): number;
  record(prefix: string, result: LoadResult): void;
  run(origin: string, spec: Load, connections?: number, pids?: () => number[]): Promise<LoadResult>;
  runRounds(loads: [prefix: string, origin: string, spec: Load, pids?: () => number[]][]): Promise<void>;
  /** A bench server (bench/server.ts) on the given store, with the core functions. */
  startServer(storeUrl: string): Promise<{ url: string; accountId: string; apiKey: string; pid: number; stop(): void }>;
  /** The file-store bench server of scenario 1. */
  fileServer: { url: string; accountId: string; apiKey: string; pid: number };
  /** Asynchronous invocations of scenario 16. */
  queueCount: number;
}

/** Returns why the scenarios were skipped, if they were. */
export async function runClusterScenarios(b: ClusterBench): Promise<string | undefined> {
  const missing = postgresMissing();
  if (missing) return missing;
  const pg = await startPostgres();
  const nodes: SupervisedServer[] = [];
  try {
    console.log('10. deploy propagation: deploy on node A until node B serves the new version (PostgreSQL store, LISTEN/NOTIFY)');
    nodes.push(await startSupervised(1, ['--store', pg.url]), await startSupervised(1, ['--store', pg.url]));
    const [a, bNode] = nodes as [SupervisedServer, SupervisedServer];
    const { accountId, apiKey } = a;
    const headers = { 'X-Service-Api-Key': apiKey };
    const observer = new Pool(bNode.url, { connections: 1 });
    const deploys = b.quick ? 10 : 40;
    const total: number[] = [];
    const afterAck: number[] = [];
    for (let i = 0; i < deploys; i++) {
      const dir = mkdtempSync(path.join(tmpdir(), 'islet-bench-prop-'));
      writeFileSync(path.join(dir, 'function.js'), `exports.handler = () => "v${i}";\n`);
      const started = performance.now();
      await a.deploy('moving', 'handler', dir, {}, { accountId, apiKey });
      const acknowledged = performance.now();
      for (;;) {
        const res = await observer.request({ method: 'GET', path: `/v2/run/${accountId}/moving`, headers });
        if ((await res.body.text()) === `"v${i}"`) break;
        if (performance.now() - acknowledged > 5000) throw new Error(`node B did not serve v${i} within 5 s`);
      }
      const served = performance.now();
      total.push(served - started);
      afterAck.push(served - acknowledged);
    }
    await observer.close();
    b.figures.propagation_deploys = deploys;
    b.figures.propagation_p50_ms = b.percentile(total, 50);
    b.figures.propagation_p99_ms = b.percentile(total, 99);
    b.figures.propagation_after_ack_p50_ms = b.percentile(afterAck, 50);
    b.figures.propagation_after_ack_p99_ms = b.percentile(afterAck, 99);

    console.log('11. warm hello through two nodes (one load generator each) against one node');
    await a.deploy('hello', 'hello', BENCH_FUNCTIONS, {}, { accountId, apiKey });
    const hello = (node: SupervisedServer): Load => ({ paths: [`/v2/run/${accountId}/hello?name=abc`], headers });
    // Both nodes serve it before the load (B learns of it through NOTIFY).
    for (let tries = 0; (await fetch(`${bNode.url}/v2/run/${accountId}/hello`, { headers })).status !== 200; tries++) {
      if (tries > 500) throw new Error('node B never served hello');
      await new Promise((r) => setTimeout(r, 10));
    }
    b.record('one_node', await b.run(a.url, hello(a)));
    const [ra, rb] = await Promise.all([b.run(a.url, hello(a), 32), b.run(bNode.url, hello(bNode), 32)]);
    b.figures.two_nodes_rps = ra.rps + rb.rps;
    b.figures.two_nodes_p99_ms = Math.max(ra.p99Ms, rb.p99Ms);
    b.figures.two_nodes_errors = ra.errors + rb.errors;
    b.figures.two_nodes_vs_one = b.figures.two_nodes_rps / b.figures.one_node_rps!;
    for (const node of nodes) node.stop();

    console.log('12. warm hello on the PostgreSQL store against the file store (in one process each, taking turns)');
    const onPg = await b.startServer(pg.createDatabase('bench_hello'));
    try {
      const file = b.fileServer;
      await b.runRounds([
        ['file_hello', file.url, { paths: [`/v2/run/${file.accountId}/hello?name=abc`], headers: { 'X-Service-Api-Key': file.apiKey } }, () => [file.pid]],
        ['pg_hello', onPg.url, { paths: [`/v2/run/${onPg.accountId}/hello?name=abc`], headers: { 'X-Service-Api-Key': onPg.apiKey } }, () => [onPg.pid]],
      ]);
      b.figures.pg_vs_file_hello = b.figures.pg_hello_rps! / b.figures.file_hello_rps!;
      console.log(`16. asynchronous invocations through the queue, accept to done: ${b.queueCount} of the hello (PostgreSQL store)`);
      recordQueue(b.figures, 'queue_pg', await queueThroughput(onPg, b.queueCount));
    } finally {
      onPg.stop();
    }
    return undefined;
  } finally {
    for (const node of nodes) node.stop();
    pg.destroy();
  }
}
