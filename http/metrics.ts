import type { TemplatedApp } from '@trufflesuite/uws-js-unofficial';
import type { Registry } from 'prom-client';
import type { ManagementApi } from '../engine/api';
import { errorResponse, responseHeaders } from '../engine/error-answer';
import { ServiceError } from '../engine/errors';
import { newRequestId } from '../engine/request-id';
import { backgroundErrorCounts } from '../engine/server-log';
import { DURATION_BOUNDS_S, ERROR_CODES } from '../engine/stats/function-stats';
import { isMetricsToken } from './bearer';
import type { Peers } from './peers';
import { type Connections, writeResponse } from './respond';

/**
 * `GET /metrics`: Prometheus's text format, made with prom-client (loaded on the first scrape).
 * With the server's metrics token (`Authorization: Bearer …`): every function and the server's own
 * figures, process metrics included. With an account's admin key: that account's functions only.
 * Without either: 401, and 404 when the server counts nothing (`--no-metrics`). With workers, the
 * worker that answers gathers every other worker's figures and adds them up (prom-client's
 * AggregatorRegistry: counters and histograms are summed, as are most gauges).
 *
 * The figures are read from what the engine counts in place on every call (engine/stats/), at
 * scrape time: the call path never touches prom-client.
 */
export function addMetricsRoute(app: TemplatedApp, engine: ManagementApi, connections: Connections, token: string | undefined, peers: Peers | undefined): void {
  app.get('/metrics', (res, req) => {
    const authorization = req.getHeader('authorization');
    const apiKey = req.getHeader('x-service-api-key');
    const state = connections.watch(res);
    const requestId = newRequestId();
    const answer = async (): Promise<string> => {
      if (!engine.countsMetrics) throw new ServiceError('ERR_NOT_FOUND', 'this server counts no metrics (it was started with --no-metrics)');
      if (isMetricsToken(authorization, token)) return render(engine, undefined, peers);
      if (apiKey) {
        const { accountId } = engine.identify(apiKey);
        engine.authorize(accountId, apiKey, 'admin');
        return render(engine, accountId, peers);
      }
      throw new ServiceError(
        'ERR_NO_KEY',
        "metrics need an account's admin key (X-Service-Api-Key: that account's functions) or the server's metrics token (Authorization: Bearer <token>: everything)",
      );
    };
    answer().then(
      (text) => writeResponse(res, state, 200, { 'content-type': loadProm().Registry.PROMETHEUS_CONTENT_TYPE }, text, false),
      (err: unknown) => {
        const response = errorResponse(err, requestId, 0);
        writeResponse(res, state, response.status, responseHeaders(response), response.body, false);
      },
    );
  });
}

type Prom = typeof import('prom-client');
let prom: Prom | undefined;
/** The registry of the process's own metrics (CPU, memory, event loop, GC), made on the first full scrape. */
let processRegistry: Registry | undefined;

function loadProm(): Prom {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return (prom ??= require('prom-client') as Prom);
}

interface Value {
  labels: Record<string, string>;
  value: number;
  /** A histogram's `_bucket`, `_sum` and `_count` lines. */
  metricName?: string;
}

/** A metric and its values, in prom-client's JSON shape (what workers send each other). */
export interface MetricJson {
  name: string;
  help: string;
  type: string;
  values: Value[];
  aggregator: string;
}

/** A metric whose values were computed at scrape time. `first`: the same in every process (not summed). */
function metric(name: string, help: string, type: 'counter' | 'gauge' | 'histogram', values: Value[], aggregator: 'sum' | 'first' = 'sum'): MetricJson {
  return { name, help, type, values, aggregator };
}

/** The `_bucket`, `_sum` and `_count` lines of a histogram of DURATION_BOUNDS_S (counts per bucket, their sum in µs). */
function histogram(values: Value[], name: string, labels: Record<string, string>, buckets: Float64Array, sumUs: number): void {
  let cumulative = 0;
  buckets.forEach((n, i) => {
    cumulative += n;
    values.push({ metricName: `${name}_bucket`, labels: { ...labels, le: i < DURATION_BOUNDS_S.length ? String(DURATION_BOUNDS_S[i]) : '+Inf' }, value: cumulative });
  });
  values.push({ metricName: `${name}_sum`, labels, value: sumUs / 1e6 });
  values.push({ metricName: `${name}_count`, labels, value: cumulative });
}

/** The text of a scrape: this process's figures, and the other workers' added to them. */
async function render(engine: ManagementApi, account: string | undefined, peers: Peers | undefined): Promise<string> {
  const { AggregatorRegistry, Registry } = loadProm();
  const own = await collectMetrics(engine, account);
  const others = peers ? (await peers.gather<MetricJson[]>('metrics', { account })).filter((m) => Array.isArray(m)) : [];
  if (others.length > 0) return AggregatorRegistry.aggregate([own, ...others] as never).metrics();
  const registry = new Registry();
  for (const m of own) registry.registerMetric({ ...m, get: () => Promise.resolve(m), reset: () => undefined } as never);
  return registry.metrics();
}

