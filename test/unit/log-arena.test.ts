import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import t from 'tap';
import { LogArena } from '../../engine/log-arena';
import { LogStore } from '../../engine/logs';

// The pending-log arena on its own: what each function's write gets, and what a burst drops;
// and the log store around it.

const text = (arena: LogArena) => new Map([...arena.drain()].map(([key, d]) => [key, { text: d.data.toString('utf8'), dropped: d.dropped }]));

t.test('lines come back per function, in order, UTF-8 intact', async (t) => {
  const arena = new LogArena(1024 * 1024, 1024 * 1024);
  arena.add(1, '{"a":1}');
  arena.add(2, '{"other":true}');
  arena.add(1, '{"b":"é ✓ 🙂"}');
  const out = text(arena);
  t.same(out.get(1), { text: '{"a":1}\n{"b":"é ✓ 🙂"}\n', dropped: 0 });
  t.same(out.get(2), { text: '{"other":true}\n', dropped: 0 });
  t.equal(arena.drain().size, 0, 'drained');
});

t.test('a function over its limit keeps its newest lines and counts the rest; others keep all of theirs', async (t) => {
  const perKey = 64 * 1024;
  const arena = new LogArena(8 * 1024 * 1024, perKey);
  const total = 5000;
  for (let i = 0; i < total; i++) {
    arena.add(7, JSON.stringify({ n: i, pad: 'x'.repeat(40) }));
    if (i % 100 === 0) arena.add(8, JSON.stringify({ quiet: i }));
  }
  const out = arena.drain();
  const noisy = out.get(7)!;
  const lines = noisy.data.toString('utf8').split('\n').filter(Boolean);
  t.ok(noisy.data.length <= perKey, 'within the limit');
  t.equal(JSON.parse(lines[lines.length - 1]!).n, total - 1, 'the newest line is kept');
  t.equal(JSON.parse(lines[0]!).n, noisy.dropped, 'the dropped ones are the oldest');
  t.equal(lines.length + noisy.dropped, total, 'every line is kept or counted');
  t.equal(out.get(8)!.dropped, 0);
  t.equal(out.get(8)!.data.toString('utf8').split('\n').filter(Boolean).length, 50);
});

t.test('the arena grows to its maximum, then refuses, and is reused after a drain', async (t) => {
  const arena = new LogArena(512 * 1024, 1024 * 1024);
  const line = JSON.stringify({ s: 'y'.repeat(1000) });
  let added = 0;
  while (arena.add(1, line)) added++;
  t.ok(added > 400 && added < 520, `about 512 KB of lines fit (${added})`);
  t.equal(text(arena).get(1)!.text.split('\n').filter(Boolean).length, added, 'all of them drained');
  t.ok(arena.add(1, '{"after":1}'), 'room again');
  t.same(text(arena).get(1), { text: '{"after":1}\n', dropped: 0 }, 'nothing of the earlier batch is left');
});

t.test('the log store writes again after its folder was removed', async (t) => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'islet-logs-'));
  const logs = new LogStore(dataDir);
  logs.append('acc', 'fn', { t: 1, requestId: 'a', level: 'info', message: 'first' });
  await logs.flush();
  rmSync(path.join(dataDir, 'logs'), { recursive: true, force: true });
  logs.append('acc', 'fn', { t: 2, requestId: 'b', level: 'info', message: 'second' });
  const entries = await logs.read('acc', 'fn');
  t.same(
    entries.map((e) => e.message),
    ['second'],
    'the line after the removal is kept',
  );
  rmSync(dataDir, { recursive: true, force: true });
});

t.test('one flush writes the lines of a thousand functions, several files at once', async (t) => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'islet-logs-'));
  const logs = new LogStore(dataDir);
  for (let i = 0; i < 1000; i++) logs.append('acc', `fn${i}`, { t: i, requestId: 'r', level: 'info', message: `line of fn${i}` });
  await logs.flush();
  const { readdirSync } = await import('node:fs');
  t.equal(readdirSync(path.join(dataDir, 'logs', 'acc')).length, 1000, 'a file per function');
  t.same(
    (await logs.read('acc', 'fn999')).map((e) => e.message),
    ['line of fn999'],
  );
  rmSync(dataDir, { recursive: true, force: true });
});

t.test('while a batch is written, flushes are one and a full arena drops new lines and counts them', async (t) => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'islet-logs-'));
  const logs = new LogStore(dataDir, { arenaBytes: 256 * 1024 });
  logs.append('acc', 'a', { t: 1, requestId: 'r', level: 'info', message: 'first' });
  const writing = logs.flush();
  // Microtasks only: the batch has started writing and no file operation can have finished yet.
  for (let i = 0; i < 5; i++) await null;
  const text = 'x'.repeat(10_000);
  for (let i = 0; i < 40; i++) logs.append('acc', 'b', { t: i, requestId: 'r', level: 'info', message: `${i} ${text}` });
  t.equal(logs.flush(), logs.flush(), 'flushes asked for during a write share one');
  await writing;
  const entries = await logs.read('acc', 'b');
  const kept = entries.filter((e) => e.level === 'info');
  t.ok(kept.length > 0 && kept.length < 40, `${kept.length} of 40 lines fit the arena`);
  t.same(
    kept.map((e) => e.t),
    Array.from({ length: kept.length }, (_, i) => i),
    'the oldest lines are kept, in order',
  );
  t.match(entries.at(-1)?.message, new RegExp(`^${40 - kept.length} log lines dropped`), "the drop is counted in the function's logs");
  t.same(
    (await logs.read('acc', 'a')).map((e) => e.message),
    ['first'],
  );
  rmSync(dataDir, { recursive: true, force: true });
});

t.test('several writers (workers) keep a file each; a read asks the others to write first and merges by time', async (t) => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'islet-logs-'));
  const writers: LogStore[] = [];
  const flushOthers = (mine: number) => () => Promise.all(writers.filter((_, i) => i !== mine).map((w) => w.flush())).then(() => undefined);
  writers.push(new LogStore(dataDir, { writer: 1, beforeRead: flushOthers(0) }), new LogStore(dataDir, { writer: 2, beforeRead: flushOthers(1) }));
  for (let i = 0; i < 6; i++) writers[i % 2]!.append('acc', 'fn', { t: 100 + i, requestId: `r${i}`, level: 'info', message: `line ${i}` });
  // Nothing flushed yet: the read through writer 1 gets writer 2's pending lines too.
  t.same(
    (await writers[0]!.read('acc', 'fn')).map((e) => e.message),
    ['line 0', 'line 1', 'line 2', 'line 3', 'line 4', 'line 5'],
  );
  const { readdirSync } = await import('node:fs');
  t.same(readdirSync(path.join(dataDir, 'logs', 'acc')).sort(), ['fn.1.log', 'fn.2.log']);
  t.same(
    (await writers[1]!.read('acc', 'fn', { since: 104 })).map((e) => e.message),
    ['line 4', 'line 5'],
  );
  await writers[1]!.remove('acc', 'fn');
  t.same(readdirSync(path.join(dataDir, 'logs', 'acc')), [], "a removal takes every writer's files");
  rmSync(dataDir, { recursive: true, force: true });
});
