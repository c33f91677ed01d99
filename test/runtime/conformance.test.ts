import t from 'tap';
import { NODE8, PYTHON, runtimeConformance } from '../helpers/runtime-conformance';
import { startTestServer, type TestServer } from '../helpers/server';

// The invocation contract, run against node8 and Python on one server.
let s: TestServer;

t.before(async () => {
  s = await startTestServer();
});
t.teardown(() => s.stop());

t.test('node8', async (t) => runtimeConformance(t, () => s, NODE8));
t.test('python2', async (t) => runtimeConformance(t, () => s, PYTHON));
