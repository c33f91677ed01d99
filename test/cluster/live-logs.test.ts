import { createParser, type EventSourceMessage } from 'eventsource-parser';
import t from 'tap';
import { startSupervised, type Supervised } from '../helpers/supervised';

// The live logs route (Server-Sent Events) under `islet serve` with two workers: lines written by
// calls that either worker answered all arrive on one stream, and the stream ends when the
// function is removed.

let s: Supervised;
t.before(async () => {
  s = await startSupervised(['--workers', '2']);
  const res = await s.deploy('shout', `exports.handler = (body, context) => { console.log('line ' + context.request.query.n); return 'ok'; };`);
  if (res.status !== 201) throw new Error(`deploy: ${res.status} ${await res.text()}`);
});
t.teardown(() => s.crash());

/** Opens the stream and collects its events until `until` holds for them (or `ms` pass). */
async function follow(query: string, until: (events: EventSourceMessage[]) => boolean, ms: number, during?: () => Promise<void>): Promise<EventSourceMessage[]> {
  const abort = new AbortController();
  const res = await fetch(`${s.url}/v2/accounts/${s.accountId}/functions/shout/logs/live${query}`, { headers: { 'X-Service-Api-Key': s.apiKey }, signal: abort.signal });
  t.equal(res.status, 200);
  t.match(res.headers.get('content-type'), /^text\/event-stream/);
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  const events: EventSourceMessage[] = [];
  const parser = createParser({ onEvent: (e) => events.push(e) });
  const timer = setTimeout(() => abort.abort(), ms);
  const work = during?.();
  try {
    while (!until(events)) {
      const { value, done } = await reader.read();
      if (done) break;
      parser.feed(value);
    }
  } catch {
    // aborted at the time limit
  } finally {
    clearTimeout(timer);
    abort.abort();
  }
  await work;
  return events;
}

const lines = (events: EventSourceMessage[]) =>
  events
    .filter((e) => e.event === 'log')
    .map((e) => (JSON.parse(e.data) as { message: string }).message)
    .filter((m) => m.startsWith('line '));

t.test('lines written in either worker arrive on one stream', async (t) => {
  const pids = new Set<number>();
  const events = await follow(
    '?backlog=0',
    (events) => lines(events).length >= 20,
    20_000,
    async () => {
      await new Promise((r) => setTimeout(r, 300));
      // Each call on a connection of its own, so that both workers take some.
      for (let n = 0; n < 20; n++) {
        const answer = await s.callOnFreshConnection(`shout?n=${n}`);
        t.equal(answer.status, 200);
        pids.add(answer.pid);
      }
    },
  );
  t.equal(pids.size, 2, 'both workers answered calls');
  t.same(lines(events).sort(), Array.from({ length: 20 }, (_, n) => `line ${n}`).sort(), 'every line, once');
});

t.test('the backlog comes first; the stream ends when the function is removed', async (t) => {
  const events = await follow(
    '?backlog=5',
    (events) => events.some((e) => e.event === 'end'),
    15_000,
    async () => {
      await new Promise((r) => setTimeout(r, 300));
      await fetch(`${s.url}/v2/accounts/${s.accountId}/functions/shout`, { method: 'DELETE', headers: { 'X-Service-Api-Key': s.apiKey } });
    },
  );
  t.equal(events.filter((e) => e.event === 'log').length, 5, 'the 5 newest lines');
  const end = events.find((e) => e.event === 'end');
  t.match(JSON.parse(end?.data ?? '{}'), { errorCode: 'ERR_NO_SUCH_FUNCTION' });
});
