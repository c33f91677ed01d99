import t from 'tap';
import { DOCUMENT_SANDBOX, needsDocumentSandbox } from '../http/document-sandbox';
import { functionFolder } from './helpers/functions';
import { startTestServer } from './helpers/server';

// A function's page that a browser would render as a document runs in an origin of its own (CSP
// sandbox), so it cannot read what the server's origin keeps: the console's key, other tenants'
// storage. Other responses are left as they are. (test/console.test.ts checks it in a browser.)
const PAGES = `
const page = (type) => (body, context) => new context.HTTPResponse({ statusCode: 200, headers: type === undefined ? {} : { 'Content-Type': type }, body: '<p>hi</p>' });
exports.html = page('text/html; charset=utf-8');
exports.upper = page('TEXT/HTML');
exports.svg = page('image/svg+xml');
exports.xhtml = page('application/xhtml+xml');
exports.untyped = page(undefined);
exports.plain = page('text/plain');
exports.json = () => ({ ok: true });
exports.text = () => 'hello';
exports.own = (body, context) => new context.HTTPResponse({ statusCode: 200, headers: { 'content-type': 'text/html', 'content-security-policy': "default-src 'self'" }, body: '<p>own</p>' });
`;

t.test('documents get the sandbox; text, JSON and error answers do not; a policy of its own is kept beside it', async (t) => {
  const s = await startTestServer();
  t.teardown(() => s.stop());
  const folder = functionFolder(PAGES);
  const expected: Record<string, string | null> = { html: DOCUMENT_SANDBOX, upper: DOCUMENT_SANDBOX, svg: DOCUMENT_SANDBOX, xhtml: DOCUMENT_SANDBOX, untyped: null, plain: null, json: null, text: null };
  for (const entry of Object.keys(expected)) await s.deploy(`public_${entry}`, folder, entry);
  for (const [entry, csp] of Object.entries(expected)) {
    const res = await fetch(`${s.url}/v2/run/${s.accountId}/public_${entry}`);
    await res.text();
    t.equal(res.status, 200, entry);
    t.equal(res.headers.get('content-security-policy'), csp, `${entry}: ${csp ?? 'no policy'}`);
  }
  await s.deploy('public_own', folder, 'own');
  const own = await fetch(`${s.url}/v2/run/${s.accountId}/public_own`);
  t.equal(own.headers.get('content-security-policy'), `default-src 'self', ${DOCUMENT_SANDBOX}`, 'both policies go out (a browser enforces each)');
  const missing = await fetch(`${s.url}/v2/run/${s.accountId}/public_nothing`);
  t.equal(missing.status, 404);
  t.equal(missing.headers.get('content-security-policy'), null, 'an error answer is JSON');
});

t.test('a response with no Content-Type at all is sandboxed (a browser may sniff it as HTML)', async (t) => {
  t.ok(needsDocumentSandbox({}));
  t.ok(needsDocumentSandbox({ 'x-other': 'text/plain' }));
  t.notOk(needsDocumentSandbox({ 'CONTENT-TYPE': 'application/json' }));
  t.notOk(needsDocumentSandbox({ 'content-type': 'text/htmlx' }), 'a type is matched whole');
});
