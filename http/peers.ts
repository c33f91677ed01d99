import type { ManagementApi } from '../engine/api';
import type { PeerStats } from './management/stats';
import { collectMetrics, type MetricJson } from './metrics';

/**
 * The other processes serving the same port (the supervisor's workers): each counts the calls it
 * served, so a figure of the whole server is the sum of every process's. `gather` asks all the
 * others and resolves with their answers (this process's own is not among them).
 */
export interface Peers {
  gather<T>(op: PeerOp, body: PeerQuery): Promise<T[]>;
}

export type PeerOp = 'metrics' | 'stats';

export interface PeerQuery {
  /** The account whose figures (all accounts when absent: the operator's scrape). */
  account?: string;
  name?: string;
  windowSec?: number;
}

/** What this process answers when a peer gathers figures: its metrics, or its part of a function's figures. */
export function localFigures(engine: ManagementApi, op: PeerOp, query: PeerQuery): Promise<MetricJson[]> | PeerStats | undefined {
  if (op === 'metrics') return collectMetrics(engine, query.account);
  if (query.account === undefined || query.name === undefined || query.windowSec === undefined) return undefined;
  return engine.recentFigures(query.account, query.name, query.windowSec);
}
