import t from 'tap';
import { LogBatch } from '../engine/log-batch';

// The pending-log buffer on its own: what a write gets, and what a burst drops.

t.test('a batch gives back its lines in order, one per line, UTF-8 intact', async (t) => {
  const batch = new LogBatch(1024 * 1024);
  batch.add('{"a":1}');
  batch.add('{"b":"é ✓ 🙂"}');
  t.equal(batch.take().toString('utf8'), '{"a":1}\n{"b":"é ✓ 🙂"}\n');
  t.equal(batch.dropped, 0);
});

t.test('a burst over the limit keeps the newest lines and counts the dropped ones', async (t) => {
  const limit = 256 * 1024;
  const batch = new LogBatch(limit);
  const total = 20_000;
  for (let i = 0; i < total; i++) batch.add(JSON.stringify({ n: i, pad: 'x'.repeat(40) }));
  const lines = batch.take().toString('utf8').split('\n').filter(Boolean);
  t.ok(lines.length * 50 <= limit, 'the kept lines fit the limit');
  t.equal(JSON.parse(lines[lines.length - 1]!).n, total - 1, 'the newest line is kept');
  t.equal(lines.length + batch.dropped, total, 'every line is either kept or counted as dropped');
  const first = JSON.parse(lines[0]!).n as number;
  t.equal(first, batch.dropped, 'the dropped lines are the oldest ones');
});

t.test('reused chunks never carry a spent batch\'s lines into the next one', async (t) => {
  const first = new LogBatch(1024 * 1024);
  for (let i = 0; i < 5000; i++) first.add(`{"old":${i}}`);
  first.take();
  const second = new LogBatch(1024 * 1024);
  second.add('{"new":1}');
  t.equal(second.take().toString('utf8'), '{"new":1}\n');
});

t.test('a line longer than a chunk is kept whole', async (t) => {
  const batch = new LogBatch(1024 * 1024);
  const long = JSON.stringify({ s: 'y'.repeat(100_000) });
  batch.add('{"before":1}');
  batch.add(long);
  t.equal(batch.take().toString('utf8'), `{"before":1}\n${long}\n`);
});
