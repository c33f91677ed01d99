import { createHash, randomBytes } from 'node:crypto';
import { request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http';
import t from 'tap';
import { functionFolder } from '../helpers/functions';
import { eventually } from '../helpers/supervised';
import { startTestServer, type TestServer } from '../helpers/server';

// Python request bodies (issue 25, item 2): a body over the limit of a body read whole
// (--max-body-mb) reaches a Python handler as a stream, up to the streamed limit
// (--max-stream-body-mb), through `req.stream` (a binary file) and `req.iter_chunks()`; `req.body`
// and the handler's body argument keep the limit of a body read whole (413 when used).
// The server's limits are small: 1 MiB read whole, 8 MiB read as a stream.
const MiB = 1024 * 1024;
let s: TestServer;

const BODIES = `
import hashlib
import sys

_kept = []

def handler(body, req):
    do = req.query.get('do')
    if do == 'chunks':
        digest, size, pieces = hashlib.sha256(), 0, 0
        for chunk in req.iter_chunks():
            digest.update(chunk)
            size += len(chunk)
            pieces += 1
        return {'bytes': size, 'sha256': digest.hexdigest(), 'pieces': pieces}
    if do == 'read':
        digest, size, reads = hashlib.sha256(), 0, 0
        while True:
            block = req.stream.read(100000)
            if not block:
                break
            assert len(block) <= 100000
            digest.update(block)
            size += len(block)
            reads += 1
        return {'bytes': size, 'sha256': digest.hexdigest(), 'reads': reads}
    if do == 'lines':
        count, last = 0, b''
        for line in req.stream:
            count += 1
            last = line
        return {'lines': count, 'last': last.decode()}
    if do == 'whole':
        return {'bytes': len(req.body), 'items': len(body['items'])}
    if do == 'catch':
        try:
            req.body
        except OSError as error:
            return {'caught': type(error).__name__, 'code': error.code}
        return {'caught': None}
    if do == 'count':
        print('reading')
        size = 0
        try:
            for chunk in req.iter_chunks():
                size += len(chunk)
        except OSError as error:
            print('the read failed after %d bytes: %s: %s' % (size, error.code, error))
            raise
        return {'bytes': size}
    if do == 'keep':
        # Keeps the request past its call, without reading its body.
        _kept.append(req)
        return {'kept': True}
    if do == 'late':
        late = forged = None
        try:
            _kept.pop().stream.read(10)
        except OSError as error:
            late = error.code
        try:
            # islet's own host operation, which user code can reach, with an id no call of this instance has.
            sys.modules['_islet_net'].host_op('bodyRead', '{"id": 424242}', None)
        except Exception as error:
            forged = error.code
        return {'late': late, 'forged': forged}
    if do == 'argument':
        return {'name': (body or {}).get('name')}
    return {'unknown': do}
`;

t.before(async () => {
  s = await startTestServer({ limits: { requestBodyBytes: MiB, streamedRequestBodyBytes: 8 * MiB } });
  const folder = functionFolder('', { 'function.py': BODIES });
  await s.deployPython('bodies', folder, 'handler', { timeoutMs: 60_000 });
  await s.deployPython('bodies_short', folder, 'handler', { timeoutMs: 3_000 });
});
t.teardown(() => s?.stop());

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

/** A chunked POST left open after `bytes`: the test ends or destroys it. */
function postOpen(name: string, query: string, bytes: Buffer): { req: ClientRequest; response: Promise<{ status: number; body: string }> } {
  const req = httpRequest(`${s.url}/v2/run/${s.accountId}/${name}?${query}`, { method: 'POST', headers: { 'X-Service-Api-Key': s.apiKey }, agent: false });
  req.on('error', () => undefined);
  const response = new Promise<{ status: number; body: string }>((resolve) => {
    req.on('response', (res: IncomingMessage) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += String(chunk)));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
  });
  req.write(bytes);
  return { req, response };
}

const logged = async (name: string, pattern: RegExp) => (await s.engine.readLogs(s.accountId, name, {})).some((e) => pattern.test(e.message));

