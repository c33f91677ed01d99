import type { Test } from 'tap';
import { fixture, type TestServer } from './server';

/**
 * The invocation contract of SPEC §2 (and §3's warm state and logs), run against each runtime as
 * the store's conformance suite is run against each store: the same handlers in each language
 * (test/fixtures/conformance-<runtime>/), deployed once each and called many times.
 */
export interface RuntimeUnderTest {
  /** The runtime name deployed (`node8`, `python2`). */
  runtime: string;
  /** The fixture folder and its entry file. */
  folder: string;
  file: string;
  /** How the runtime's error message for `raises` reads, and where its stack points. */
  errorMessage: RegExp;
  errorStack: RegExp;
}

const ENTRYPOINTS = ['request', 'text', 'nothing', 'rawBytes', 'explicit', 'badStatus', 'raises', 'spin', 'logs', 'counts'];
const TIMEOUT_MS = 1000;
const REQUEST_ID = /^[0-9a-f]{32}$/;
const DURATION = /^\d+(\.\d+)?$/;

export const NODE8: RuntimeUnderTest = {
  runtime: 'node8',
  folder: fixture('conformance-node8'),
  file: 'function.js',
  errorMessage: /^Error: the handler failed on purpose$|^the handler failed on purpose$/,
  errorStack: /function\.js:\d+/,
};

export const PYTHON: RuntimeUnderTest = {
  runtime: 'python2',
  folder: fixture('conformance-python'),
  file: 'function.py',
  errorMessage: /^ValueError: the handler failed on purpose$/,
  errorStack: /File "\/function\/function\.py", line \d+, in raises/,
};

