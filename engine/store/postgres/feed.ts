import { Client } from 'pg';
import type { StoreChange } from '../store';
import { JOBS_CHANNEL } from './jobs';
import { serverLog } from '../../server-log';

export const CHANNEL = 'islet_changes';
const RECONNECT_FIRST_MS = 200;
const RECONNECT_MAX_MS = 5_000;

/**
 * The change feed of the PostgreSQL store: one connection that LISTENs for the changes every node
 * NOTIFYs in its write transactions (delivered on commit). When the connection drops, the store is
 * unavailable until it is back; on every reconnect, and every `resyncMs`, the feed asks for a full
 * reload, so that a notification missed meanwhile cannot leave a node stale.
 */
export class ChangeFeed {
  private client: Client | undefined;
  private connected = false;
  private closed = false;
  private delay = RECONNECT_FIRST_MS;
  private retry: NodeJS.Timeout | undefined;
  private readonly resync: NodeJS.Timeout;
  /** The last connection error, for messages. */
  lastError = '';

  constructor(
    private readonly url: string,
    private readonly onChange: (change: StoreChange) => void,
    resyncMs: number,
    /** Another node queued an asynchronous invocation (JOBS_CHANNEL). */
    private readonly onJobs: () => void = () => undefined,
  ) {
    this.resync = setInterval(() => {
      if (this.connected) this.onChange({ kind: 'all' });
    }, resyncMs).unref();
  }

  get available(): boolean {
    return this.connected;
  }

  /** Connects (resolves once listening, or rejects with the first failure; it keeps retrying after). */
  async start(): Promise<void> {
    await this.connect(false);
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.resync);
    clearTimeout(this.retry);
    const client = this.client;
    this.client = undefined;
    this.connected = false;
    // Benign: closing a connection that may be broken already.
    await client?.end().catch(() => undefined);
  }

  private async connect(resync: boolean): Promise<void> {
    const client = new Client({ connectionString: this.url, keepAlive: true, connectionTimeoutMillis: 5_000 });
    client.on('notification', (message) => {
      if (message.channel === JOBS_CHANNEL) return this.onJobs();
      if (message.channel !== CHANNEL || !message.payload) return;
      try {
        this.onChange(JSON.parse(message.payload) as StoreChange);
      } catch {
        // not ours
      }
    });
    client.on('error', (err) => this.lost(client, err));
    client.on('end', () => this.lost(client, new Error('the connection ended')));
    try {
      await client.connect();
      await client.query(`LISTEN ${CHANNEL}`);
      await client.query(`LISTEN ${JOBS_CHANNEL}`);
    } catch (err) {
      // Benign: the connection failed; its error is the one kept and thrown.
      await client.end().catch(() => undefined);
      this.lastError = (err as Error).message;
      if (!resync) throw err;
      this.schedule();
      return;
    }
    if (this.closed) {
      // Benign: closed while connecting; this connection is not needed.
      await client.end().catch(() => undefined);
      return;
    }
    this.client = client;
    this.connected = true;
    this.delay = RECONNECT_FIRST_MS;
    if (resync) this.onChange({ kind: 'all' });
  }

  private lost(client: Client, err: Error): void {
    if (this.client !== client) return;
    this.client = undefined;
    this.connected = false;
    this.lastError = err.message;
    serverLog.warn({ code: 'ERR_STORE_UNAVAILABLE', err }, `the store's change feed lost its connection (${err.message}); reconnecting, then reading everything again`);
    // Benign: the connection is lost already.
    void client.end().catch(() => undefined);
    this.schedule();
  }

  private schedule(): void {
    if (this.closed) return;
    clearTimeout(this.retry);
    this.retry = setTimeout(() => void this.connect(true), this.delay);
    this.retry.unref();
    this.delay = Math.min(RECONNECT_MAX_MS, this.delay * 2);
  }
}
