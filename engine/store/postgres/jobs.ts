import type { PoolClient } from 'pg';
import { isInvocationId, type InvocationRecord, type InvocationStatus, type JobStore, type Tick, type TickState } from '../../jobs/records';
import { queueFull } from '../quota';

/** What the jobs need of the store: its queries and transactions, with its error mapping. */
export interface JobsDb {
  query<R extends object>(sql: string, params?: unknown[]): Promise<{ rows: R[] }>;
  transaction<T>(work: (db: PoolClient) => Promise<T>): Promise<T>;
}

/** The channel an enqueue NOTIFYs on, so that every node's runners look for work at once. */
export const JOBS_CHANNEL = 'islet_jobs';
/** A running invocation whose runner has not settled it by then is queued again (a last resort: the node's death or its worker's is seen sooner). */
const LEASE = "interval '15 minutes'";
/** A node whose heartbeat is older than this is dead: what it was running is queued again. */
const NODE_DEAD = "interval '30 seconds'";

interface InvocationRow {
  id: string;
  account_id: string;
  function_name: string;
  status: InvocationStatus;
  attempts: number;
  run_at: Date;
  created_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
  request_id: string | null;
  request: InvocationRecord['request'];
  body?: Buffer;
  result: InvocationRecord['result'] | null;
  error: InvocationRecord['error'] | null;
}

const COLUMNS = 'id, account_id, function_name, status, attempts, run_at, created_at, started_at, finished_at, request_id, request, result, error';

/**
 * Due invocations for one runner, in one statement. The accounts that have some are found with a
 * skip scan of the queued index (one index probe per account, however long a backlog), then each
 * gives at most `perAccount` rows, locked with SKIP LOCKED so that runners on every node take
 * different ones without waiting for each other, and `limit` of those are taken at random, so an
 * account with a long backlog gets no more turns than one with a single invocation.
 */
const CLAIM_SQL = `
  WITH RECURSIVE accounts AS (
    (SELECT account_id FROM islet_invocations WHERE status = 'queued' AND run_at <= now() ORDER BY account_id LIMIT 1)
    UNION ALL
    SELECT (SELECT i.account_id FROM islet_invocations i WHERE i.status = 'queued' AND i.run_at <= now() AND i.account_id > a.account_id ORDER BY i.account_id LIMIT 1)
    FROM accounts a WHERE a.account_id IS NOT NULL
  ), picked AS (
    SELECT p.id FROM accounts a CROSS JOIN LATERAL (
      SELECT i.id FROM islet_invocations i
      WHERE i.account_id = a.account_id AND i.status = 'queued' AND i.run_at <= now()
      ORDER BY i.run_at LIMIT $2 FOR UPDATE SKIP LOCKED) p
    WHERE a.account_id IS NOT NULL AND NOT (a.account_id = ANY($3::text[]))
    ORDER BY random() LIMIT $1
  )
  UPDATE islet_invocations SET status = 'running', attempts = attempts + 1, started_at = now(), owner = $4, lease_until = now() + ${LEASE}
  WHERE id IN (SELECT id FROM picked)
  RETURNING ${COLUMNS}, body`;

/**
 * The PostgreSQL store's queue and schedules: a table of invocations taken with FOR UPDATE SKIP
 * LOCKED, and a table of each schedule's last claimed tick, claimed with one INSERT … ON CONFLICT
 * whose update only moves forward (so two nodes claiming the same tick: one row comes back).
 */
export class PostgresJobs implements JobStore {
  private readonly listeners: (() => void)[] = [];

  constructor(
    private readonly db: JobsDb,
    /** This process as an owner of running invocations: `<node id>/<pid>`. */
    private readonly owner: string,
  ) {}

  /** Told by the change feed: another node queued work. */
  workArrived(): void {
    for (const listener of this.listeners) listener();
  }

  async enqueue(record: InvocationRecord, bound: number): Promise<void> {
    await this.db.transaction(async (db) => {
      // Enqueues of one account take turns, so that the count below cannot be passed by two at once.
      await db.query("SELECT pg_advisory_xact_lock(hashtext('islet_queue'), hashtext($1))", [record.account]);
      const { rows } = await db.query<{ n: string }>("SELECT count(*) AS n FROM islet_invocations WHERE account_id = $1 AND status IN ('queued', 'running')", [record.account]);
      if (Number(rows[0]!.n) >= bound) throw queueFull(record.account, bound);
      await db.query(
        `INSERT INTO islet_invocations (id, account_id, function_name, status, attempts, run_at, created_at, request, body)
         VALUES ($1, $2, $3, 'queued', 0, to_timestamp($4 / 1000.0), to_timestamp($5 / 1000.0), $6, $7)`,
        [record.id, record.account, record.function, record.runAt, record.createdAt, JSON.stringify(record.request), record.body],
      );
      await db.query('SELECT pg_notify($1, $2)', [JOBS_CHANNEL, record.account]);
    });
  }

