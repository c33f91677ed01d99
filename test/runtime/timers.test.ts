import t from 'tap';
import { fixture, startTestServer, type TestServer } from '../helpers/server';

// setTimeout's ids inside node8 functions: the common `let t = null; … clearTimeout(t)` must not
// cancel the isolate's first timer, and a finished timer's id must not cancel a later one.
let s: TestServer;
t.before(async () => {
  s = await startTestServer();
  await s.deploy('timers', fixture('timers'), 'handler');
});
t.teardown(() => s.stop());

t.test('clearTimeout of null, 0 or a finished timer cancels nothing else', async (t) => {
  const out = (await s.invokeJson('timers')) as { fired: string[]; ids: number[]; distinct: boolean };
  t.same(out.fired, ['first', 'later', 'interval']);
  t.ok(
    out.ids.every((id) => id > 0),
    'ids are never 0',
  );
  t.ok(out.distinct, 'a timer in a freed slot has a new id');
});
