import { readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import * as tar from 'tar';
import t from 'tap';
import { fixture, reopenTestServer, startTestServer, type TestServer } from '../helpers/server';

// Deploys are validated, atomic and durable; a failed deploy leaves the previous version serving.
let s: TestServer;

t.before(async () => {
  s = await startTestServer();
});
t.teardown(() => s?.stop());

t.test('a function with files and a package in node_modules deploys and resolves like Node', async (t) => {
  await s.deploy('deps', fixture('deps-node8'), 'handler');
  const res = await s.call('deps', { query: 'name=Ada' });
  t.equal(res.status, 200);
  t.equal(await res.text(), '"Hi Ada! (v2, from json)"');
});

t.test('a syntax error is refused at deploy with file and line; the previous version keeps serving', async (t) => {
  await s.deploy('evolving', fixture('deps-node8'), 'handler');
  const err = await s.deploy('evolving', fixture('broken-node8'), 'handler').then(
    () => undefined,
    (e: unknown) => e as Error & { code: string; details?: Record<string, unknown> },
  );
  t.ok(err, 'deploy failed');
  t.equal(err?.code, 'ERR_INVALID_FUNCTION');
  t.match(err?.message, /SyntaxError/);
  t.match(err?.message, /function\.js:4/, 'names the file and line');
  const res = await s.call('evolving', { query: 'name=still' });
  t.equal(await res.text(), '"Hi still! (v2, from json)"', 'old version still serves');
});

t.test('code that throws while loading, or lacks the entrypoint, is refused at deploy', async (t) => {
  const missingJson = await s.engine.deploy(s.accountId, { name: 'loadfail', runtime: 'node8', file: 'throws-at-load.js', entrypoint: 'handler', env: {} }, { dir: fixture('broken-node8') }).then(
    () => undefined,
    (e: Error) => e,
  );
  t.match(missingJson?.message, /Cannot find module '\.\/missing-config\.json'/);
  const noHandler = await s.engine.deploy(s.accountId, { name: 'nohandler', runtime: 'node8', file: 'no-handler.js', entrypoint: 'handler', env: {} }, { dir: fixture('broken-node8') }).then(
    () => undefined,
    (e: Error) => e,
  );
  t.match(noHandler?.message, /no-handler\.js does not export a function named "handler"/);
  t.equal(s.engine.describe(s.accountId, 'loadfail'), undefined, 'nothing was deployed');
  const missingFile = await s.engine.deploy(s.accountId, { name: 'nofile', runtime: 'node8', file: 'nope.js', entrypoint: 'handler', env: {} }, { dir: fixture('broken-node8') }).then(
    () => undefined,
    (e: Error) => e,
  );
  t.match(missingFile?.message, /nope\.js is not in the deployed folder/);
});

t.test('invalid specs are refused naming the key', async (t) => {
  const cases: [Record<string, unknown>, RegExp][] = [
    [{ name: 'bad name!', runtime: 'node8', file: 'function.js' }, /invalid function name/],
    [{ name: 'ok', runtime: 'node99', file: 'function.js' }, /runtime: unknown runtime "node99"/],
    [{ name: 'ok', runtime: 'node8', file: '../escape.js' }, /file: .* inside the function folder/],
    [{ name: 'ok', runtime: 'node8', file: 'function.js', env: { N: 3 } }, /env\.N: value must be a string, got number/],
    [{ name: 'ok', runtime: 'node8', file: 'function.js', timeoutMs: -1 }, /timeout/],
  ];
  for (const [spec, message] of cases) {
    const err = await s.engine.deploy(s.accountId, spec, { dir: fixture('deps-node8') }).then(
      () => undefined,
      (e: Error) => e,
    );
    t.match(err?.message, message);
  }
});

t.test('tar.gz bundles deploy; entries with .., absolute paths or links are refused', async (t) => {
  const dir = fixture('deps-node8');
  const good = await streamToBuffer(tar.c({ gzip: true, cwd: dir }, ['function.js', 'lib', 'data.json', 'node_modules']));
  await s.engine.deploy(s.accountId, { name: 'from_tar', runtime: 'node8', file: 'function.js', entrypoint: 'handler', env: {} }, { tarball: good });
  t.equal(await (await s.call('from_tar')).text(), '"Hi World! (v2, from json)"');

  const evil = await evilTarball();
  const err = await s.engine.deploy(s.accountId, { name: 'from_tar', runtime: 'node8', file: 'function.js', entrypoint: 'handler', env: {} }, { tarball: evil }).then(
    () => undefined,
    (e: Error) => e,
  );
  t.match(err?.message, /not allowed/);
  t.equal(await (await s.call('from_tar')).text(), '"Hi World! (v2, from json)"', 'previous version still serves');
  const garbage = await s.engine
    .deploy(s.accountId, { name: 'from_tar', runtime: 'node8', file: 'function.js', entrypoint: 'handler', env: {} }, { tarball: Buffer.from('not a tarball at all') })
    .then(
      () => undefined,
      (e: Error) => e,
    );
  t.ok(garbage, 'garbage is refused');
});

t.test('bundles with absolute paths, links out of the folder or a decompression bomb are refused; nothing is written outside', async (t) => {
  const spec = { name: 'from_tar', runtime: 'node8', file: 'function.js', entrypoint: 'handler', env: {} };
  const outside = `/tmp/islet-evil-${process.pid}-${Date.now()}.js`;
  const cases: [string, Buffer, RegExp][] = [
    ['absolute path', await evilTarball(outside), /not allowed/],
    ['symlink out of the folder', await evilTarball('function.js', '2', '/etc/passwd'), /SymbolicLink entries are not allowed/],
    ['hard link', await evilTarball('function.js', '1', '/etc/passwd'), /Link entries are not allowed/],
  ];
  const { gzipSync } = await import('node:zlib');
  // 300 MB of zeros in one entry: about 300 KB compressed, over the 250 MB unpacked limit.
  const header = tarHeader('function.js', 300 * 1024 * 1024);
  cases.push(['decompression bomb', gzipSync(Buffer.concat([header, Buffer.alloc(300 * 1024 * 1024)]), { level: 1 }), /larger than/]);
  for (const [label, bundle, message] of cases) {
    const err = await s.engine.deploy(s.accountId, spec, { tarball: bundle }).then(
      () => undefined,
      (e: Error) => e,
    );
    t.match(err?.message, message, label);
  }
  const { existsSync } = await import('node:fs');
  t.notOk(existsSync(outside), 'nothing was written outside the version folder');
  t.equal(await (await s.call('from_tar')).text(), '"Hi World! (v2, from json)"', 'the previous version keeps serving');
});

t.test('API keys are stored only as hashes', async (t) => {
  const dir = path.join(s.dataDir, 'accounts');
  const text = readdirSync(dir)
    .map((f) => readFileSync(path.join(dir, f), 'utf8'))
    .join('\n');
  t.notMatch(text, s.apiKey);
  t.match(text, /"sha256": "[0-9a-f]{64}"/);
});

t.test('removing a function makes it 404 at once', async (t) => {
  await s.deploy('temp', fixture('deps-node8'), 'handler');
  t.equal((await s.call('temp')).status, 200);
  await s.engine.remove(s.accountId, 'temp');
  t.equal((await s.call('temp')).status, 404);
});

t.test('a restart on the same data directory serves every function', async (t) => {
  const names = s.engine.list(s.accountId).map((m) => m.name);
  t.ok(names.length >= 3);
  const logsBefore = await s.internals.logs.read(s.accountId, 'deps');
  t.ok(logsBefore.length > 0, 'calls were logged');
  const { dataDir, accountId, apiKey } = s;
  await s.stop();
  s = await reopenTestServer(dataDir, accountId, apiKey);
  t.same(
    s.engine.list(accountId).map((m) => m.name),
    names,
    'same functions after restart',
  );
  t.equal(await (await s.call('deps', { query: 'name=Again' })).text(), '"Hi Again! (v2, from json)"');
  t.equal(await (await s.call('evolving', { query: 'name=x' })).text(), '"Hi x! (v2, from json)"');
  t.equal(await (await s.call('from_tar')).text(), '"Hi World! (v2, from json)"');
  t.equal((await s.call('deps', { key: null })).status, 401, 'keys survive the restart as hashes');
  const logsAfter = await s.internals.logs.read(s.accountId, 'deps');
  t.same(logsAfter.slice(0, logsBefore.length), logsBefore, 'logs survive the restart');
});

async function streamToBuffer(stream: AsyncIterable<unknown>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** One ustar header, written by hand: tar tools refuse to write the hostile entries these tests need. */
function tarHeader(name: string, size: number, type = '0', linkTarget = ''): Buffer {
  const header = Buffer.alloc(512);
  header.write(name, 0);
  header.write('0000644\0', 100);
  header.write('0000000\0', 108);
  header.write('0000000\0', 116);
  header.write(`${size.toString(8).padStart(11, '0')}\0`, 124);
  header.write('00000000000\0', 136);
  header.write('        ', 148);
  header.write(type, 156);
  if (linkTarget) header.write(linkTarget, 157);
  header.write('ustar\0', 257);
  header.write('00', 263);
  let sum = 0;
  for (const byte of header) sum += byte;
  header.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148);
  return header;
}

/** A gzip tarball with one hostile entry (a 5-byte file, or a link). */
async function evilTarball(name = '../../evil.js', type = '0', linkTarget = ''): Promise<Buffer> {
  const body = Buffer.alloc(512);
  body.write('x=1;\n');
  const { gzipSync } = await import('node:zlib');
  return gzipSync(Buffer.concat([tarHeader(name, type === '0' ? 5 : 0, type, linkTarget), body, Buffer.alloc(1024)]));
}
