import t from 'tap';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { browserMissing, launchBrowser } from '../helpers/browser';
import { functionFolder } from '../helpers/functions';
import { startTestServer, type TestServer } from '../helpers/server';

// Issue 22, finding 2, in Chromium: another tenant's page, opened in a tab signed in to the
// console, must not read the console's key, nor what the function origin keeps for other tenants.
// Each page below answers one of the Content-Type forms Chromium rendered as HTML (and ran the
// script of) before the fix; its script reports what it could read.

const missing = browserMissing();
if (missing) {
  t.plan(0, `skipped: ${missing}`);
} else {
  run();
}

/** What the attacker's script does: read every store of its origin, and say so in the title and the console. */
const PROBE = `var r; try { r = 'seen ' + JSON.stringify(Object.assign({}, sessionStorage)) + ' ' + JSON.stringify(Object.assign({}, localStorage)) + ' ' + document.cookie; } catch (e) { r = 'blocked ' + e.name; } document.title = r; console.log('probe ' + r);`;
const HTML = `<!doctype html><html><head><title>page</title></head><body><p>a tenant's page</p><script>${PROBE}</script></body></html>`;
const XHTML = `<?xml version="1.0"?>\n<html xmlns="http://www.w3.org/1999/xhtml"><head><title>page</title></head><body><p>a tenant's page</p><script>//<![CDATA[\n${PROBE}\n//]]></script></body></html>`;

/** Each case: the function's headers, and its body. */
const CASES: Record<string, { headers: Record<string, string>; body: string }> = {
  list: { headers: { 'Content-Type': 'text/plain, text/html' }, body: HTML },
  twice: { headers: { 'Content-Type': 'text/plain', 'content-type': 'text/html' }, body: HTML },
  unknown: { headers: { 'Content-Type': 'unknown/unknown' }, body: HTML },
  app_unknown: { headers: { 'Content-Type': 'application/unknown' }, body: HTML },
  any: { headers: { 'Content-Type': '*/*' }, body: HTML },
  empty: { headers: { 'Content-Type': '' }, body: HTML },
  html_word: { headers: { 'Content-Type': 'html' }, body: HTML },
  xsl: { headers: { 'Content-Type': 'text/xsl' }, body: XHTML },
  upper: { headers: { 'Content-Type': 'TEXT/HTML' }, body: HTML },
  charset: { headers: { 'Content-Type': 'text/html;charset=utf-8' }, body: HTML },
  plain: { headers: { 'Content-Type': 'text/plain' }, body: HTML },
  own_sniff: { headers: { 'Content-Type': 'text/plain', 'X-Content-Type-Options': 'none' }, body: HTML },
};
/** Plain HTML: the script must run (in its sandbox) — this shows the probe works. */
const MUST_RUN = ['upper', 'charset'];

/** A one-page PDF, blank. */
const PDF =
  '%PDF-1.1\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj 2 0 obj<</Type/Pages/Kids[3 0 R]/Count 1>>endobj 3 0 obj<</Type/Page/Parent 2 0 R/MediaBox[0 0 200 200]>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF\n';

const PAGES = `
const CASES = ${JSON.stringify(CASES)};
for (const [name, c] of Object.entries(CASES)) exports[name] = (body, context) => new context.HTTPResponse({ headers: c.headers, body: c.body });
exports.json = () => ({ a: 'JSON answer' });
exports.pdf = (body, context) => new context.HTTPResponse({ headers: { 'Content-Type': 'application/pdf' }, body: ${JSON.stringify(PDF)} });
exports.moved = (body, context) => new context.HTTPResponse({ statusCode: 302, headers: { Location: '/elsewhere', 'Set-Cookie': 'moved=1; Path=/' } });
exports.form = (body, context) => new context.HTTPResponse({
  headers: { 'content-type': 'text/html' },
  body: '<!doctype html><form method="POST" enctype="text/plain" action="' + context.request.query.to + '"><input name=\\'{"account":"' + context.request.query.account + '","function":"public_upper","method":"GET","x":"\\' value=\\'"}\\'></form><script>document.forms[0].submit()</script>',
});
`;

