import t from 'tap';
import { JSON_HEADERS } from '../../engine/response';
import { DOCUMENT_SANDBOX, essenceOf, needsDocumentSandbox } from '../../http/document-sandbox';
import { functionFolder } from '../helpers/functions';
import { startTestServer } from '../helpers/server';

// Every answer a browser might render as a document runs in an opaque origin (CSP sandbox), so it
// cannot read what the function origin keeps for other tenants; every answer says nosniff.
// Content-Type is judged as Fetch's "extract a MIME type" reads it. (test/browser/console-origin.test.ts
// opens these pages in Chromium.)

/** Headers → whether they need the sandbox. */
const VERDICTS: [string, Record<string, string>, boolean][] = [
  ['no Content-Type', {}, true],
  ['another header only', { 'x-other': 'text/plain' }, true],
  ['an empty value', { 'content-type': '' }, true],
  ['whitespace only', { 'content-type': ' \t' }, true],
  ['no subtype: html', { 'content-type': 'html' }, true],
  ['text/html', { 'content-type': 'text/html' }, true],
  ['TEXT/HTML', { 'Content-Type': 'TEXT/HTML' }, true],
  ['text/html with parameters', { 'content-type': 'text/html;charset=utf-8' }, true],
  ['XHTML', { 'content-type': 'application/xhtml+xml' }, true],
  ['SVG', { 'content-type': 'image/svg+xml' }, true],
  ['text/xml', { 'content-type': 'text/xml' }, true],
  ['text/xsl', { 'content-type': 'text/xsl' }, true],
  ['any +xml', { 'content-type': 'application/rss+xml' }, true],
  ['an image type ending in +xml', { 'content-type': 'image/foo+xml' }, true],
  ['*/*', { 'content-type': '*/*' }, true],
  ['unknown/unknown', { 'content-type': 'unknown/unknown' }, true],
  ['application/unknown', { 'content-type': 'application/unknown' }, true],
  ['multipart/x-mixed-replace', { 'content-type': 'multipart/x-mixed-replace; boundary=x' }, true],
  ['a list ending in HTML', { 'content-type': 'text/plain, text/html' }, true],
  ['a list starting with HTML', { 'content-type': 'text/html, text/plain' }, true],
  ['a list with an invalid item', { 'content-type': 'text/plain, x' }, true],
  ['a trailing comma', { 'content-type': 'text/plain,' }, true],
  ['a comma in a quoted parameter', { 'content-type': 'text/plain; x="a, text/html"' }, true],
  ['two headers in two cases', { 'Content-Type': 'text/plain', 'content-type': 'text/html' }, true],
  ['two headers, the first HTML', { 'CONTENT-TYPE': 'text/html', 'content-type': 'text/plain' }, true],
  ['a space inside the subtype', { 'content-type': 'text/plain x' }, true],
  ['a vertical tab (not HTTP whitespace)', { 'content-type': '\vtext/plain' }, true],
  ['a non-ASCII letter', { 'content-type': 'text/pláin' }, true],
  ['a type matched whole', { 'content-type': 'text/htmlx' }, true],
  ['a prefix of a listed type', { 'content-type': 'text/plai' }, true],
  ['text/markdown (not listed)', { 'content-type': 'text/markdown' }, true],
  ["PDF (its viewer is the browser's affair)", { 'content-type': 'application/pdf' }, true],
  ['a returned value (JSON_HEADERS)', JSON_HEADERS, false],
  ['application/json', { 'content-type': 'application/json' }, false],
  ['JSON in capitals with a charset', { 'CONTENT-TYPE': 'Application/JSON; charset=utf-8' }, false],
  ['+json', { 'content-type': 'application/problem+json' }, false],
  ['text/plain', { 'content-type': 'text/plain; charset=utf-8' }, false],
  ['whitespace around', { 'content-type': ' \ttext/plain \t; charset=utf-8 ' }, false],
  ['text/csv', { 'content-type': 'text/csv' }, false],
  ['text/css', { 'content-type': 'text/css' }, false],
  ['text/javascript', { 'content-type': 'text/javascript' }, false],
  ['PNG', { 'content-type': 'image/png' }, false],
  ['audio', { 'content-type': 'audio/mpeg' }, false],
  ['video', { 'content-type': 'video/mp4' }, false],
  ['a font', { 'content-type': 'font/woff2' }, false],
  ['bytes', { 'content-type': 'application/octet-stream' }, false],
  ['a list of non-documents', { 'content-type': 'text/plain, application/json' }, false],
  ['two headers, both text', { 'Content-Type': 'text/plain', 'content-type': 'text/csv' }, false],
];

