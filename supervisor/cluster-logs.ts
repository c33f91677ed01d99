import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import * as path from 'node:path';
import type { LogEntry, LogQuery, LogReader, LogStore } from '../engine/logs';
import type { NodeDirectory } from '../engine/store/store';
import { backgroundFailed, serverLog } from '../engine/server-log';

const HEARTBEAT_MS = 10_000;
/** A node not seen for this long is left out of reads. */
const ALIVE_MS = 3 * HEARTBEAT_MS;
const PEER_TIMEOUT_MS = 3_000;

/** How other nodes reach this one by default: its address, or its host name when it listens on all addresses. */
export function advertisedUrl(host: string, port: number): string {
  const name = host === '0.0.0.0' || host === '::' ? hostname() : host;
  return `http://${name.includes(':') ? `[${name}]` : name}:${port}`;
}

/** This node's id: made once per data directory, so a restarted node keeps its lines' tag. */
export function nodeId(dataDir: string): string {
  const file = path.join(dataDir, 'node-id');
  try {
    return readFileSync(file, 'utf8').trim();
  } catch {
    mkdirSync(dataDir, { recursive: true });
    const id = `node-${randomBytes(3).toString('hex')}`;
    writeFileSync(file, `${id}\n`, { flag: 'wx' });
    return readFileSync(file, 'utf8').trim();
  }
}

/**
 * Logs across nodes: every node keeps its own lines on its own disk (the call path never waits on
 * the database), and a read through any node asks every other live node for its lines (over HTTP,
 * with the caller's key, `?local=1`) and merges them by time, each tagged with its node. A node
 * that does not answer is left out of that read.
 */
export class ClusterLogs implements LogReader {
  private heartbeat: NodeJS.Timeout | undefined;

  constructor(
    private readonly local: LogStore,
    private readonly id: string,
    private readonly nodes: NodeDirectory,
  ) {}

  /** Registers this node, reachable at `url`, now and every 10 s. */
  start(url: string): void {
    // Other nodes leave out of their reads a node not seen for 30 s: three beats in a row failed.
    const beat = () => void this.nodes.registerNode(this.id, url).catch((err: unknown) => backgroundFailed('node-heartbeat', err, `node ${this.id} could not say it is alive`));
    beat();
    this.heartbeat = setInterval(beat, HEARTBEAT_MS);
    this.heartbeat.unref();
  }

  stop(): void {
    clearInterval(this.heartbeat);
  }

  async read(account: string, name: string, query: LogQuery, apiKey?: string): Promise<LogEntry[]> {
    const lists = await Promise.all([this.local.read(account, name, query).then((entries) => tag(entries, this.id)), this.readOthers(account, name, query, apiKey)]);
    return newest(lists.flat(), query.limit);
  }

  async readOthers(account: string, name: string, query: LogQuery, apiKey?: string): Promise<LogEntry[]> {
    const peers = await this.nodes.liveNodes(ALIVE_MS).catch((err: unknown) => {
      backgroundFailed('node-list', err, "the live nodes could not be listed: a read of logs has this node's lines only");
      return [];
    });
    const lists = await Promise.all(peers.filter((p) => p.id !== this.id).map((peer) => this.readPeer(peer, account, name, query, apiKey)));
    return newest(lists.flat(), query.limit);
  }

  private async readPeer(peer: { id: string; url: string }, account: string, name: string, query: LogQuery, apiKey?: string): Promise<LogEntry[]> {
    const params = new URLSearchParams({ local: '1' });
    if (query.since !== undefined) params.set('since', String(query.since));
    if (query.limit !== undefined) params.set('limit', String(query.limit));
    if (query.level !== undefined) params.set('level', query.level);
    try {
      const res = await fetch(`${peer.url}/v2/accounts/${account}/functions/${encodeURIComponent(name)}/logs?${params}`, {
        headers: apiKey ? { 'X-Service-Api-Key': apiKey } : {},
        signal: AbortSignal.timeout(PEER_TIMEOUT_MS),
      });
      if (!res.ok) return [];
      return tag(((await res.json()) as { entries: LogEntry[] }).entries, peer.id);
    } catch (err) {
      // As documented: a node that does not answer is left out of the read.
      serverLog.debug({ peer: peer.id, err }, `node ${peer.id} did not answer a read of logs`);
      return [];
    }
  }
}

/** Merged by time, the newest `limit`. */
function newest(entries: LogEntry[], limit: number | undefined): LogEntry[] {
  entries.sort((a, b) => a.t - b.t);
  return limit !== undefined ? entries.slice(-limit) : entries;
}

function tag(entries: LogEntry[], node: string): LogEntry[] {
  for (const entry of entries) entry.node = node;
  return entries;
}
