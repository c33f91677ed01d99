import type { HttpResponse, TemplatedApp } from '@trufflesuite/uws-js-unofficial';
import type { LogEntry, LogFollowing, ManagementApi, OtherNodesFollowing } from '../engine/api';
import { clientError, errorResponse, responseHeaders } from '../engine/error-answer';
import { ServiceError } from '../engine/errors';
import { newRequestId } from '../engine/request-id';
import { readHeaders } from './body';
import { type Connections, writeHead, writeResponse, type ResponseState } from './respond';
import { routeNames } from './route-names';

/** How often the log files are looked at for new lines (they are written every 250 ms). */
const POLL_MS = 400;
/** How often other nodes (several nodes on PostgreSQL) are asked for their new lines, over HTTP. */
const OTHER_NODES_MS = 2_000;
/**
 * A comment line is sent after this long without any (uWS closes a connection that has written
 * nothing for 10 s), and the key and the function are checked again, so that a revoked key or a
 * removed function ends the stream.
 */
const HEARTBEAT_MS = 5_000;
const DEFAULT_BACKLOG = 100;
const MAX_BACKLOG = 1_000;
/** Streams open at once in this process: each holds a connection, a timer and a cursor per log file. */
const MAX_STREAMS = 256;
/** Both ports' streams (the function port's and the console's). */
let open = 0;

/** Checks that `key` may read the logs of `account`'s function `name` (throws a ServiceError when not). */
export type LogsAccess = (account: string, name: string, key: string | undefined) => void;

/**
 * The logs route's check: an admin key of the account (the engine's admission, as the management
 * API's log route), for a function that exists.
 */
export function logsAccess(engine: ManagementApi): LogsAccess {
  return (account, name, key) => {
    engine.authorize(account, key, 'admin');
    if (!engine.describe(account, name)) throw new ServiceError('ERR_NO_SUCH_FUNCTION', `no function ${name} in account ${account}`);
  };
}

/**
 * GET /v2/accounts/<account>/functions/<name>/logs/live: a function's logs as Server-Sent Events,
 * with the same key check as the management API. The newest `backlog` lines (default 100; at or
 * after `since`, ms, when given) come first, then every line as it is written, each as
 * `event: log` with a log entry as JSON. `event: dropped` (`{count}`) says how many lines were
 * left out while the client read too slowly (`count` null: lines were written faster than they
 * could be followed, over 1 MB between two reads); `event: end` (with `{errorCode, message}`) closes the stream when
 * the key stops being valid or the function is removed. With several nodes, the other nodes' lines
 * are asked for every 2 s and merged in. Browsers read it with fetch (which can
 * send the key header), not EventSource (which cannot).
 */
export function addLiveLogsRoute(app: TemplatedApp, engine: ManagementApi, connections: Connections, access: LogsAccess): void {
  const route = '/v2/accounts/:account/functions/:function/logs/live';
  const readNames = routeNames(route);
  app.get(route, (res, req) => {
    const names = readNames(req);
    const { account, name } = names;
    const key = readHeaders(req)['x-service-api-key'];
    const query = new URLSearchParams(req.getQuery() ?? '');
    const state: ResponseState = { aborted: false, connections };
    let stream: LiveStream | undefined;
    res.onAborted(() => {
      state.aborted = true;
      stream?.stop();
    });
    const refuse = (err: unknown) => {
      const response = errorResponse(err, newRequestId(), 0);
      writeResponse(res, state, response.status, responseHeaders(response), response.body, false);
    };
    try {
      names.check();
      access(account, name, key);
      if (open >= MAX_STREAMS) throw new ServiceError('ERR_OVERLOADED', `this server already streams ${MAX_STREAMS} live logs; try again later`);
    } catch (err) {
      return refuse(err);
    }
    const backlog = clampInt(query.get('backlog'), DEFAULT_BACKLOG, 0, MAX_BACKLOG);
    const sinceText = query.get('since');
    const since = sinceText === null || !Number.isFinite(Number(sinceText)) ? undefined : Number(sinceText);
    open++;
    const { own, others } = engine.followLogs(account, name, key);
    stream = new LiveStream(
      res,
      state,
      own,
      others,
      () => access(account, name, key),
      () => open--,
    );
    stream.begin(backlog, since).catch((err: unknown) => {
      stream!.stop();
      refuse(err);
    });
  });
}

