import { createServer, type Server } from 'node:http';

/** One request a function made to the collector: its query, as a map. */
export type Hit = Record<string, string>;

/**
 * An HTTP server in the test process that functions call (servers started with
 * --allow-private-egress) to say they ran: what runs where cannot hide behind a node's logs.
 */
export interface Collector {
  url: string;
  hits: Hit[];
  close(): Promise<void>;
}

export function startCollector(): Promise<Collector> {
  const hits: Hit[] = [];
  const server: Server = createServer((req, res) => {
    hits.push(Object.fromEntries(new URL(req.url ?? '/', 'http://collector').searchParams));
    res.end('ok');
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      resolve({
        url: `http://127.0.0.1:${port}/hit`,
        hits,
        close: () => new Promise<void>((done) => server.close(() => done())),
      });
    });
  });
}

/**
 * Checks that the ticks `times` (ms) ran each exactly once, every `periodMs`, with none missing
 * between the first and the last (`allowMissing` gaps of one tick forgiven); answers what is wrong.
 */
export function tickProblems(times: number[], periodMs: number, allowMissing = 0): string[] {
  const problems: string[] = [];
  const counts = new Map<number, number>();
  for (const time of times) counts.set(time, (counts.get(time) ?? 0) + 1);
  for (const [time, n] of counts) {
    if (n !== 1) problems.push(`tick ${new Date(time).toISOString()} ran ${n} times`);
    if (time % periodMs !== 0) problems.push(`tick ${time} is not on the schedule`);
  }
  const sorted = [...counts.keys()].sort((a, b) => a - b);
  let missing = 0;
  for (let i = 1; i < sorted.length; i++) {
    const gap = (sorted[i]! - sorted[i - 1]!) / periodMs - 1;
    if (gap > 0) missing += gap;
  }
  if (missing > allowMissing) problems.push(`${missing} ticks missing between ${new Date(sorted[0]!).toISOString()} and ${new Date(sorted[sorted.length - 1]!).toISOString()}`);
  return problems;
}
