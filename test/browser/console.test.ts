import t from 'tap';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { browserMissing, launchBrowser, screenshotPath } from '../helpers/browser';
import { functionFolder } from '../helpers/functions';
import { startTestServer, type TestServer } from '../helpers/server';

// The web console in a real browser (Debian's Chromium, headless): signing in, the functions list,
// the invoke form, live logs, and output shown as text. One browser and one page for the file.

const missing = browserMissing();
if (missing) {
  t.plan(0, `skipped: ${missing}`);
} else {
  run();
}

const GREETER = `
exports.handler = (body, context) => {
  console.log('greeting ' + (body && body.name));
  if (body && body.level === 'warn') console.warn('a warning for ' + body.name);
  return { greeting: 'Hello ' + ((body && body.name) || 'World'), path: context.request.path, query: context.request.query };
};`;

const HOSTILE = `
exports.handler = (body) => {
  console.log('<script>window.__injected = 1</script><img src=x onerror="window.__injected = 2">' + (body && body.n));
  return '<b>bold?</b>';
};`;

/** Another tenant's page that reads what the origin keeps in the tab. */
const PAGE = `
exports.handler = (body, context) => new context.HTTPResponse({
  headers: { 'content-type': 'text/html; charset=utf-8' },
  body: '<!doctype html><title>page</title><script>try { document.title = "seen " + Object.values(sessionStorage).join(" "); } catch (e) { document.title = "blocked " + e.name; }</script>',
});`;

/** The live logs' state once it reads Live. (waitForFunction would evaluate a string, which the console's CSP refuses.) */
function liveState(page: Page) {
  return page.getByTestId('logs-state').getByText('Live', { exact: true });
}

