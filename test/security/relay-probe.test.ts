import { request as httpRequest } from 'node:http';
import t from 'tap';
import { functionFolder } from '../helpers/functions';
import { startTestServer, type TestServer } from '../helpers/server';

// Probes of the host's relay of untouched bodies (engine/capabilities/streams/relay.ts), written as
// a hostile tenant would: the answer's head names the body to relay by an id the host checks
// against the instance's own bodies, so a kept body of an ended call, a polluted prototype or
// another account's body must never be relayed.
let s: TestServer;

const PROBE = `let saved;
export default {
  async fetch(request) {
    const path = new URL(request.url).pathname;
    if (path === '/save') {
      saved = request.body;
      return new Response('saved');
    }
    if (path === '/stale') return new Response(saved);
    if (path === '/polluted') {
      // Were the answer's head read with its prototype, this would name body 1 of fetch's or the request's.
      Object.prototype.r = [0, 1];
      try {
        return new Response(new ReadableStream({ start(c) { c.enqueue(new TextEncoder().encode('mine')); c.close(); } }));
      } finally {
        setTimeout(() => delete Object.prototype.r, 0);
      }
    }
    return new Response(request.body);
  },
};`;

t.before(async () => {
  s = await startTestServer();
  await s.deploy('probe', functionFolder(PROBE), 'default', { timeoutMs: 20_000 });
});
t.teardown(() => s.stop());

/** A POST whose body goes chunked (no Content-Length), so the function gets it as a body still arriving. */
function chunkedPost(server: TestServer, account: string, name: string, path: string, key: string, body: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${server.url}/v2/run/${account}/${name}${path}`, { method: 'POST', headers: { 'X-Service-Api-Key': key }, agent: false }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += String(c)));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.write(body);
    req.end();
  });
}

t.test('a body kept from an ended call is not relayed: the answer is ERR_BAD_RESPONSE, never another body', async (t) => {
  const saved = await chunkedPost(s, s.accountId, 'probe', '/save', s.apiKey, 'the first body');
  t.same(saved, { status: 200, text: 'saved' });
  const stale = await chunkedPost(s, s.accountId, 'probe', '/stale', s.apiKey, 'the second body');
  t.equal(stale.status, 502);
  t.match(JSON.parse(stale.text), { errorCode: 'ERR_BAD_RESPONSE', message: /the request body is gone/ });
  t.notMatch(stale.text, /first body|second body/, 'no bytes of either body');
  const echo = await chunkedPost(s, s.accountId, 'probe', '/', s.apiKey, 'still relays');
  t.same(echo, { status: 200, text: 'still relays' }, 'the instance relays its next body');
});

t.test("a polluted Object.prototype does not make the host relay a body: the function's own stream is sent", async (t) => {
  const res = await chunkedPost(s, s.accountId, 'probe', '/polluted', s.apiKey, 'a body the host holds');
  t.same(res, { status: 200, text: 'mine' });
});

t.test("another account's function relays its own bodies only", async (t) => {
  const other = await s.createAccount();
  await s.engine.deploy(other.accountId, { name: 'probe', runtime: 'node8', file: 'function.js', entrypoint: 'default', env: {} }, { dir: functionFolder(PROBE) });
  t.same(await chunkedPost(s, s.accountId, 'probe', '/save', s.apiKey, 'mine, kept'), { status: 200, text: 'saved' });
  const theirs = await chunkedPost(s, other.accountId, 'probe', '/stale', other.apiKey, 'theirs');
  t.same(theirs, { status: 200, text: '' }, "their function saved nothing: an empty answer, never the other account's body");
  t.same(await chunkedPost(s, other.accountId, 'probe', '/', other.apiKey, 'their echo'), { status: 200, text: 'their echo' });
});