/** This process's figures: every function's (or one account's), and with no account the server's own and the process's. */
export async function collectMetrics(engine: ManagementApi, account: string | undefined): Promise<MetricJson[]> {
  const ours = (a: string) => account === undefined || a === account;
  const calls: Value[] = [];
  const errors: Value[] = [];
  const duration: Value[] = [];
  const firstByte: Value[] = [];
  const streamEnd: Value[] = [];
  const cold: Value[] = [];
  const inflight: Value[] = [];
  const warm: Value[] = [];
  const memory: Value[] = [];
  const traffic: Value[] = [];
  const counters = engine.counters();
  const warmByFunction = engine.warmByFunction();
  for (const stats of counters.functions) {
    if (!ours(stats.account)) continue;
    const labels = { account: stats.account, function: stats.name };
    stats.statuses.forEach((status, i) => calls.push({ labels: { ...labels, code: String(status) }, value: stats.statusCounts[i]! }));
    stats.codes.forEach((n, i) => n > 0 && errors.push({ labels: { ...labels, error_code: ERROR_CODES[i]! }, value: n }));
    histogram(duration, 'islet_function_duration_seconds', labels, stats.buckets, stats.durationSumUs);
    if (stats.stream) {
      histogram(firstByte, 'islet_function_stream_first_byte_seconds', labels, stats.stream.firstByte, stats.stream.firstByteSumUs);
      histogram(streamEnd, 'islet_function_stream_end_seconds', labels, stats.stream.end, stats.stream.endSumUs);
    }
    cold.push({ labels, value: stats.coldStarts });
    inflight.push({ labels, value: stats.inflight });
    const pooled = warmByFunction.get(`${stats.account}/${stats.name}`);
    warm.push({ labels, value: pooled?.instances ?? 0 });
    memory.push({ labels, value: Math.round((pooled?.mb ?? 0) * 1024 * 1024) });
  }
  for (const record of counters.splits) {
    if (!ours(record.account)) continue;
    for (const share of record.traffic) traffic.push({ labels: { account: record.account, function: record.name, version: String(share.version) }, value: share.percent });
  }
  const perFunction = [
    metric('islet_function_calls_total', 'Calls answered, by HTTP status (refused ones included).', 'counter', calls),
    metric('islet_function_errors_total', 'Calls answered with an error, by error code.', 'counter', errors),
    metric('islet_function_duration_seconds', "Time from a call's admission to its answer (cold start and queueing included).", 'histogram', duration),
    metric('islet_function_stream_first_byte_seconds', "Streamed answers: time from the handler's start to the first byte.", 'histogram', firstByte),
    metric('islet_function_stream_end_seconds', "Streamed answers: time from the handler's start to the stream's end (its last byte, its failure or its client's leaving).", 'histogram', streamEnd),
    metric('islet_function_cold_starts_total', 'Instances started for calls.', 'counter', cold),
    metric('islet_function_calls_in_flight', 'Calls admitted and not yet answered.', 'gauge', inflight),
    metric('islet_function_warm_instances', 'Warm instances of the function (all its versions).', 'gauge', warm),
    metric('islet_function_warm_memory_bytes', 'Estimated memory held by those warm instances.', 'gauge', memory),
    metric('islet_function_traffic_percent', 'Share of the calls each serving version gets.', 'gauge', traffic, 'first'),
  ];
  if (account !== undefined) return perFunction;

  const stats = engine.stats();
  const server = [
    metric(
      'islet_egress_requests_total',
      "Functions' outbound fetches, by outcome.",
      'counter',
      Object.entries(counters.egress).map(([outcome, value]) => ({ labels: { outcome }, value })),
    ),
    metric('islet_log_lines_dropped_total', 'Function log lines dropped (bursts over what a log file keeps, or a backlog when the disk fell behind).', 'counter', [
      { labels: {}, value: counters.droppedLogLines },
    ]),
    metric(
      'islet_background_errors_total',
      "Failures of work no caller waits on (the catalog's refresh, key-use writes, heartbeats, log writes…), by task; each is in the server's log.",
      'counter',
      backgroundErrorCounts().map(([task, value]) => ({ labels: { task }, value })),
    ),
    metric('islet_catastrophic_oom_total', 'Fatal out-of-memory events of isolates (restart the process when it grows).', 'counter', [{ labels: {}, value: stats.catastrophicOutOfMemory }]),
    metric('islet_warm_instances', 'Warm instances, all functions.', 'gauge', [{ labels: {}, value: stats.warm }]),
    metric('islet_warm_memory_bytes', 'Estimated memory held by warm instances, all functions.', 'gauge', [{ labels: {}, value: Math.round(stats.warmMb * 1024 * 1024) }]),
    metric('islet_accounts', 'Accounts.', 'gauge', [{ labels: {}, value: stats.accounts }], 'first'),
    metric('islet_functions', 'Deployed functions.', 'gauge', [{ labels: {}, value: stats.functions }], 'first'),
  ];
  if (!processRegistry) {
    processRegistry = new (loadProm().Registry)();
    loadProm().collectDefaultMetrics({ register: processRegistry });
  }
  return [...perFunction, ...server, ...((await processRegistry.getMetricsAsJSON()) as unknown as MetricJson[])];
}