class LiveStream {
  private timer: NodeJS.Timeout | undefined;
  private reading = false;
  private lastWrite = Date.now();
  private lastCheck = Date.now();
  private othersReadAt = Date.now();
  /** The socket's buffer is full: lines are counted, not written, until it drains. */
  private backedUp = false;
  private dropped = 0;
  /** Lines went by unread (see LogFollower.read). */
  private gap = false;
  private stopped = false;

  constructor(
    private readonly res: HttpResponse,
    private readonly state: ResponseState,
    private readonly follower: LogFollowing,
    /** The other nodes' lines, with several nodes. */
    private readonly others: OtherNodesFollowing | undefined,
    /** Throws when the key may no longer read these logs (or the function is gone). */
    private readonly recheck: () => void,
    private readonly onStop: () => void,
  ) {}

  async begin(backlog: number, since: number | undefined): Promise<void> {
    const startedAt = Date.now();
    const [own, others] = await Promise.all([this.follower.start(backlog, since), this.others?.start(startedAt, backlog, since) ?? []]);
    const entries = others.length === 0 ? own : [...own, ...others].sort((a, b) => a.t - b.t).slice(-backlog);
    if (this.state.aborted) return;
    this.res.cork(() => {
      writeHead(this.res, 200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-store',
        'x-accel-buffering': 'no',
        'X-Service-Request-ID': newRequestId(),
      });
      this.res.write(`: islet live logs\n\n${events(entries)}`);
    });
    this.timer = setInterval(() => void this.tick(), POLL_MS);
  }

  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    clearInterval(this.timer);
    this.onStop();
  }

  private async tick(): Promise<void> {
    if (this.reading || this.stopped) return;
    this.reading = true;
    try {
      const now = Date.now();
      if (this.state.connections.closing) return this.end();
      if (now - this.lastCheck >= HEARTBEAT_MS) {
        this.lastCheck = now;
        try {
          this.recheck();
        } catch (err) {
          const error = clientError(err, newRequestId());
          return this.end(`event: end\ndata: ${JSON.stringify({ errorCode: error.code, message: error.message })}\n\n`);
        }
      }
      const { entries, gap } = await this.follower.read();
      if (this.others && now - this.othersReadAt >= OTHER_NODES_MS) {
        this.othersReadAt = now;
        const others = await this.others.next();
        if (others.length > 0) entries.push(...others), entries.sort((a, b) => a.t - b.t);
      }
      if (this.stopped) return;
      if (gap) this.gap = true;
      if (this.backedUp) {
        this.dropped += entries.length;
        return;
      }
      let text = events(entries);
      if (this.dropped > 0 || this.gap) {
        // `count` is null when lines went by unseen (the files rotated faster than they were read).
        text = `event: dropped\ndata: ${JSON.stringify({ count: this.gap ? null : this.dropped })}\n\n${text}`;
        this.dropped = 0;
        this.gap = false;
      }
      if (text === '' && now - this.lastWrite < HEARTBEAT_MS) return;
      this.write(text || ': ping\n\n');
    } catch {
      // A log file that cannot be read now may be readable at the next tick.
    } finally {
      this.reading = false;
    }
  }

  private write(text: string): void {
    this.lastWrite = Date.now();
    let ok = true;
    this.res.cork(() => (ok = this.res.write(text)));
    if (ok) return;
    // uWS keeps what it could not send; nothing more is written until the client has read it.
    this.backedUp = true;
    this.res.onWritable(() => {
      this.backedUp = false;
      return true;
    });
  }

  private end(last = ''): void {
    this.stop();
    if (this.state.aborted) return;
    // The last event is written as a chunk of its own: end(data, true) after write() sent the
    // data unframed, which clients read as a broken chunked body (uWS 20.30).
    this.res.cork(() => {
      if (last) this.res.write(last);
      this.res.end();
    });
  }
}

function events(entries: LogEntry[]): string {
  let text = '';
  for (const entry of entries) text += `event: log\ndata: ${JSON.stringify(entry)}\n\n`;
  return text;
}

function clampInt(text: string | null, fallback: number, min: number, max: number): number {
  const n = text === null ? fallback : Math.floor(Number(text));
  return Number.isFinite(n) ? Math.max(min, Math.min(max, n)) : fallback;
}