/** A POST of `bytes`, chunked (no Content-Length: nothing says its size before it ends), in 256 KiB writes. */
function postChunked(query: string, bytes: Buffer): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${s.url}/v2/run/${s.accountId}/bodies?${query}`, { method: 'POST', headers: { 'X-Service-Api-Key': s.apiKey }, agent: false });
    let answered = false;
    // A refusal may come while the upload still goes: the writes after it may fail.
    req.on('error', (err) => answered || reject(err));
    req.on('response', (res: IncomingMessage) => {
      answered = true;
      let text = '';
      res.on('data', (chunk: Buffer) => (text += String(chunk)));
      res.on('end', () => {
        resolve({ status: res.statusCode ?? 0, body: text });
        req.destroy();
      });
      res.on('error', reject);
    });
    void (async () => {
      for (let at = 0; at < bytes.length && !answered && !req.destroyed; at += 256 * 1024) {
        if (!req.write(bytes.subarray(at, at + 256 * 1024))) await new Promise((r) => req.once('drain', r));
      }
      if (!answered) req.end();
    })();
  });
}

t.test('a body over the limit of a body read whole reaches Python as it arrives: with a Content-Length, and chunked', async (t) => {
  const bytes = randomBytes(5 * MiB);
  const declared = await s.call('bodies', { query: 'do=chunks', body: bytes });
  t.equal(declared.status, 200, 'not refused: 5 MiB is under the streamed limit');
  const out = (await declared.json()) as { bytes: number; sha256: string; pieces: number };
  t.equal(out.bytes, bytes.length, 'every byte');
  t.equal(out.sha256, sha256(bytes), 'in order');
  t.ok(out.pieces >= 5, `in pieces of at most 1 MiB (${out.pieces})`);
  const chunked = await postChunked('do=chunks', bytes);
  t.equal(chunked.status, 200, chunked.body);
  const again = JSON.parse(chunked.body) as { bytes: number; sha256: string };
  t.same({ bytes: again.bytes, sha256: again.sha256 }, { bytes: bytes.length, sha256: sha256(bytes) }, 'chunked: what was read before it passed the limit comes first, then the rest');
});

t.test('req.stream is a binary file: sized reads and lines', async (t) => {
  const bytes = randomBytes(3 * MiB);
  const read = await s.call('bodies', { query: 'do=read', body: bytes });
  const out = (await read.json()) as { bytes: number; sha256: string; reads: number };
  t.same({ bytes: out.bytes, sha256: out.sha256 }, { bytes: bytes.length, sha256: sha256(bytes) }, 'read(n) gives at most n bytes, all of them in order');
  t.equal(out.reads, Math.ceil(bytes.length / 100000), 'read(n) fills n while the body goes on');
  const text = Array.from({ length: 100_000 }, (_, i) => `line ${i}`).join('\n');
  t.ok(text.length > MiB, 'over the limit of a body read whole');
  const lines = await s.call('bodies', { query: 'do=lines', body: text });
  t.same(await lines.json(), { lines: 100_000, last: 'line 99999' }, 'iterating it gives its lines');
});

t.test("the limit of a body read whole still holds for req.body and the handler's body argument", async (t) => {
  const json = JSON.stringify({ name: 'big', items: [1, 2, 3], pad: 'x'.repeat(2 * MiB) });
  for (const [what, query] of [
    ['req.body', 'do=whole'],
    ['req.body, its error caught by the handler', 'do=catch'],
    ['the body argument', 'do=argument'],
  ]) {
    const res = await s.call('bodies', { query: query!, body: json, headers: { 'content-type': 'application/json' } });
    t.equal(res.status, 413, what!);
    const error = (await res.json()) as Record<string, unknown>;
    t.equal(error.errorCode, 'ERR_PAYLOAD_TOO_LARGE', what!);
    t.equal(error.limit, '--max-body-mb', `${what}: the error names the limit`);
    t.match(error.message, /over the limit of 1048576 bytes for a body read whole/, what!);
  }
  const chunked = await postChunked('do=whole', Buffer.from(json));
  t.equal(chunked.status, 413, 'chunked: req.body past the limit');
  t.equal((JSON.parse(chunked.body) as Record<string, unknown>).limit, '--max-body-mb');
});

t.test('under the limit, as before: the body argument and req.body whole, and req.stream over the same bytes', async (t) => {
  const json = JSON.stringify({ name: 'small', items: [1, 2, 3, 4], pad: 'y'.repeat(200 * 1024) });
  const whole = await s.call('bodies', { query: 'do=whole', body: json, headers: { 'content-type': 'application/json' } });
  t.same(await whole.json(), { bytes: json.length, items: 4 });
  const argument = await postChunked('do=argument', Buffer.from(json));
  t.same(JSON.parse(argument.body), { name: 'small' }, 'a chunked body under the limit is read whole');
  const chunks = await s.call('bodies', { query: 'do=chunks', body: json });
  t.same(await chunks.json(), { bytes: json.length, sha256: sha256(Buffer.from(json)), pieces: 1 }, 'iter_chunks() gives a whole body in one piece');
  const read = await s.call('bodies', { query: 'do=read', body: json });
  t.match(await read.json(), { bytes: json.length, sha256: sha256(Buffer.from(json)) }, 'req.stream reads it');
});

t.test('past the streamed limit: 413 naming --max-stream-body-mb, declared or as the chunks pass it', async (t) => {
  const bytes = randomBytes(9 * MiB);
  const declared = await s.call('bodies', { query: 'do=chunks', body: bytes });
  t.equal(declared.status, 413);
  t.equal(((await declared.json()) as Record<string, unknown>).limit, '--max-stream-body-mb');
  const chunked = await postChunked('do=chunks', bytes);
  t.equal(chunked.status, 413, "the handler's read failed: the call's answer is the 413");
  t.equal((JSON.parse(chunked.body) as Record<string, unknown>).limit, '--max-stream-body-mb');
});

t.test('a client that goes away mid-body fails the read (ERR_CLIENT_GONE); one that stalls holds the call to its timeout', async (t) => {
  const gone = postOpen('bodies', 'do=count', randomBytes(2 * MiB));
  t.ok(await eventually(() => logged('bodies', /^reading$/), 30_000), 'the handler reads the body as it comes');
  gone.req.destroy();
  t.ok(await eventually(() => logged('bodies', /the read failed after \d+ bytes: ERR_CLIENT_GONE: the client went away/), 30_000), "the handler's read failed, saying why");
  const stalled = postOpen('bodies_short', 'do=count', randomBytes(2 * MiB));
  const answer = await stalled.response;
  t.equal(answer.status, 504, 'the stalled upload ends at the 3 s timeout');
  t.match(answer.body, /ERR_TIMEOUT/);
  stalled.req.destroy();
  const small = JSON.stringify({ items: [1] });
  const after = await s.call('bodies_short', { query: 'do=whole', body: small });
  t.same(await after.json(), { bytes: small.length, items: 1 }, 'the function serves on');
});

t.test('probes: a stream kept past its call reads nothing, and a forged body id reaches nothing', async (t) => {
  const kept = await s.call('bodies', { query: 'do=keep', body: randomBytes(2 * MiB) });
  t.same(await kept.json(), { kept: true });
  const late = await s.call('bodies', { query: 'do=late', body: '{}' });
  t.same(await late.json(), { late: 'ERR_BODY_GONE', forged: 'ERR_BODY_GONE' });
});