function run(): void {
  let s: TestServer;
  let attacker: { accountId: string; apiKey: string };
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  const probes: string[] = [];
  const SECRET = 'tenant-secret-7f3a';

  t.before(async () => {
    s = await startTestServer();
    attacker = await s.createAccount();
    const folder = functionFolder(PAGES);
    for (const name of [...Object.keys(CASES), 'json', 'moved', 'form', 'pdf']) {
      await s.engine.deploy(attacker.accountId, { name: `public_${name}`, runtime: 'node8', file: 'function.js', entrypoint: name, env: {} }, { dir: folder });
    }
    await s.deploy('public_page', folder, 'upper');
    await s.deploy('public_moved', folder, 'moved');
    browser = await launchBrowser();
    context = await browser.newContext();
    page = await context.newPage();
    page.on('console', (m) => {
      if (m.text().startsWith('probe ')) probes.push(`${page.url()} ${m.text()}`);
    });
    // The victim signs in to the console in this tab.
    await page.goto(`${s.consoleUrl}/console/`);
    await page.getByLabel('Account id').fill(s.accountId);
    await page.getByLabel('API key').fill(s.apiKey);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Functions' }).waitFor();
  });
  t.teardown(async () => {
    await browser?.close();
    await s?.stop();
  });

  const attackUrl = (name: string) => `${s.url}/v2/run/${attacker.accountId}/public_${name}`;

  t.test("a tenant's page in the console's tab reads neither the console's key nor another tenant's storage", async (t) => {
    t.match(await page.evaluate<string>('Object.values(sessionStorage).join(" ")'), s.apiKey, 'the tab is signed in');
    // Another tenant keeps something in the function origin (a JSON answer is a page of that origin).
    await page.goto(`${s.url}/v2/run/${attacker.accountId}/public_json`);
    await page.evaluate(`sessionStorage.setItem('victim', '${SECRET}'); localStorage.setItem('victim', '${SECRET}'); document.cookie = 'victim=${SECRET}; path=/'`);
    for (const name of Object.keys(CASES)) {
      const before = probes.length;
      // A download (a type Chromium does not render) leaves the tab where it was: that is a pass too.
      const outcome = await page.goto(attackUrl(name)).then(
        (res) => `loaded ${res?.status()} ${res?.headers()['content-security-policy'] ?? 'no policy'}`,
        (err: Error) => `not loaded: ${err.message.split('\n')[0]}`,
      );
      const title = page.url() === attackUrl(name) ? await page.title() : '';
      const seen = [title, ...probes.slice(before)].join(' | ');
      t.notMatch(seen, s.apiKey, `${name}: the console's key is not readable (${outcome}; ${seen || 'no script ran'})`);
      t.notMatch(seen, SECRET, `${name}: nor what the function origin keeps`);
      t.notMatch(seen, /^seen /, `${name}: if its script ran, it ran in an opaque origin`);
      if (MUST_RUN.includes(name)) t.match(title, /^blocked SecurityError/, `${name}: the script ran, sandboxed`);
    }
    await page.goto(`${s.consoleUrl}/console/`);
    await page.getByRole('heading', { name: 'Functions' }).waitFor();
    t.match(await page.evaluate<string>('Object.values(sessionStorage).join(" ")'), s.apiKey, 'back in the console, still signed in');
  });

  t.test("a PDF gets the sandbox, and Chromium's viewer still shows it", async (t) => {
    const res = await page.goto(attackUrl('pdf'));
    t.match((await res?.allHeaders())?.['content-security-policy'], /^sandbox /, 'the answer carries the sandbox');
    const viewer = async () => page.frames().some((f) => f.url().startsWith('chrome-extension://'));
    const until = Date.now() + 15_000;
    while (!(await viewer()) && Date.now() < until) await new Promise((r) => setTimeout(r, 100));
    t.ok(await viewer(), "the PDF viewer's frame is there");
  });

  t.test("the console's port never renders a function's page, even when a page posts a form to it", async (t) => {
    const before = probes.length;
    const res = await page.goto(`${s.consoleUrl}/v2/run/${attacker.accountId}/public_upper`);
    t.equal(res?.status(), 404);
    t.match(await page.locator('body').textContent(), /"errorCode":"ERR_NOT_FOUND".*function port/, 'a JSON error naming the function port, shown as text');
    t.equal(await page.title(), '', 'no page of the function was rendered');
    await page.goto(`${s.url}/v2/run/${attacker.accountId}/public_form?to=${encodeURIComponent(`${s.consoleUrl}/console/invoke`)}&account=${attacker.accountId}`);
    await page.waitForURL(`${s.consoleUrl}/console/invoke`);
    t.match(await page.locator('body').textContent(), /ERR_BAD_REQUEST.*JSON request/, 'a form post to the invoke route is refused as JSON');
    t.same(probes.slice(before), [], 'no script of the function ran in either');
    await page.goto(`${s.consoleUrl}/console/`);
    await page.getByRole('heading', { name: 'Functions' }).waitFor();
    t.match(await page.evaluate<string>('Object.values(sessionStorage).join(" ")'), s.apiKey, 'still signed in');
  });

  t.test('the invoke form calls a function across the origins and shows its page as text, its redirect as data', async (t) => {
    const before = probes.length;
    await page.evaluate("location.hash = '#/functions/public_page'");
    await page.getByRole('heading', { name: 'public_page', level: 1 }).waitFor();
    await page.getByLabel('Method').selectOption('GET');
    await page.getByRole('button', { name: 'Invoke' }).click();
    await page.getByTestId('invoke-status').waitFor();
    t.equal((await page.getByTestId('invoke-status').textContent())?.trim(), '200 OK');
    t.equal(await page.getByTestId('invoke-body').textContent(), HTML, 'the page is shown as text');
    const headers = await page.locator('table.headers').textContent();
    t.match(headers, /content-typeTEXT\/HTML/);
    t.match(headers, /x-content-type-optionsnosniff/);
    t.match(headers, /content-security-policysandbox allow-downloads/, 'with the sandbox a client of the function port gets');
    t.same(probes.slice(before), [], 'its script did not run');

    await page.evaluate("location.hash = '#/functions/public_moved'");
    await page.getByRole('heading', { name: 'public_moved', level: 1 }).waitFor();
    await page.getByRole('button', { name: 'Invoke' }).click();
    const status = page.getByTestId('invoke-status');
    await status.waitFor();
    t.equal((await status.textContent())?.trim(), '302 Found', 'a redirect is shown, not followed');
    t.match(await page.locator('table.headers').textContent(), /location\/elsewhere/);
    t.same(
      (await context.cookies(s.consoleUrl)).filter((c) => c.name === 'moved'),
      [],
      "the function's Set-Cookie did not reach the console's origin",
    );
    t.match(await page.evaluate<string>('Object.values(sessionStorage).join(" ")'), s.apiKey, 'still signed in');
  });
}