export function runtimeConformance(t: Test, server: () => TestServer, impl: RuntimeUnderTest): void {
  const fn = (entry: string) => `conf_${impl.runtime}_${entry}`;
  const call = (entry: string, init?: Parameters<TestServer['call']>[1]) => server().call(fn(entry), init);

  t.before(async () => {
    for (const entry of ENTRYPOINTS) {
      await server().engine.deploy(
        server().accountId,
        { name: fn(entry), runtime: impl.runtime, file: impl.file, entrypoint: entry, env: { GREETING: 'hi' }, ...(entry === 'spin' ? { timeoutMs: TIMEOUT_MS } : {}) },
        { dir: impl.folder },
      );
    }
  });

  t.test('the request object: method, path, query (last wins), lower-case headers, body parsed and raw, request id, env', async (t) => {
    const res = await call('request', { method: 'PUT', path: '/a/b', query: 'x=1&x=2&y=z', headers: { 'X-Thing': 'v', 'content-type': 'application/json' }, body: '{"n":1}' });
    t.equal(res.status, 200);
    const out = (await res.json()) as Record<string, unknown>;
    t.same(out, {
      body: { n: 1 },
      method: 'PUT',
      path: '/a/b',
      query: { x: '2', y: 'z' },
      thing: 'v',
      raw: '{"n":1}',
      requestId: res.headers.get('x-service-request-id'),
      env: { GREETING: 'hi', SERVICE_ACCOUNT_ID: server().accountId },
    });
    const bare = (await (await call('request')).json()) as Record<string, unknown>;
    t.same([bare.body, bare.path], [{}, '/'], 'an empty body gives {}; no path gives /');
    const notJson = (await (await call('request', { body: 'plain text' })).json()) as Record<string, unknown>;
    t.same([notJson.body, notJson.raw], ['undefined', 'plain text'], 'a body that is not JSON gives undefined/None; its bytes stay raw');
  });

  t.test('implicit responses: JSON (a string in quotes, nothing as null), bytes raw as octet-stream', async (t) => {
    const text = await call('text');
    t.same([text.status, text.headers.get('content-type'), await text.text()], [200, 'application/json', '"hi"']);
    const nothing = await call('nothing');
    t.same([nothing.status, nothing.headers.get('content-type'), await nothing.text()], [200, 'application/json', 'null']);
    const bytes = await call('rawBytes');
    t.equal(bytes.headers.get('content-type'), 'application/octet-stream');
    t.same([...new Uint8Array(await bytes.arrayBuffer())], [0, 1, 255]);
  });

  t.test('explicit responses: status, headers and a bytes body as given; a status outside 100-599 is 502 ERR_BAD_RESPONSE', async (t) => {
    const res = await call('explicit');
    t.same([res.status, res.headers.get('content-type'), res.headers.get('x-custom')], [201, 'image/png', 'yes']);
    t.same([...new Uint8Array(await res.arrayBuffer())], [0x89, 0x50, 0x4e, 0x47]);
    const bad = await call('badStatus');
    t.equal(bad.status, 502);
    const error = (await bad.json()) as { errorCode: string; message: string };
    t.equal(error.errorCode, 'ERR_BAD_RESPONSE');
    t.match(error.message, /status_?code.*42/i, 'the message names the status and its value');
  });

  t.test("a handler that throws: 500 ERR_FUNCTION_FAILED with the user's message and stack, no host frames", async (t) => {
    const res = await call('raises');
    t.equal(res.status, 500);
    const error = (await res.json()) as { errorCode: string; message: string; requestId: string; stack: string };
    t.equal(error.errorCode, 'ERR_FUNCTION_FAILED');
    t.match(error.message, impl.errorMessage);
    t.equal(error.requestId, res.headers.get('x-service-request-id'), 'the body names the request the headers name');
    t.match(error.stack, impl.errorStack);
    t.notMatch(error.stack, /dist\/|node_modules|runtime|pyodide|_islet|isolated-vm/, "the user's frames only");
  });

  t.test('every answer, success or error, carries a request id of 32 hex characters and the handler duration', async (t) => {
    const ids = new Set<string>();
    for (const [entry, init] of [['text'], ['raises'], ['badStatus'], ['nothing', { key: 'isk_wrong' }], ['request', { method: 'HEAD' }]] as const) {
      const res = await call(entry, init);
      await res.arrayBuffer();
      const id = res.headers.get('x-service-request-id') ?? '';
      t.match(id, REQUEST_ID, `${entry} ${res.status}: request id`);
      if (res.status < 400 || res.status >= 500) t.match(res.headers.get('x-service-duration-usecs') ?? '', DURATION, `${entry} ${res.status}: duration`);
      ids.add(id);
    }
    t.equal(ids.size, 5, 'unique per request');
  });

  t.test('HEAD runs the handler and answers its status and headers, no body', async (t) => {
    const before = Number(await (await call('counts')).text());
    const head = await call('counts', { method: 'HEAD' });
    t.equal(head.status, 200);
    t.equal(head.headers.get('content-type'), 'application/json');
    t.equal(await head.text(), '');
    t.equal(Number(await (await call('counts')).text()), before + 2, 'the HEAD call ran the handler');
  });

  t.test('module-level state survives between calls of a warm instance', async (t) => {
    const first = Number(await (await call('counts')).text());
    t.equal(Number(await (await call('counts')).text()), first + 1);
  });

  t.test('what the handler prints is in its logs, under its request id', async (t) => {
    const res = await call('logs');
    const requestId = (await res.json()) as string;
    t.equal(requestId, res.headers.get('x-service-request-id'));
    const entries = (await server().internals.logs.read(server().accountId, fn('logs'))).filter((e) => e.requestId === requestId);
    t.ok(
      entries.some((e) => e.message === `conformance line ${requestId}`),
      'the printed line, with the request id',
    );
  });

  t.test('a runaway handler: 504 ERR_TIMEOUT, stopped; the next call is answered', async (t) => {
    const res = await call('spin');
    t.equal(res.status, 504);
    t.equal(((await res.json()) as { errorCode: string }).errorCode, 'ERR_TIMEOUT');
    const next = await call('text');
    t.equal(next.status, 200);
    await next.text();
  });
}
