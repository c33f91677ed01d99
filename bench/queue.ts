/**
 * Scenario 16 of `npm run bench`: asynchronous invocations through the queue (POST /v2/async, then
 * the runner), accept to done, on a bench server (bench/server.ts) of either store.
 */
import { Pool } from 'undici';

export interface QueueResult {
  /** Invocations accepted per second (16 senders, each waiting for its 202). */
  acceptRps: number;
  /** Invocations done per second, from the first sent to the last finished. */
  doneRps: number;
  /** Answers other than 202, and invocations that did not succeed. */
  errors: number;
}

interface Listed {
  invocations: { invocationId: string; status: string; finishedAt?: string }[];
}

const SENDERS = 16;

/**
 * Queues `count` (at most 1000: one listing reads them all) calls of the server's `hello` and
 * waits for them to be done. The wait polls the record of the last one accepted (one account's
 * invocations run in the order they came), then reads the listing once: a poll of the whole list
 * would load the server it measures.
 */
export async function queueThroughput(server: { url: string; accountId: string; apiKey: string }, count: number): Promise<QueueResult> {
  const headers = { 'X-Service-Api-Key': server.apiKey };
  const pool = new Pool(server.url, { connections: SENDERS });
  let refused = 0;
  let sent = 0;
  let last = '';
  const started = Date.now();
  try {
    await Promise.all(
      Array.from({ length: SENDERS }, async () => {
        while (sent < count) {
          sent++;
          const res = await pool.request({ method: 'POST', path: `/v2/async/${server.accountId}/hello?name=abc`, headers: { ...headers, 'content-type': 'application/json' }, body: '{}' });
          const answer = (await res.body.json()) as { invocationId?: string };
          if (res.statusCode !== 202 || !answer.invocationId) refused++;
          else last = answer.invocationId;
        }
      }),
    );
    const accepted = Date.now();
    const read = async <T>(path: string): Promise<T> => (await (await pool.request({ method: 'GET', path, headers })).body.json()) as T;
    const deadline = accepted + 120_000;
    let list: Listed['invocations'] = [];
    for (;;) {
      const record = await read<{ status?: string }>(`/v2/accounts/${server.accountId}/invocations/${last}`);
      if (record.status === 'succeeded' || record.status === 'failed') {
        list = (await read<Listed>(`/v2/accounts/${server.accountId}/functions/hello/invocations?limit=1000`)).invocations;
        if (list.every((i) => i.status === 'succeeded' || i.status === 'failed')) break;
      }
      if (Date.now() > deadline) throw new Error(`the queue did not drain within 120 s (last record: ${JSON.stringify(record)})`);
      await new Promise((r) => setTimeout(r, 20));
    }
    const finished = Math.max(...list.map((i) => Date.parse(i.finishedAt ?? '') || 0));
    const unsuccessful = list.filter((i) => i.status !== 'succeeded').length;
    const missing = Math.max(0, count - refused - list.length);
    return { acceptRps: count / ((accepted - started) / 1000), doneRps: count / ((finished - started) / 1000), errors: refused + unsuccessful + missing };
  } finally {
    await pool.close();
  }
}

/** `<prefix>_accept_rps`, `_done_rps`, `_errors`. */
export function recordQueue(figures: Record<string, number>, prefix: string, r: QueueResult): void {
  figures[`${prefix}_accept_rps`] = r.acceptRps;
  figures[`${prefix}_done_rps`] = r.doneRps;
  figures[`${prefix}_errors`] = r.errors;
}