function run(): void {
  let s: TestServer;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  const cspViolations: string[] = [];

  t.before(async () => {
    s = await startTestServer();
    await s.deploy('greeter', functionFolder(GREETER), 'handler', { env: { GREETING: 'secret value' } });
    await s.deploy('public_hostile', functionFolder(HOSTILE), 'handler');
    browser = await launchBrowser();
    context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    page = await context.newPage();
    page.on('console', (m) => {
      if (/Content Security Policy/i.test(m.text())) cspViolations.push(m.text());
    });
  });
  t.teardown(async () => {
    await browser?.close();
    await s?.stop();
  });

  t.test('the console is served on its own port with a strict Content-Security-Policy', async (t) => {
    t.not(s.consoleUrl, s.url, 'an origin of its own');
    const redirect = await fetch(`${s.consoleUrl}/console`, { redirect: 'manual' });
    t.equal(redirect.status, 308);
    t.equal(redirect.headers.get('location'), '/console/');
    const res = await fetch(`${s.consoleUrl}/console/`);
    t.equal(res.status, 200);
    t.match(res.headers.get('content-type'), /text\/html/);
    const csp = res.headers.get('content-security-policy') ?? '';
    t.match(csp, /default-src 'none'/);
    t.match(csp, /script-src 'self'(;|$)/, 'scripts only from the server, no inline script');
    t.notMatch(csp, /unsafe-inline|unsafe-eval/);
    t.equal(res.headers.get('x-frame-options'), 'DENY');
    const html = await res.text();
    t.notMatch(html, /<script>|<script(?![^>]*\bsrc=)[^>]*>/, 'no inline script in the page');
    const script = /src="(app-[A-Z0-9]+\.js)"/.exec(html)?.[1];
    t.ok(script, 'the page loads its script by a content-hashed name');
    const js = await fetch(`${s.consoleUrl}/console/${script}`, { headers: { 'accept-encoding': 'gzip' } });
    t.equal(js.status, 200);
    t.match(js.headers.get('cache-control'), /immutable/);
    const missingFile = await fetch(`${s.consoleUrl}/console/nope.js`);
    t.equal(missingFile.status, 404);
  });

  t.test('sign-in refuses a bad key and keeps a good one in sessionStorage only', async (t) => {
    await page.goto(`${s.consoleUrl}/console/`);
    await page.getByLabel('Account id').fill(s.accountId);
    await page.getByLabel('API key').fill('not-a-key');
    await page.getByRole('button', { name: 'Sign in' }).click();
    const alert = page.getByRole('alert');
    await alert.waitFor();
    t.match(await alert.textContent(), /not valid/);
    t.equal(await page.evaluate('sessionStorage.length'), 0, 'nothing kept after a refused key');

    // By keyboard alone: from the account field, Tab to the key, type it, Enter.
    await page.getByLabel('API key').fill('');
    await page.getByLabel('Account id').focus();
    await page.keyboard.press('Tab');
    await page.keyboard.type(s.apiKey);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Functions' }).waitFor();
    const stored = await page.evaluate<string>("Object.values(sessionStorage).join(' ')");
    t.match(stored, s.apiKey, 'the key is in sessionStorage');
    t.same(await context.cookies(), [], 'no cookie');
    t.notMatch(page.url(), s.apiKey, 'never in the URL');
    t.equal(await page.evaluate('localStorage.length'), 0, 'nothing in localStorage');

    await page.evaluate(`void document.head.appendChild(Object.assign(document.createElement('script'), { textContent: 'window.__inline = 1' }))`);
    t.equal(await page.evaluate('window.__inline'), undefined, 'the browser enforces the policy: an inline script does not run');
    t.match(cspViolations.join('\n'), /Content Security Policy/, 'and reports it');
    cspViolations.length = 0;
  });

  t.test('the functions list shows the deployed functions, sortable', async (t) => {
    const rows = page.locator('table.data tbody tr');
    await rows.first().waitFor();
    t.same(await rows.locator('td:first-child').allTextContents(), ['greeter', 'public_hostile']);
    t.match(await rows.nth(0).textContent(), /node8.*key/);
    t.match(await rows.nth(1).textContent(), /public/);
    await page.getByRole('button', { name: /^Name/ }).focus();
    await page.keyboard.press('Enter');
    t.same(await rows.locator('td:first-child').allTextContents(), ['public_hostile', 'greeter'], 'Enter on the sorted column header sorts the other way');
    t.equal(await page.locator('th[aria-sort="descending"]').count(), 1);
  });

  t.test('the invoke form calls the function and shows status, headers and the body', async (t) => {
    await page.getByRole('link', { name: 'greeter' }).click();
    await page.getByRole('heading', { name: 'greeter', level: 1 }).waitFor();
    t.match(await page.locator('dl.config').textContent(), /GREETING/, 'env names are shown');
    t.notMatch(await page.content(), /secret value/, 'env values are not');
    await page.getByLabel('Path').fill('/items/7');
    await page.getByLabel('Query').fill('lang=en');
    await page.getByRole('textbox', { name: 'Body' }).fill('{"name": "Ada"}');
    await page.getByRole('button', { name: 'Invoke' }).click();
    const status = page.getByTestId('invoke-status');
    await status.waitFor();
    t.equal((await status.textContent())?.trim(), '200 OK');
    const body = JSON.parse((await page.getByTestId('invoke-body').textContent()) ?? '');
    t.same(body, { greeting: 'Hello Ada', path: '/items/7', query: { lang: 'en' } });
    t.match(await page.getByTestId('invoke-body').textContent(), /\n {2}"greeting"/, 'JSON is pretty-printed');
    const headers = await page.locator('table.headers').textContent();
    t.match(headers, /x-service-request-id\s*[0-9a-f]{32}/);
    t.match(headers, /x-service-duration-usecs/);
    t.match(await page.locator('.result .status-line').textContent(), /server .*round trip/, 'the duration is shown');

    await page.getByRole('textbox', { name: 'Body' }).fill('{"name": ');
    await page.getByRole('button', { name: 'Invoke' }).click();
    t.match(await page.getByRole('alert').textContent(), /not valid JSON/, 'a bad JSON body is caught before sending');
    const shot = screenshotPath('console-invoke');
    if (shot) await page.screenshot({ path: shot, fullPage: true });
  });

  t.test('live logs show a console.log of a call made outside the browser, with filter and pause', async (t) => {
    await liveState(page).waitFor();
    const logs = page.getByTestId('logs');
    await logs.getByText('greeting Ada').first().waitFor({ timeout: 5_000 });
    t.pass('the backlog holds the form call');

    const res = await s.call('greeter', { body: JSON.stringify({ name: 'Grace' }) });
    t.equal(res.status, 200);
    await logs.getByText('greeting Grace').waitFor({ timeout: 10_000 });
    t.pass('a line written by a call from outside arrives');

    await page.getByLabel('Level').selectOption({ label: 'Warnings and errors' });
    t.equal(await logs.getByText('greeting Grace').count(), 0, 'the level filter hides log lines');
    await s.call('greeter', { body: JSON.stringify({ name: 'Linus', level: 'warn' }) });
    await logs.getByText('a warning for Linus').waitFor({ timeout: 10_000 });
    await page.getByLabel('Level').selectOption({ label: 'All levels' });

    await page.getByRole('button', { name: 'Pause' }).click();
    await s.call('greeter', { body: JSON.stringify({ name: 'Paused' }) });
    await page.getByRole('button', { name: /Resume \(\d+ new\)/ }).waitFor({ timeout: 10_000 });
    t.equal(await logs.getByText('greeting Paused').count(), 0, 'nothing new is shown while paused');
    await page.getByRole('button', { name: /Resume/ }).click();
    await logs.getByText('greeting Paused').waitFor();
    t.pass('resume shows what arrived meanwhile');
    const shot = screenshotPath('console-logs');
    if (shot) await logs.screenshot({ path: shot });
  });

  t.test('a log line and a body holding <script> are shown as text', async (t) => {
    await page.evaluate("location.hash = '#/functions/public_hostile'");
    await page.getByRole('heading', { name: 'public_hostile', level: 1 }).waitFor();
    await liveState(page).waitFor();
    await s.call('public_hostile', { body: '{"n": 42}', key: null });
    const line = page.getByTestId('logs').getByText('<script>window.__injected = 1</script><img src=x onerror="window.__injected = 2">42');
    await line.waitFor({ timeout: 10_000 });
    t.pass('the markup is visible as text');
    await page.getByRole('button', { name: 'Invoke' }).click();
    await page.getByTestId('invoke-status').waitFor();
    t.equal(await page.getByTestId('invoke-body').textContent(), '"<b>bold?</b>"');
    t.equal(await page.locator('main script, main img, [data-testid="invoke-body"] b').count(), 0, 'no element was made from the output');
    t.equal(await page.evaluate('window.__injected'), undefined, 'nothing ran');
  });

  t.test("another tenant's page opened in the console's tab cannot read the signed-in key", async (t) => {
    const tenant = await s.createAccount();
    await s.engine.deploy(tenant.accountId, { name: 'public_page', runtime: 'node8', file: 'function.js', entrypoint: 'handler', env: {} }, { dir: functionFolder(PAGE) });
    t.match(await page.evaluate<string>("Object.values(sessionStorage).join(' ')"), s.apiKey, 'the tab is signed in');
    await page.goto(`${s.url}/v2/run/${tenant.accountId}/public_page`);
    const title = await page.title();
    t.match(title, /^blocked SecurityError/, `the page's script ran in an origin of its own (${title})`);
    t.notMatch(title, s.apiKey);
    await page.goto(`${s.consoleUrl}/console/`);
    await page.getByRole('heading', { name: 'Functions' }).waitFor();
    t.pass('back in the console, still signed in');
  });

  t.test('the key is never in the URL, a cookie or local storage; signing out forgets it', async (t) => {
    t.same(cspViolations, [], 'the console runs under its Content-Security-Policy without violations');
    t.same(await context.cookies(), []);
    t.equal(await page.evaluate('localStorage.length'), 0);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    t.equal(await page.evaluate('sessionStorage.length'), 0);
  });

  t.test('the live logs route checks the key as the management API does', async (t) => {
    const path = `${s.consoleUrl}/v2/accounts/${s.accountId}/functions/greeter/logs/live`;
    t.equal((await fetch(path)).status, 401, 'no key');
    t.equal((await fetch(path, { headers: { 'X-Service-Api-Key': 'wrong' } })).status, 403, 'a bad key');
    const other = await s.createAccount();
    t.equal((await fetch(path, { headers: { 'X-Service-Api-Key': other.apiKey } })).status, 403, "another account's key");
    const missingFn = await fetch(`${s.consoleUrl}/v2/accounts/${s.accountId}/functions/nope/logs/live`, { headers: { 'X-Service-Api-Key': s.apiKey } });
    t.equal(missingFn.status, 404);
    t.equal(((await missingFn.json()) as { errorCode: string }).errorCode, 'ERR_NO_SUCH_FUNCTION');
  });
}
