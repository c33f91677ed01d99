import { request as httpRequest, type IncomingMessage } from 'node:http';
import t from 'tap';
import { functionFolder } from '../helpers/functions';
import { startTestServer, type TestServer } from '../helpers/server';

// A Set-Cookie set twice goes out as two header lines, never joined by a comma (a cookie's
// Expires holds one), in every interface that can set it twice (issue 25).
const A = 'session=abc; Path=/; Expires=Wed, 21 Oct 2026 07:28:00 GMT; HttpOnly';
const B = 'theme=dark; Path=/';
let s: TestServer;

const FUNCTIONS: [name: string, source: string, entrypoint: string][] = [
  [
    'fetch_style',
    `export default { fetch() {
      const headers = new Headers({ 'content-type': 'text/plain' });
      headers.append('Set-Cookie', ${JSON.stringify(A)});
      headers.append('Set-Cookie', ${JSON.stringify(B)});
      return new Response('two cookies', { headers });
    } };`,
    'default',
  ],
  [
    'fetch_streamed',
    `export default { fetch() {
      const headers = new Headers();
      headers.append('Set-Cookie', ${JSON.stringify(A)});
      headers.append('Set-Cookie', ${JSON.stringify(B)});
      const body = new ReadableStream({ start(c) { c.enqueue(new TextEncoder().encode('two cookies')); c.close(); } });
      return new Response(body, { headers });
    } };`,
    'default',
  ],
  [
    'seed_style',
    `exports.handler = (body, context) => new context.HTTPResponse({ statusCode: 200, headers: { 'Set-Cookie': [${JSON.stringify(A)}, ${JSON.stringify(B)}] }, body: 'two cookies' });`,
    'handler',
  ],
  [
    'node_server',
    `require('http').createServer((req, res) => {
      res.setHeader('Set-Cookie', [${JSON.stringify(A)}, ${JSON.stringify(B)}]);
      res.end('two cookies');
    }).listen(3000);`,
    'handler',
  ],
  [
    'node_server_streamed',
    `require('http').createServer((req, res) => {
      res.setHeader('Set-Cookie', [${JSON.stringify(A)}, ${JSON.stringify(B)}]);
      res.write('two ');
      setTimeout(() => res.end('cookies'), 10);
    }).listen(3000);`,
    'handler',
  ],
];
const PYTHON = `def handler(body, req):\n    return req.HTTPResponse(200, {'Set-Cookie': [${JSON.stringify(A)}, ${JSON.stringify(B)}]}, 'two cookies')\n`;

t.before(async () => {
  s = await startTestServer();
  for (const [name, source, entrypoint] of FUNCTIONS) await s.deploy(name, functionFolder(source), entrypoint);
  await s.deployPython('python_style', functionFolder('', { 'function.py': PYTHON }), 'handler');
});
t.teardown(() => s?.stop());

/** A GET with Node's client, whose rawHeaders keep every header line as it came. */
function get(name: string): Promise<{ res: IncomingMessage; body: string }> {
  return new Promise((resolve, reject) => {
    httpRequest(`${s.url}/v2/run/${s.accountId}/${name}`, { headers: { 'X-Service-Api-Key': s.apiKey } }, (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += String(chunk)));
      res.on('end', () => resolve({ res, body }));
    })
      .on('error', reject)
      .end();
  });
}

for (const name of [...FUNCTIONS.map(([n]) => n), 'python_style']) {
  t.test(`${name}: Set-Cookie set twice goes out as two lines`, async (t) => {
    const { res, body } = await get(name);
    t.equal(res.statusCode, 200, body);
    t.equal(body, 'two cookies');
    const lines: string[] = [];
    for (let i = 0; i < res.rawHeaders.length; i += 2) if (res.rawHeaders[i]!.toLowerCase() === 'set-cookie') lines.push(res.rawHeaders[i + 1]!);
    t.same(lines, [A, B], 'one line per cookie, each whole');
  });
}

t.test('sdk.invoke reads a repeated Set-Cookie as fetch reads it: joined with a comma', async (t) => {
  await s.deploy(
    'caller',
    functionFolder(`const sdk = require('sdk');
    exports.handler = async (body, context) => {
      const answer = await sdk.invoke(context.env.SERVICE_ACCOUNT_ID, 'seed_style', context.env.KEY, {});
      return { cookie: answer.headers['set-cookie'] };
    };`),
    'handler',
    { env: { KEY: s.apiKey } },
  );
  const res = await s.call('caller');
  t.same(await res.json(), { cookie: `${A}, ${B}` });
});

t.test('a header array of something else than strings is refused, naming the header', async (t) => {
  await s.deploy('bad_array', functionFolder(`exports.handler = (body, context) => new context.HTTPResponse({ headers: { 'Set-Cookie': ['a=1', 2] } });`), 'handler');
  const res = await s.call('bad_array');
  t.equal(res.status, 502);
  t.match(((await res.json()) as { message: string }).message, /HTTPResponse header "Set-Cookie" must be a string or an array of strings/);
});
