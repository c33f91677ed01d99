import { createHash } from 'node:crypto';
import { cpSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import * as path from 'node:path';
import { gzipSync } from 'node:zlib';
import t from 'tap';
import { functionFolder } from '../helpers/functions';
import { copyPackage } from '../helpers/package-closure';
import { fixture, removeDir, ROOT, startTestServer, type TestServer } from '../helpers/server';

// Node's built-in modules inside node8 functions, with the behaviour functions rely on (known
// vectors where there are some). The module code is test/fixtures/surface-node8/node.js.
let s: TestServer;
let fixtures: Server;
let fixturesUrl = '';
const folder = fixture('surface-node8');
const ENTRIES = [
  'crypto',
  'cryptoAsync',
  'zlib',
  'zlibBomb',
  'events',
  'util',
  'paths',
  'assert',
  'streams',
  'legacyStream',
  'webAdapters',
  'timersAndProcess',
  'asyncLocalStorage',
  'misc',
  'fs',
  'http',
  'httpRefused',
];

t.before(async () => {
  fixtures = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(req.url?.startsWith('/echo') ? JSON.parse(Buffer.concat(chunks).toString()) : { url: req.url, test: req.headers['x-test'] }));
    });
  });
  await new Promise<void>((resolve) => fixtures.listen(0, '127.0.0.1', resolve));
  fixturesUrl = `http://127.0.0.1:${(fixtures.address() as { port: number }).port}`;
  s = await startTestServer();
  for (const entry of ENTRIES) await s.deploy(entry.toLowerCase(), folder, entry, { file: 'node.js', env: { DECLARED: 'yes' } });
});
t.teardown(async () => {
  fixtures.close();
  await s.stop();
});

function call(name: string, body?: unknown): Promise<Record<string, unknown>> {
  return s.invokeJson(name.toLowerCase(), body);
}

