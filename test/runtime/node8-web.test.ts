import { createServer, type Server } from 'node:http';
import t from 'tap';
import { fixture, startTestServer, type TestServer } from '../helpers/server';

// The WinterTC web globals inside node8 functions (an ES module: test/fixtures/surface-node8/web.mjs),
// with the behaviour functions rely on; crypto.subtle against known vectors.
let s: TestServer;
let fixtures: Server;
let fixturesUrl = '';
const folder = fixture('surface-node8');

t.before(async () => {
  fixtures = createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ url: req.url, test: req.headers['x-test'] }));
  });
  await new Promise<void>((resolve) => fixtures.listen(0, '127.0.0.1', resolve));
  fixturesUrl = `http://127.0.0.1:${(fixtures.address() as { port: number }).port}`;
  s = await startTestServer({ engine: { allowPrivateEgress: true } });
  // subtle does real CPU work (RSA keys): beside four busy loops it passed the default 10 s.
  for (const entry of ['events', 'fetchFamily', 'fetchRemote', 'streams', 'subtle', 'misc']) await s.deploy(entry.toLowerCase(), folder, entry, { file: 'web.mjs', timeoutMs: 60_000 });
});
t.teardown(async () => {
  fixtures.close();
  await s.stop();
});

function call(name: string, body?: unknown): Promise<Record<string, unknown>> {
  return s.invokeJson(name.toLowerCase(), body);
}

t.test('Event, EventTarget, CustomEvent, AbortController/AbortSignal (timeout, any), DOMException', async (t) => {
  const out = await call('events');
  t.same(out.seen, ['ping:1', 'once', 'ping:2'], 'listeners, once');
  t.equal(out.aborted, 'AbortError');
  t.same(out.signal, [true, true, 'TimeoutError', true, 'why']);
  t.equal(out.throwIfAborted, 'AbortError');
  t.same(out.domException, ['NotFoundError', 8, true, 8]);
});

t.test('Headers, Request, Response, FormData, Blob, File', async (t) => {
  const out = await call('fetchFamily');
  t.same(
    out.headers,
    [
      ['content-type', 'text/plain'],
      ['set-cookie', 'a=1'],
      ['set-cookie', 'b=2'],
      ['x-a', '1, 2'],
    ],
    'sorted, combined, set-cookie apart',
  );
  t.equal(out.get, '1, 2');
  t.same(out.setCookies, ['a=1', 'b=2']);
  t.same(out.request, ['POST', 'https://example.com/path?q=1', 'application/json', { a: 1 }, 7]);
  t.same(out.response, [201, true, 'application/json', { ok: true }]);
  t.equal(out.streamed, 'chunk one chunk two', 'a body from a ReadableStream');
  t.same(out.reader, ['read me', false]);
  t.equal(out.bodyUsed, true);
  t.same(out.redirect, [301, 'https://example.com/to']);
  t.same(out.multipart, [true, 'Ada', 'a.txt', 'file body'], 'FormData to multipart and back');
  t.same(out.urlencoded, [
    ['x', '1'],
    ['y', 'two'],
  ]);
  t.same(out.blob, [11, 'text/plain', 'world', '6865']);
  t.equal(out.getWithBody, 'TypeError');
});

t.test('fetch takes a Request and an AbortSignal; its body streams', async (t) => {
  const out = await call('fetchRemote', { url: fixturesUrl });
  t.same(out, { status: 200, type: 'application/json', json: { url: '/json', test: 'fetch' }, abortError: 'AbortError' });
});

t.test('ReadableStream, WritableStream, TransformStream, text and compression streams', async (t) => {
  const out = await call('streams');
  t.same(out.collected, ['A', 'B']);
  t.equal(out.desiredSize, 2);
  t.equal(out.decoded, '€uro', 'TextDecoderStream joins a character split across chunks');
  t.equal(out.encoded, 4);
  t.same(out.gzip, [true, true, true], 'CompressionStream and DecompressionStream round trip');
  t.equal(out.tee, 2);
  t.equal(out.strategy, 5);
});

t.test('crypto.subtle: digest, HMAC, AES-GCM/CBC, ECDSA, RSA-PSS, PKCS#1, Ed25519, PBKDF2, HKDF, key formats', async (t) => {
  const out = await call('subtle');
  t.equal(out.digest, 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  t.same(out.hmac, ['5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843', true, false], 'RFC 4231 test case 2');
  t.equal(out.hmacJwk, 'oct');
  t.equal(out.aesGcm, 'gcm secret');
  t.equal(out.notExtractable, 'InvalidAccessError');
  t.equal(out.aesCbc, 'cbc text');
  for (const [name, algorithm] of [
    ['ecdsa', 'ECDSA'],
    ['ecdsa384', 'ECDSA'],
    ['rsaPss', 'RSA-PSS'],
    ['pkcs1', 'RSASSA-PKCS1-v1_5'],
    ['ed25519', 'Ed25519'],
  ]) {
    t.same(out[name!], [true, false, 'private', algorithm], `${name}: signs, verifies after an spki round trip, refuses other data`);
  }
  t.same(out.pkcs8, ['sign']);
  t.equal(out.pbkdf2, '0c60c80f961f0e71f3a9b524af6012062fe037a6', 'RFC 6070');
  t.same(out.derivedKey, ['AES-GCM', 128]);
  t.equal(out.hkdf, '3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865', 'RFC 5869 test case 1');
  t.equal(out.wrongUsage, 'InvalidAccessError');
  t.equal(out.unknown, 'NotSupportedError');
  t.same(out.classes, [true, 'function', true, '[object CryptoKey]']);
});

t.test('structuredClone, MessageChannel, URLPattern, performance, navigator, queueMicrotask, self, codecs', async (t) => {
  const out = await call('misc');
  t.same(out.cloned, [true, true, true, [1, 2]]);
  t.equal(out.cyclic, true);
  t.equal(out.uncloneable, 'DataCloneError');
  t.same(out.message, { hi: 'there' });
  t.same(out.urlPattern, [true, '42']);
  t.same(out.performance, [true, 'number', 'm']);
  t.equal(out.navigator, 'islet');
  t.equal(out.microtask, true);
  t.equal(out.self, true);
  t.equal(out.reportError, 'function');
  t.equal(out.textCodec, 'hi');
  t.same(out.base64, ['aXNsZXQ=', 'islet']);
  t.equal(out.url, 'https://example.com/b?x=1');
});
