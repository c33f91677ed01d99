import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import t from 'tap';
import { LogFollower } from '../../engine/log-follow';
import { OtherNodesFollower } from '../../engine/log-follow-nodes';
import type { LogEntry } from '../../engine/logs';
import { LogStore } from '../../engine/logs';
import { removeDir } from '../helpers/server';

// Following a function's log files as they are written (the console's live logs).

function entry(n: number, message = `line ${n}`) {
  return { t: 1_700_000_000_000 + n, requestId: `r${n}`, level: 'log', message };
}

t.test('a follower gets the backlog, then only new lines, across a rotation, without gaps or repeats', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'islet-follow-'));
  t.teardown(() => removeDir(dir));
  const logs = new LogStore(dir);
  for (let n = 0; n < 30; n++) logs.append('acct', 'fn', entry(n));
  await logs.flush();
  const follower = new LogFollower(() => logs.filesOf('acct', 'fn'));
  const backlog = await follower.start(10);
  t.same(
    backlog.map((e) => e.message),
    Array.from({ length: 10 }, (_, i) => `line ${20 + i}`),
    'the newest 10 lines',
  );
  t.same(await follower.read(), { entries: [], gap: false }, 'nothing new yet');

  // About 3 MB in batches of 200 KB: the file rotates (at 1 MB) several times between reads.
  const pad = 'x'.repeat(1000);
  let next = 30;
  const seen: number[] = [];
  for (let batch = 0; batch < 15; batch++) {
    for (let i = 0; i < 200; i++, next++) logs.append('acct', 'fn', entry(next, `line ${next} ${pad}`));
    await logs.flush();
    if (batch % 4 === 3) continue; // two flushes between some reads: a rotation falls between them
    const { entries, gap } = await follower.read();
    t.notOk(gap, 'no gap: at most one rotation between reads');
    for (const e of entries) seen.push(Number(e.message.split(' ')[1]));
  }
  for (const e of (await follower.read()).entries) seen.push(Number(e.message.split(' ')[1]));
  t.equal(seen.length, next - 30, 'every line once');
  t.same(
    seen,
    Array.from({ length: next - 30 }, (_, i) => 30 + i),
    'in order',
  );

  // Over 2 MB between two reads: the file rotated twice, and the follower says it missed lines.
  for (let batch = 0; batch < 12; batch++) {
    for (let i = 0; i < 200; i++, next++) logs.append('acct', 'fn', entry(next, `line ${next} ${pad}`));
    await logs.flush();
  }
  const after = await follower.read();
  t.ok(after.gap, 'a gap is reported');
  t.equal(after.entries.at(-1)?.message.split(' ')[1], String(next - 1), 'and the newest lines still come');
});

t.test('a follower interleaves the files of several writers by time, and can start from a time', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'islet-follow-'));
  t.teardown(() => removeDir(dir));
  const a = new LogStore(dir, { writer: 0 });
  const b = new LogStore(dir, { writer: 1 });
  a.append('acct', 'fn', entry(1));
  b.append('acct', 'fn', entry(2));
  await Promise.all([a.flush(), b.flush()]);
  const follower = new LogFollower(() => a.filesOf('acct', 'fn'));
  t.same(
    (await follower.start(100, entry(2).t)).map((e) => e.message),
    ['line 2'],
    'since: lines at or after a time',
  );
  b.append('acct', 'fn', entry(4));
  a.append('acct', 'fn', entry(3));
  await Promise.all([a.flush(), b.flush()]);
  t.same(
    (await follower.read()).entries.map((e) => e.message),
    ['line 3', 'line 4'],
  );
});

t.test("other nodes' lines: the backlog, then each new line once, late ones included, none from before the start", async (t) => {
  const base = 1_700_000_000_000;
  const at = (ms: number, message: string): LogEntry => ({ t: base + ms, requestId: message, level: 'log', message, node: 'node-b' });
  const written: LogEntry[] = [at(-5_000, 'old'), at(-100, 'just before')];
  const asked: number[] = [];
  const follower = new OtherNodesFollower(async (since, limit) => {
    asked.push(since);
    return written.filter((e) => e.t >= since).slice(-limit);
  });
  const names = (entries: LogEntry[]) => entries.map((e) => e.message);
  t.same(names(await follower.start(base, 1)), ['just before'], 'the newest line of the backlog');
  written.push(at(500, 'first'));
  t.same(names(await follower.next()), ['first']);
  t.same(names(await follower.next()), [], 'nothing twice');
  written.push(at(300, 'late'), at(900, 'second'));
  t.same(names(await follower.next()), ['late', 'second'], 'a line written late, with an older time than one already passed on, still comes');
  t.ok(asked.at(-1)! < base + 500, 'each read reaches back before the newest line seen');
});
