import { Agent, request, type IncomingHttpHeaders } from 'node:http';
import t from 'tap';
import { startTestServer, type TestServer } from '../helpers/server';

// A draining server closes each connection after its answer, so that keep-alive clients go
// elsewhere. That is the server's own state: another server of the same process (tests run several)
// keeps its connections open.
let a: TestServer;
let b: TestServer;

t.before(async () => {
  a = await startTestServer();
  b = await startTestServer();
});
t.teardown(async () => {
  await a.stop();
  await b.stop();
});

/** GET /healthz on a kept-alive connection of `agent`: its headers, and whether it reused a connection. */
function health(agent: Agent, url: string): Promise<{ headers: IncomingHttpHeaders; reused: boolean }> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}/healthz`, { agent }, (res) => {
      res.resume();
      res.on('end', () => resolve({ headers: res.headers, reused: req.reusedSocket }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

t.test("draining one server closes its connections after each answer, and not another server's", async (t) => {
  const toA = new Agent({ keepAlive: true, maxSockets: 1 });
  const toB = new Agent({ keepAlive: true, maxSockets: 1 });
  t.teardown(() => {
    toA.destroy();
    toB.destroy();
  });
  // A connection to each, kept alive.
  t.not((await health(toA, a.url)).headers.connection, 'close', 'a keeps its connection open before it drains');
  t.not((await health(toB, b.url)).headers.connection, 'close', 'b keeps its connection open');

  const drained = a.server.drain();
  const fromA = await health(toA, a.url);
  t.ok(fromA.reused, "a's answer came on the connection kept alive");
  t.equal(fromA.headers.connection, 'close', 'the draining server closes the connection after its answer');

  for (let i = 0; i < 3; i++) {
    const fromB = await health(toB, b.url);
    t.ok(fromB.reused, `b's answer ${i + 1} came on the connection kept alive`);
    t.not(fromB.headers.connection, 'close', `b, which is not draining, keeps the connection open (answer ${i + 1})`);
  }
  await drained;
});