  async claim(limit: number, perAccount: number, full: ReadonlySet<string>): Promise<InvocationRecord[]> {
    const { rows } = await this.db.query<InvocationRow>(CLAIM_SQL, [limit, perAccount, [...full], this.owner]);
    return rows.map(toRecord);
  }

  async settle(record: InvocationRecord): Promise<void> {
    const done = record.status === 'succeeded' || record.status === 'failed';
    await this.db.query(
      `UPDATE islet_invocations SET status = $2, run_at = to_timestamp($3 / 1000.0), finished_at = ${done ? 'now()' : 'NULL'},
         request_id = $4, result = $5, error = $6, owner = NULL, lease_until = NULL${done ? ", body = ''::bytea" : ''}
       WHERE id = $1`,
      [record.id, done ? record.status : 'queued', record.runAt, record.requestId ?? null, record.result ? JSON.stringify(record.result) : null, record.error ? JSON.stringify(record.error) : null],
    );
  }

  async read(account: string, id: string): Promise<InvocationRecord | undefined> {
    if (!isInvocationId(id)) return undefined;
    const { rows } = await this.db.query<InvocationRow>(`SELECT ${COLUMNS} FROM islet_invocations WHERE account_id = $1 AND id = $2`, [account, id]);
    return rows[0] && toRecord(rows[0]);
  }

  async list(account: string, fn: string, limit: number): Promise<InvocationRecord[]> {
    const { rows } = await this.db.query<InvocationRow>(`SELECT ${COLUMNS} FROM islet_invocations WHERE account_id = $1 AND function_name = $2 ORDER BY id DESC LIMIT $3`, [account, fn, limit]);
    return rows.map(toRecord);
  }

  async prune(keepMs: number): Promise<void> {
    await this.db.query("DELETE FROM islet_invocations WHERE status IN ('succeeded', 'failed') AND finished_at < now() - $1 * interval '1 millisecond'", [keepMs]);
  }

  async pending(account: string): Promise<number> {
    const { rows } = await this.db.query<{ n: string }>("SELECT count(*) AS n FROM islet_invocations WHERE account_id = $1 AND status IN ('queued', 'running')", [account]);
    return Number(rows[0]!.n);
  }

  onWork(listener: () => void): void {
    this.listeners.push(listener);
  }

  /**
   * Queues again what its runner will never settle: invocations of a node that stopped beating
   * (its heartbeat in islet_nodes older than 30 s), of a worker of this node that is gone (`alive`
   * says whether a pid of this machine lives), and any whose lease ran out. Each run again counts
   * as an attempt: the one cut short was counted when it was claimed.
   */
  async recover(): Promise<number> {
    const nodeId = this.owner.slice(0, this.owner.lastIndexOf('/'));
    const { rows } = await this.db.query<{ owner: string }>("SELECT DISTINCT owner FROM islet_invocations WHERE status = 'running' AND owner LIKE $1", [`${nodeId}/%`]);
    const gone = rows.map((r) => r.owner).filter((owner) => owner !== this.owner && !pidAlive(Number(owner.slice(nodeId.length + 1))));
    const requeued = await this.db.query<{ id: string }>(
      `UPDATE islet_invocations SET status = 'queued', run_at = now(), owner = NULL, lease_until = NULL
       WHERE status = 'running' AND (lease_until < now() OR owner = ANY($1::text[])
         OR split_part(owner, '/', 1) IN (SELECT id FROM islet_nodes WHERE seen_at < now() - ${NODE_DEAD}))
       RETURNING id`,
      [gone],
    );
    return requeued.rows.length;
  }

  async claimTick(tick: Tick, stillServing: () => boolean): Promise<boolean> {
    if (!stillServing()) return false;
    const { rows } = await this.db.query(
      `INSERT INTO islet_schedule_ticks (account_id, function_name, cron, scheduled_at, claimed_by)
       SELECT $1, $2, $3, $4, $6 WHERE EXISTS (
         SELECT 1 FROM islet_functions WHERE account_id = $1 AND name = $2 AND traffic @> jsonb_build_array(jsonb_build_object('version', $5::int)))
       ON CONFLICT (account_id, function_name, cron) DO UPDATE
         SET scheduled_at = EXCLUDED.scheduled_at, claimed_at = now(), claimed_by = EXCLUDED.claimed_by, finished_at = NULL, status = NULL, error_code = NULL
         WHERE islet_schedule_ticks.scheduled_at < EXCLUDED.scheduled_at
       RETURNING 1`,
      [tick.account, tick.function, tick.cron, tick.scheduledTime, tick.version, this.owner],
    );
    return rows.length === 1;
  }