t.test('the sandbox is left out only when every MIME type named is a known non-document type', async (t) => {
  for (const [what, headers, sandbox] of VERDICTS) t.equal(needsDocumentSandbox(headers), sandbox, `${what}: ${sandbox ? 'sandbox' : 'none'}`);
  // Past the kept verdicts' bound, and back: the same answers.
  for (let i = 0; i < 300; i++) needsDocumentSandbox({ 'content-type': `text/x-${i}` });
  for (const [what, headers, sandbox] of VERDICTS) t.equal(needsDocumentSandbox(headers), sandbox, `${what}, judged again`);
});

t.test('a MIME type parses as the MIME Sniffing standard says', async (t) => {
  t.same(essenceOf('text/html'), ['text', 'html']);
  t.same(essenceOf(' Text/HTML ;charset=x'), ['text', 'html']);
  t.same(essenceOf('*/*'), ['*', '*'], 'a token: it parses (and Fetch skips it)');
  for (const bad of ['', 'html', '/html', 'text/', 'text /html', 'text/ht ml', 'text/html"', '"text/html"', 'text/html/x']) t.equal(essenceOf(bad), undefined, JSON.stringify(bad));
});

const PAGES = `
const page = (headers) => (body, context) => new context.HTTPResponse({ statusCode: 200, headers, body: '<p>hi</p>' });
exports.html = page({ 'Content-Type': 'text/html; charset=utf-8' });
exports.listed = page({ 'Content-Type': 'text/plain, text/html' });
exports.twice = page({ 'Content-Type': 'text/plain', 'content-type': 'text/html' });
exports.empty = page({ 'Content-Type': '' });
exports.plain = page({ 'Content-Type': 'text/plain' });
exports.sniffer = page({ 'Content-Type': 'text/html', 'X-Content-Type-Options': 'sniff-please' });
exports.json = () => ({ ok: true });
exports.text = () => 'hello';
exports.own = (body, context) => new context.HTTPResponse({ statusCode: 200, headers: { 'content-type': 'text/html', 'content-security-policy': "default-src 'self'" }, body: '<p>own</p>' });
`;

t.test('over HTTP: documents get the sandbox, every answer says nosniff once, a policy of its own is kept beside ours', async (t) => {
  const s = await startTestServer();
  t.teardown(() => s.stop());
  const folder = functionFolder(PAGES);
  const expected: Record<string, string | null> = {
    html: DOCUMENT_SANDBOX,
    listed: DOCUMENT_SANDBOX,
    twice: DOCUMENT_SANDBOX,
    empty: DOCUMENT_SANDBOX,
    sniffer: DOCUMENT_SANDBOX,
    plain: null,
    json: null,
    text: null,
  };
  for (const entry of Object.keys(expected)) await s.deploy(`public_${entry}`, folder, entry);
  for (const [entry, csp] of Object.entries(expected)) {
    const res = await fetch(`${s.url}/v2/run/${s.accountId}/public_${entry}`);
    await res.text();
    t.equal(res.status, 200, entry);
    t.equal(res.headers.get('content-security-policy'), csp, `${entry}: ${csp ?? 'no policy'}`);
    t.equal(res.headers.get('x-content-type-options'), 'nosniff', `${entry}: nosniff, once (a function's own value is dropped)`);
  }
  await s.deploy('public_own', folder, 'own');
  const own = await fetch(`${s.url}/v2/run/${s.accountId}/public_own`);
  t.equal(own.headers.get('content-security-policy'), `default-src 'self', ${DOCUMENT_SANDBOX}`, 'both policies go out (a browser enforces each)');
  const missing = await fetch(`${s.url}/v2/run/${s.accountId}/public_nothing`);
  t.equal(missing.status, 404);
  t.equal(missing.headers.get('content-security-policy'), null, 'an error answer is JSON');
  t.equal(missing.headers.get('x-content-type-options'), 'nosniff');
});
