/**
 * A worker process: the composition root of one serving engine under the supervisor. It opens the
 * engine on the shared data directory (locks and changes go through the supervisor), listens on
 * the shared ports (the function port and the console's), reports its stats every second, and
 * drains when asked, when the supervisor goes away, or on SIGTERM/SIGINT.
 */
import type { Engine } from '../engine/engine';
import { configureServerLog, serverLog } from '../engine/server-log';
import type { Store } from '../engine/store/store';
import { localFigures, type PeerQuery } from '../http/peers';
import { startServer, type RunningServer } from '../http/server';
import { Channel, type Endpoint } from './channel';
import { advertisedUrl, nodeId, type ClusterLogs } from './cluster-logs';
import { openEngine } from './compose';
import { ChannelCoordinator } from './coordinator';
import type { WorkerConfig, WorkerReport, WorkerStats } from './messages';
import { assertPortFree, CONSOLE_PORT_HINT } from './port';

const STATS_MS = 1000;
const CLOSE_MS = 10_000;

const bounded = (work: Promise<unknown> | undefined) => Promise.race([work, new Promise((r) => setTimeout(r, CLOSE_MS))]);

async function main(): Promise<void> {
  const config = JSON.parse(process.env.ISLET_WORKER ?? '') as WorkerConfig;
  configureServerLog({ level: config.logLevel, worker: config.slot, node: config.storeUrl === undefined ? undefined : nodeId(config.dataDir) });
  const channel = new Channel(process as unknown as Endpoint);
  const started = Date.now();
  let engine: Engine | undefined;
  let store: Store | undefined;
  let server: RunningServer | undefined;
  let draining: Promise<void> | undefined;

  const stats = (): WorkerStats => {
    const s = engine?.stats();
    return {
      pid: process.pid,
      slot: config.slot,
      rssMb: Math.round(process.memoryUsage.rss() / (1024 * 1024)),
      active: server?.active ?? 0,
      catastrophicOutOfMemory: s?.catastrophicOutOfMemory ?? 0,
      warm: s?.warm ?? 0,
      warmMb: s?.warmMb ?? 0,
      functions: s?.functions ?? 0,
      uptimeS: Math.round((Date.now() - started) / 1000),
    };
  };

  /** Stops taking connections, lets the calls in flight finish, writes the logs, exits 0. */
  const drain = (reason: string): Promise<void> => {
    draining ??= (async () => {
      serverLog.info({ reason }, `worker ${config.slot} (pid ${process.pid}) draining: ${reason}`);
      await server?.drain();
      cluster?.stop();
      // A client may still send a call on a kept-alive connection that had nothing in flight; it is
      // answered (closing the connection) until the exit. So the slow part of closing, writing
      // logs and key uses, is done while calls are still served, then the stragglers are awaited,
      // and only the quick part is left between the last call and the exit. Each part is bounded.
      await bounded(engine?.quiesce());
      await server?.idle();
      await bounded(
        (async () => {
          await engine?.close();
          await store?.close();
        })(),
      );
      // After a fatal out-of-memory, exit() waits forever for the isolate thread V8 parked (isolated-vm
      // joins its threads on the way out): the logs are written, so the process ends itself hard.
      if ((engine?.stats().catastrophicOutOfMemory ?? 0) > 0) process.kill(process.pid, 'SIGKILL');
      process.exit(0);
    })();
    return draining;
  };

  let mayListen!: () => void;
  const listenAllowed = new Promise<void>((resolve) => (mayListen = resolve));
  if (!config.waitToListen) mayListen();
  channel.handle('listen', () => mayListen());
  channel.handle('drain', ({ reason }: { reason: string }) => void drain(reason));
  process.on('disconnect', () => void drain('the supervisor went away'));
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, () => void drain(signal));
  // A rolling restart is the supervisor's to run; a hang-up of the terminal is not a reason to stop.
  process.on('SIGHUP', () => undefined);
  channel.notify('hello');

  let cluster: ClusterLogs | undefined;
  ({ engine, store, cluster } = await openEngine({
    dataDir: config.dataDir,
    limits: config.limits,
    allowPrivateEgress: config.allowPrivateEgress,
    storeUrl: config.storeUrl,
    coordinator: new ChannelCoordinator(channel),
    clean: false,
    keepVersions: config.keepVersions,
    metrics: config.metrics,
    logs: { writer: config.logWriter, beforeRead: () => channel.request('flush-logs') },
  }));
  const logs = engine.logs;
  channel.handle('flush-logs', () => logs.flush());
  const served = engine;
  for (const op of ['metrics', 'stats'] as const) channel.handle(op, (query: PeerQuery): unknown => localFigures(served, op, query));
  await listenAllowed;
  if (draining) return;
  if (config.probe) {
    try {
      await assertPortFree(config.host, config.port);
      if (config.consolePort !== undefined) await assertPortFree(config.host, config.consolePort, "the console's port", CONSOLE_PORT_HINT);
    } catch (err) {
      channel.notify('fatal', { message: (err as Error).message });
      setTimeout(() => process.exit(1), 100);
      return;
    }
  }
  const running = await startServer({
    engine,
    host: config.host,
    port: config.port,
    consolePort: config.consolePort,
    consoleOrigin: config.consoleOrigin,
    metricsToken: config.metricsToken,
    peers: { gather: (op, body) => channel.request('gather', { op, body }) },
    health: async () => {
      const workers = await channel.request<WorkerReport[]>('health');
      return { worker: stats(), workers: workers.map((w) => (w.pid === process.pid ? { ...w, ...stats() } : w)) };
    },
  });
  server = running;
  cluster?.start(config.advertiseUrl ?? advertisedUrl(config.host, running.port));
  channel.notify('ready', { port: running.port, consolePort: running.consolePort });
  setInterval(() => channel.notify('stats', stats()), STATS_MS).unref();
}

main().catch((err: unknown) => {
  serverLog.fatal({ code: 'ERR_WORKER_START', err }, `worker failed to start: ${(err as Error)?.message ?? String(err)}`);
  process.exit(1);
});