  async tickDone(tick: Tick, status: number, errorCode: string | undefined): Promise<void> {
    await this.db.query('UPDATE islet_schedule_ticks SET finished_at = now(), status = $5, error_code = $6 WHERE account_id = $1 AND function_name = $2 AND cron = $3 AND scheduled_at = $4', [
      tick.account,
      tick.function,
      tick.cron,
      tick.scheduledTime,
      status,
      errorCode ?? null,
    ]);
  }

  async lastTicks(account: string): Promise<TickState[]> {
    const { rows } = await this.db.query<{ function_name: string; cron: string; scheduled_at: string; claimed_at: Date; finished_at: Date | null; status: number | null; error_code: string | null }>(
      'SELECT function_name, cron, scheduled_at, claimed_at, finished_at, status, error_code FROM islet_schedule_ticks WHERE account_id = $1',
      [account],
    );
    return rows.map((r) => ({
      function: r.function_name,
      cron: r.cron,
      scheduledTime: Number(r.scheduled_at),
      claimedAt: r.claimed_at.getTime(),
      ...(r.finished_at ? { finishedAt: r.finished_at.getTime() } : {}),
      ...(r.status !== null ? { status: r.status } : {}),
      ...(r.error_code ? { errorCode: r.error_code } : {}),
    }));
  }
}

/** Whether a process of this machine with that pid lives (a worker of this node that may still settle its runs). */
function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function toRecord(row: InvocationRow): InvocationRecord {
  const record: InvocationRecord = {
    id: row.id,
    account: row.account_id,
    function: row.function_name,
    status: row.status,
    attempts: row.attempts,
    createdAt: row.created_at.getTime(),
    runAt: row.run_at.getTime(),
    request: row.request,
    body: row.body ?? Buffer.alloc(0),
  };
  if (row.started_at) record.startedAt = row.started_at.getTime();
  if (row.finished_at) record.finishedAt = row.finished_at.getTime();
  if (row.request_id) record.requestId = row.request_id;
  if (row.result) record.result = row.result;
  if (row.error) record.error = row.error;
  return record;
}

export const JOBS_MIGRATION = `
  -- Asynchronous invocations (POST /v2/async/…): queued, running, then succeeded or failed.
  CREATE TABLE islet_invocations (
    id text PRIMARY KEY,
    account_id text NOT NULL REFERENCES islet_accounts (id) ON DELETE CASCADE,
    function_name text NOT NULL,
    status text NOT NULL CHECK (status IN ('queued', 'running', 'succeeded', 'failed')),
    attempts integer NOT NULL,
    run_at timestamptz NOT NULL,
    created_at timestamptz NOT NULL,
    started_at timestamptz,
    finished_at timestamptz,
    request_id text,
    request jsonb NOT NULL,
    body bytea NOT NULL,
    result jsonb,
    error jsonb,
    -- Who runs it: '<node id>/<pid>'.
    owner text,
    lease_until timestamptz
  );
  CREATE INDEX islet_invocations_due ON islet_invocations (account_id, run_at) WHERE status = 'queued';
  CREATE INDEX islet_invocations_running ON islet_invocations (owner) WHERE status = 'running';
  CREATE INDEX islet_invocations_function ON islet_invocations (account_id, function_name, id);
  CREATE INDEX islet_invocations_done ON islet_invocations (finished_at) WHERE status IN ('succeeded', 'failed');
  -- Each schedule's last claimed tick (ms since the epoch) and how its run ended.
  CREATE TABLE islet_schedule_ticks (
    account_id text NOT NULL,
    function_name text NOT NULL,
    cron text NOT NULL,
    scheduled_at bigint NOT NULL,
    claimed_at timestamptz NOT NULL DEFAULT now(),
    claimed_by text,
    finished_at timestamptz,
    status integer,
    error_code text,
    PRIMARY KEY (account_id, function_name, cron),
    FOREIGN KEY (account_id, function_name) REFERENCES islet_functions (account_id, name) ON DELETE CASCADE
  );
`;