t.test('crypto: hashes, HMAC, key derivation, ciphers, signatures and keys on the host', async (t) => {
  const out = await call('crypto');
  t.equal(out.sha256, 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad', 'SHA-256 of "abc" over two updates');
  t.equal(out.md5Base64, createHash('md5').update('islet').digest('base64'), "the same MD5 as the host's");
  t.equal(out.hmac, '5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843', 'RFC 4231 test case 2');
  t.same(out.hashCopy, ['a9993e364706816aba3e25717850c26c9cd0d89d', 'da23614e02469a0d7c7bd1bdab5c9c474b1904dc'], 'copy() keeps the state at the copy');
  t.equal(out.randomBytes, 32);
  t.equal(out.randomUUID, true);
  t.equal(out.randomInt, true);
  t.same(out.timingSafeEqual, [true, false]);
  t.equal(out.pbkdf2, '0c60c80f961f0e71f3a9b524af6012062fe037a6', 'RFC 6070 PBKDF2-SHA1, 1 iteration');
  t.equal(out.scrypt, '77d6576238657b203b19ca42c18a0497f16b4844e3074ae8dfdffa3fede21442fcd0069ded0948f8326a753a0fc81f17e8d3e0fb2e0d3628cf35e20c38d18906', 'RFC 7914 scrypt vector 1');
  t.equal(out.hkdf, '3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865', 'RFC 5869 test case 1');
  t.equal(out.gcm, 'secret message', 'AES-256-GCM with additional data');
  t.match(out.gcmTampered, /unable to authenticate|Unsupported state/, 'a wrong tag is refused');
  t.equal((out.cbc as string[])[1], 'sixteen byte msg and more', 'AES-128-CBC with padding');
  for (const type of ['rsa', 'ec', 'ed25519']) {
    const [verified, tampered, keyType, publicType] = out[`${type}Sign`] as [boolean, boolean, string, string];
    t.equal(verified, true, `${type}: the signature verifies`);
    t.equal(tampered, false, `${type}: not over other data`);
    t.equal(keyType, type);
    t.equal(publicType, 'public');
  }
  t.same(out.signStream, [true, true], 'PEM key pairs, createSign/createVerify in pieces');
  t.same(out.keyObject, ['public', 2048, 'RSA', true], 'createPublicKey from a private PEM, exported as JWK and PEM');
  t.same(out.secretKey, [1, 'k']);
  t.equal(out.oaep, 'sealed', 'RSA-OAEP with SHA-256');
  t.same(out.lists, [true, true]);
  t.equal(out.webcrypto, true);
  t.match(out.unknownHash, /Digest method not supported|Invalid digest/);
});

t.test('crypto: callback and promise APIs run off the host thread', async (t) => {
  const out = await call('cryptoAsync');
  t.equal(out.pbkdf2, 'ea6c014dc72d6f8ccd1ed92ace1d41f0d8de8957', 'RFC 6070, 2 iterations');
  t.equal(out.scrypt, 'fdbabe1c9d3472007856e7190d01e9fe', 'RFC 7914 vector 2 (first 16 bytes)');
  t.same(out.pair, ['ec', 'secp384r1']);
  t.equal(out.bytes, 8);
});

t.test('zlib: gzip, deflate, brotli, callbacks, promisify, streams, crc32, corrupt input', async (t) => {
  const gzipped = gzipSync('made by the host').toString('base64');
  const out = await call('zlib', { gzipped });
  t.equal(out.gzip, true);
  t.equal(out.deflateSmaller, true);
  t.equal(out.raw, 6000);
  t.equal(out.brotli, true);
  t.equal(out.fromHost, 'made by the host', 'reads what Node compressed');
  t.equal(out.unzip, 'auto');
  t.equal(out.callback, true);
  t.equal(out.promisified, true);
  t.equal(out.stream, true, 'createGzip/createGunzip in a pipeline');
  t.equal(out.crc32, 907060870);
  t.equal(out.corrupt, 'Z_DATA_ERROR');
  t.equal(out.constants, 9);
});

t.test('zlib: a decompression bomb answers ERR_RESOURCE_LIMIT, or an error the function can catch', async (t) => {
  // 100 MB of zeros: about 100 KB compressed.
  const bomb = gzipSync(Buffer.alloc(100 * 1024 * 1024)).toString('base64');
  const started = Date.now();
  const res = await s.invoke('zlibbomb', { body: JSON.stringify({ bomb }) });
  t.equal(res.status, 500);
  t.match(String(res.body), /"errorCode":"ERR_RESOURCE_LIMIT"/);
  t.match(String(res.body), /larger than 33554432 bytes/, 'the output limit is named');
  t.ok(Date.now() - started < 5000, 'stopped at the limit, not after inflating everything');
  const caught = await s.invoke('zlibbomb', { body: JSON.stringify({ bomb, catch: true }) });
  t.equal(String(caught.body), '"RangeError ERR_BUFFER_TOO_LARGE"');
  t.equal((await s.invoke('paths')).status, 200, 'other functions are untouched');
});

t.test('events: listeners, once, errors, events.once and events.on, EventEmitter.call(this)', async (t) => {
  const out = await call('events');
  t.same(out.seen, ['on:1', 'once:1', 'on:2']);
  t.equal(out.unhandledError, 'boom', 'an error event without a listener throws');
  t.same(out.once, ['now']);
  t.same(out.iterated, [1, 2]);
  t.equal(out.legacy, 'legacy', 'util.inherits and EventEmitter.call(this) work as in Node');
  t.equal(out.listenerCount, 0);
  t.equal(out.defaultMax, 10);
});

t.test('util: format, inspect, promisify, callbackify, types, isDeepStrictEqual, TextDecoder', async (t) => {
  const out = await call('util');
  t.equal(out.format, 'Ada is 36 years and {"a":1}');
  t.match(out.inspect, /a: \[ 1, 2 \]/);
  t.equal(out.promisify, 5);
  t.equal(out.callbackify, 42);
  t.same(out.types, [true, true, true, true]);
  t.same(out.deepEqual, [true, false]);
  t.equal(out.textDecoder, 'héllo');
  t.equal(out.deprecate, 'still works');
  t.equal(out.typesModule, true);
});

t.test('path, querystring, url (WHATWG and legacy), punycode, string_decoder', async (t) => {
  const out = await call('paths');
  t.equal(out.join, '/a/c/d.txt');
  t.equal(out.resolve, '/x/z');
  t.equal(out.relative, '../../c');
  t.same(out.parse, { root: '/', dir: '/home/u', base: 'file.tar.gz', ext: '.gz', name: 'file.tar' });
  t.equal(out.posix, true);
  t.same(out.qs, [{ a: '1', b: ['2', '3'], c: ' x' }, 'x=1&x=2&y=a%20b']);
  t.same(out.legacyUrl, { protocol: 'https:', host: 'example.com:8080', pathname: '/p/a/t/h', query: { query: 'string' } });
  t.equal(out.format, 'https://example.com/x?a=1');
  t.same(out.fileUrl, ['/tmp/a b.txt', 'file:///tmp/a%20b.txt']);
  t.equal(out.whatwg, 'c');
  t.equal(out.punycode, 'xn--maana-pta.com');
  t.equal(out.decoder, '|€', 'a character split across writes comes out whole');
});

t.test('assert: AssertionError with ERR_ASSERTION, throws, rejects, strict', async (t) => {
  const out = await call('assert');
  for (const name of ['strictEqual', 'deepStrictEqual', 'throws', 'match']) t.equal(out[name], 'AssertionError:ERR_ASSERTION', name);
  t.equal(out.strict, true);
});

t.test('stream: pipeline, Transform, PassThrough, finished, stream/promises, stream/consumers, errors', async (t) => {
  const out = await call('streams');
  t.same(out.collected, ['A', 'B', 'C']);
  t.equal(out.text, 'through');
  t.same(out.json, { n: 1 });
  t.equal(out.finishedOk, true);
  t.equal(out.failed, 'source failed', 'an error in a pipeline reaches its callback');
  t.same(out.objectMode, [1, 2]);
  t.same(out.hashStream, [true, 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad'], 'a Hash is a Transform stream when used as one');
});

t.test('stream: Readable, Writable and Duplex fromWeb/toWeb answer as under Node, request.body included', async (t) => {
  const islet = await call('webAdapters');
  // The same function under Node 20, the control.
  const control = await (require(path.join(folder, 'node.js')) as { webAdapters(): Promise<unknown> }).webAdapters();
  t.same(islet, control);
  t.same(islet, { fromWeb: 'web', toWeb: ['no', 'de'], written: ['a', 'b'], collected: ['x'], failed: 'web failed', cancelled: true, duplex: 'duplex' });
  const echo = functionFolder(
    "const { Readable } = require('stream');\nmodule.exports = { async fetch(request) {\n  let text = '';\n  for await (const chunk of Readable.fromWeb(request.body)) text += Buffer.from(chunk).toString();\n  return new Response(text);\n} };\n",
  );
  await s.deploy('from_web_body', echo, 'default');
  const res = await s.call('from_web_body', { method: 'POST', body: 'posted body' });
  t.equal(await res.text(), 'posted body', 'Readable.fromWeb(request.body)');
});

t.test("stream is Node's legacy Stream, which readable-stream 2 and 3 inherit from", async (t) => {
  const out = await call('legacyStream');
  t.equal(out.pipesCount, 1, "state set the old way stays the inheriting object's own (it was replaced by one with a getter-only pipesCount)");
  t.same(out.ownState, ['pipesCount', 'flowing']);
  t.equal(out.isEmitter, true);
  t.equal(out.notReadable, true, "require('stream') is not Readable");
  t.equal(out.selfNamed, true, 'Stream.Stream is Stream');
  t.same(out.missing, [], 'Readable, Writable, Duplex, Transform, PassThrough, pipeline, finished, promises are its properties');
  t.equal(out.readableIsStream, true, 'a Readable is an instance of Stream');
  t.same(out.piped, ['x', 'y'], 'Stream.prototype.pipe forwards data events and ends the destination');
});

t.test('readable-stream 3 runs on it: Readable, Transform and Writable through its pipeline', async (t) => {
  // readable-stream 3.6 as bl ships it in the shared install, with its dependencies.
  const rs3 = path.join(ROOT, 'node_modules', 'bl', 'node_modules', 'readable-stream');
  t.match(JSON.parse(readFileSync(path.join(rs3, 'package.json'), 'utf8')), { version: /^3\./ });
  const dir = functionFolder(
    `const rs = require('readable-stream');
exports.handler = () => new Promise((resolve, reject) => {
  const got = [];
  const source = new rs.Readable({ read() {} });
  const upper = new rs.Transform({ transform(chunk, enc, cb) { cb(null, String(chunk).toUpperCase()); } });
  rs.pipeline(source, upper, new rs.Writable({ write(chunk, enc, cb) { got.push(String(chunk)); cb(); } }), (err) => (err ? reject(err) : resolve(got)));
  source.push('a');
  source.push('b');
  source.push(null);
});`,
  );
  t.teardown(() => removeDir(dir));
  cpSync(rs3, path.join(dir, 'node_modules', 'readable-stream'), { recursive: true });
  for (const name of ['inherits', 'string_decoder', 'util-deprecate']) copyPackage(ROOT, name, dir);
  await s.deploy('rs3', dir, 'handler');
  const res = await s.invoke('rs3');
  t.equal(res.status, 200, String(res.body));
  t.same(JSON.parse(String(res.body)), ['A', 'B']);
});

t.test('timers, timers/promises and process: order of ticks, env, fixed facts', async (t) => {
  const out = await call('timersAndProcess');
  t.same(out.order, ['sync', 'nextTick', 'promise', 'timeout']);
  t.equal(out.value, 'slept');
  t.same(out.env, ['DECLARED', 'SERVICE_ACCOUNT_ID']);
  t.equal(out.platform, 'linux');
  t.equal(out.hrtime, 2);
  t.equal(out.cwd, '/');
  t.equal(out.tag, '[object process]', 'packages that tell Node by Object.prototype.toString find it');
});

t.test("async_hooks: AsyncLocalStorage keeps each request's store across awaits and timers, never another's", async (t) => {
  const results = await Promise.all([call('asyncLocalStorage', { id: 'a', wait: 30 }), call('asyncLocalStorage', { id: 'b', wait: 5 }), call('asyncLocalStorage', { id: 'c', wait: 15 })]);
  for (const [i, id] of ['a', 'b', 'c'].entries()) {
    t.same(results[i], { before: id, afterTimer: id, afterAwaits: id, outside: id }, `request ${id} saw only its own store`);
  }
});

t.test('os, tty, diagnostics_channel, perf_hooks, module.createRequire', async (t) => {
  const out = await call('misc');
  t.same(out.os, ['\n', 'linux', 'islet', 'number', '/tmp']);
  t.equal(out.tty, false);
  t.same(out.channel, [{ hello: 1 }]);
  t.equal(out.performance, true);
  t.equal(out.createRequire, 'info from json', "createRequire loads the function's own files");
  t.same(out.builtins, [true, true, false]);
});

t.test("fs: the function's own files, read-only", async (t) => {
  const out = await call('fs');
  t.equal(out.read, 'line one\nline two\n');
  t.equal(out.relative, 18, 'relative paths start at the function folder');
  t.same(out.dir, ['info.json', 'notes.txt']);
  t.same(out.types, ['data']);
  t.same(out.stat, [18, true]);
  t.same(out.exists, [true, false]);
  t.equal(out.promises, 'line one');
  t.equal(out.callback, 'ENOENT');
  t.equal(out.write, 'EROFS');
  t.equal(out.stream, 18);
});

t.test('http: a client over the guarded egress (GET with headers, POST with a body)', async (t) => {
  await s.stop();
  s = await startTestServer({ engine: { allowPrivateEgress: true } });
  await s.deploy('http', folder, 'http', { file: 'node.js' });
  const out = await call('http', { url: fixturesUrl });
  t.same(out.get, { status: 200, message: 'OK', type: 'application/json', data: { url: '/json?from=http', test: 'http' } });
  t.same(out.post, { posted: true });
});

t.test('http: private addresses are refused as fetch refuses them', async (t) => {
  await s.stop();
  s = await startTestServer();
  await s.deploy('httprefused', folder, 'httpRefused', { file: 'node.js' });
  const res = await s.invoke('httprefused');
  t.match(String(res.body), /ECONNREFUSED: connections to 169\.254\.169\.254 .* are not allowed from functions/);
});
