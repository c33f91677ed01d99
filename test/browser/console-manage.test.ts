import t from 'tap';
import type { Browser, Locator, Page } from 'playwright-core';
import { browserMissing, launchBrowser, screenshotPath } from '../helpers/browser';
import { functionFolder } from '../helpers/functions';
import { startTestServer, type TestServer } from '../helpers/server';

// The console's operations pages in a real browser: the list's figures, the metrics charts, the
// versions (rollback, split, promote), the keys page, and what an invoke key may see.

const missing = browserMissing();
if (missing) {
  t.plan(0, `skipped: ${missing}`);
} else {
  run();
}

const versionSource = (v: string) => `
exports.handler = (body) => {
  if (body && body.fail) throw new Error('asked to fail');
  return { version: '${v}' };
};`;

const CALLS = 40;

/** The part of a canvas element the chart test reads (the tests are compiled without the DOM's types). */
interface Canvas {
  width: number;
  height: number;
  getContext(kind: '2d'): { getImageData(x: number, y: number, w: number, h: number): { data: Uint8ClampedArray } };
}

async function signIn(page: Page, url: string, accountId: string, key: string): Promise<void> {
  await page.goto(`${url}/console/`);
  await page.getByLabel('Account id').fill(accountId);
  await page.getByLabel('API key').fill(key);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
}

/** How many pixels of a canvas are (about) `rgb`. */
function pixelsOf(canvas: Locator, rgb: [number, number, number]): Promise<number> {
  return canvas.evaluate((element, [r, g, b]) => {
    const c = element as unknown as Canvas;
    const { data } = c.getContext('2d').getImageData(0, 0, c.width, c.height);
    let n = 0;
    for (let i = 0; i < data.length; i += 4) if (Math.abs(data[i]! - r) < 24 && Math.abs(data[i + 1]! - g) < 24 && Math.abs(data[i + 2]! - b) < 24 && data[i + 3]! > 200) n++;
    return n;
  }, rgb);
}

async function answeredVersion(s: TestServer): Promise<string> {
  const res = await s.call('greeter', { body: '{}' });
  return ((await res.json()) as { version: string }).version;
}

function run(): void {
  let s: TestServer;
  let browser: Browser;
  let page: Page;
  const cspViolations: string[] = [];

  t.before(async () => {
    s = await startTestServer();
    await s.deploy('greeter', functionFolder(versionSource('one')), 'handler');
    await s.deploy('greeter', functionFolder(versionSource('two')), 'handler');
    await s.deploy('public_other', functionFolder(versionSource('other')), 'handler');
    for (let i = 0; i < CALLS; i++) await s.call('greeter', { body: '{}' });
    await s.call('greeter', { body: '{"fail": true}' });
    browser = await launchBrowser();
    page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
    page.on('console', (m) => {
      if (/Content Security Policy/i.test(m.text())) cspViolations.push(m.text());
    });
    await signIn(page, s.consoleUrl, s.accountId, s.apiKey);
  });
  t.teardown(async () => {
    await browser?.close();
    await s?.stop();
  });

  t.test("the list shows each function's serving version, calls, errors and p99 over the last hour", async (t) => {
    const row = page.locator('table.data tbody tr', { has: page.getByRole('link', { name: 'greeter' }) });
    const cells = row.locator('td');
    await t.resolves(
      cells
        .nth(4)
        .getByText(String(CALLS + 1))
        .waitFor(),
      'calls (the failed one included)',
    );
    t.equal(await cells.nth(2).textContent(), 'v2', 'serving the newest version');
    t.equal(await cells.nth(5).textContent(), '1', 'one error');
    t.match(await cells.nth(6).textContent(), /^\d+(\.\d+)? (µs|ms)$/, 'a p99');
    const other = page.locator('table.data tbody tr', { has: page.getByRole('link', { name: 'public_other' }) });
    t.equal(await other.locator('td').nth(4).textContent(), '0', 'a function not called has no calls');
    await page.getByRole('button', { name: /^Calls \(1 h\)/ }).click();
    await page.getByRole('button', { name: /^Calls \(1 h\)/ }).click();
    t.same(await page.locator('table.data tbody tr td:first-child').allTextContents(), ['greeter', 'public_other'], 'sorted by calls, most first');
  });

  t.test("the function page draws calls, errors and latency charts from the server's history", async (t) => {
    await page.getByRole('link', { name: 'greeter' }).click();
    const figures = page.getByTestId('figures');
    await figures.waitFor();
    t.match(await figures.textContent(), new RegExp(`Calls${CALLS + 1}`), "the window's calls");
    t.match(await figures.textContent(), /Errors1\b/);
    const canvases = page.locator('figure.chart canvas');
    await canvases.nth(1).waitFor();
    t.equal(await canvases.count(), 2, 'two charts (uPlot loaded as its own chunk)');
    // Each chart draws its first series in that series' colour: calls/s #0b57a4, p50 #1d6b2f.
    const calls = await pixelsOf(canvases.nth(0), [0x0b, 0x57, 0xa4]);
    t.ok(calls > 10, `the calls line is drawn (${calls} pixels of its colour)`);
    const p50 = await pixelsOf(canvases.nth(1), [0x1d, 0x6b, 0x2f]);
    t.ok(p50 > 0, `the p50 latency is drawn, as a dot when only one slot has calls (${p50} pixels of its colour)`);
    await page.getByText("The charts' figures as a table").click();
    t.match(await page.locator('details table').textContent(), /\d\d:\d\d:\d\d/, 'the figures are also given as text');
    await page.getByRole('button', { name: '1 hour' }).click();
    await page.getByText(/Calls and errors per second \(60 s slots\)/).waitFor();
    t.pass('another window is fetched and drawn');
    const shot = screenshotPath('console-function');
    if (shot) await page.screenshot({ path: shot, fullPage: true });
  });

  t.test('a rollback from the versions list: the next call answers the old version', async (t) => {
    t.equal(await answeredVersion(s), 'two');
    const versions = page.getByTestId('versions');
    await versions.waitFor();
    t.same(await versions.locator('tbody th').allTextContents(), ['v2', 'v1'], 'newest first');
    // By keyboard: Enter on "Roll back to v1" moves the focus to the confirming button; Enter again.
    await page.getByRole('button', { name: 'Roll back to v1' }).focus();
    await page.keyboard.press('Enter');
    t.equal(await page.evaluate('document.activeElement.textContent'), 'Serve v1 to all', 'the focus is on the confirmation');
    await page.keyboard.press('Enter');
    await page.getByRole('status').getByText('Rolled back to v1: now serving v1.').waitFor();
    t.equal(await answeredVersion(s), 'one', 'the next call is answered by v1');
    await page.getByTestId('serving').getByText('v1', { exact: true }).waitFor();
    t.pass('the page says v1 serves');

    await page.getByRole('combobox', { name: /^Serve/ }).selectOption('1');
    await page.getByLabel('and send').fill('50');
    await page.getByLabel('% of calls to').selectOption('2');
    await page.getByRole('button', { name: 'Set split' }).click();
    await page.getByRole('status').getByText('Split set: now serving v1 50% · v2 50%.').waitFor();
    const seen = new Set<string>();
    for (let i = 0; i < 40 && seen.size < 2; i++) seen.add(await answeredVersion(s));
    t.same([...seen].sort(), ['one', 'two'], 'both versions answer under a 50/50 split');

    await page.getByRole('button', { name: /Promote v2/ }).click();
    await page.getByRole('status').getByText('Promoted v2: now serving v2.').waitFor();
    t.equal(await answeredVersion(s), 'two');
  });

  t.test('a key is created (shown once, with a copy button) and revoked', async (t) => {
    await page.getByRole('navigation').getByRole('link', { name: 'Keys' }).click();
    await page.getByRole('heading', { name: 'API keys' }).waitFor();
    await page.getByLabel('Name').fill('deploy-bot');
    await page.getByLabel('Scope').selectOption('invoke');
    await page.getByRole('button', { name: 'Create key' }).click();
    const shown = page.getByTestId('new-key');
    await shown.waitFor();
    const apiKey = await shown.inputValue();
    t.match(apiKey, /\S{16,}/);
    const who = await fetch(`${s.url}/v2/whoami`, { headers: { 'X-Service-Api-Key': apiKey } });
    t.same(await who.json(), { accountId: s.accountId, key: { name: 'deploy-bot', scope: 'invoke' } }, 'the key shown works, with the scope chosen');
    const shot = screenshotPath('console-keys');
    if (shot) await page.screenshot({ path: shot, fullPage: true });
    await page.getByRole('button', { name: 'Copy' }).click();
    await page
      .getByRole('status')
      .getByText(/Copied|Selected/)
      .waitFor();
    await page.getByRole('button', { name: 'Done' }).click();
    t.equal(await page.getByTestId('new-key').count(), 0, 'the key is not shown again');
    t.notMatch(await page.content(), apiKey, 'nor anywhere on the page');

    const keys = page.getByTestId('keys');
    await keys.getByText('deploy-bot').waitFor();
    await page.getByRole('button', { name: 'Revoke key deploy-bot' }).click();
    await page.getByRole('button', { name: 'Revoke deploy-bot' }).click();
    await page.getByRole('status').getByText('Key deploy-bot is revoked').waitFor();
    await t.resolves(keys.getByRole('rowheader', { name: 'deploy-bot' }).waitFor({ state: 'detached' }), 'gone from the list');
    t.equal((await fetch(`${s.url}/v2/whoami`, { headers: { 'X-Service-Api-Key': apiKey } })).status, 403, 'and refused by the server');
    t.same(cspViolations, [], 'no Content-Security-Policy violation on these pages');
  });

  t.test('the function page shows its schedules: the next tick, the last run and how it ended', async (t) => {
    await s.deploy('ticking', functionFolder("exports.handler = () => 'tick';"), 'handler', { schedules: ['* * * * * *'], timezone: 'Europe/Paris' });
    await page.goto(`${s.consoleUrl}/console/#/functions/ticking`);
    const schedules = page.getByTestId('schedules');
    await schedules.waitFor();
    const cells = schedules.locator('tbody tr td');
    t.same((await cells.allTextContents()).slice(0, 2), ['* * * * * *', 'Europe/Paris']);
    // The panel reads the schedules again every 5 s: a run shows within a few.
    await page.getByTestId('schedule-outcome').getByText('200', { exact: true }).waitFor({ timeout: 30_000 });
    t.not(await cells.nth(3).textContent(), '–', 'the last run is shown');
    t.not(await cells.nth(2).textContent(), 'never', 'and the next');
    await page.goto(`${s.consoleUrl}/console/#/functions/greeter`);
    await page.getByTestId('versions').waitFor();
    t.equal(await page.getByTestId('schedules').count(), 0, 'a function without a schedule shows no panel');
    await s.engine.remove(s.accountId, 'ticking');
  });

  t.test('an invoke key may call functions, and the pages say what needs an admin key', async (t) => {
    const { apiKey } = await s.engine.createKey(s.accountId, { name: 'caller', scope: 'invoke' });
    const invokePage = await browser.newPage();
    await signIn(invokePage, s.consoleUrl, s.accountId, apiKey);
    t.match(await invokePage.getByRole('note').first().textContent(), /invoke.*key.*admin/s, 'the limits of the scope are said');
    await invokePage.getByLabel('Function name').fill('greeter');
    await invokePage.getByRole('button', { name: 'Open' }).click();
    await invokePage.getByRole('heading', { name: 'greeter', level: 1 }).waitFor();
    const shot = screenshotPath('console-invoke-key');
    if (shot) await invokePage.screenshot({ path: shot, fullPage: true });
    t.match(await invokePage.locator('main').textContent(), /metrics, logs, versions and configuration need an admin key/);
    await invokePage.getByRole('button', { name: 'Invoke' }).click();
    await invokePage.getByTestId('invoke-status').waitFor();
    t.equal((await invokePage.getByTestId('invoke-status').textContent())?.trim(), '200 OK');
    t.same(JSON.parse((await invokePage.getByTestId('invoke-body').textContent()) ?? ''), { version: 'two' });
    t.equal(await invokePage.getByTestId('versions').count(), 0, 'no versions panel');
    t.equal(await invokePage.getByRole('alert').count(), 0, 'no request refused by the server');

    await invokePage.getByRole('link', { name: 'Keys' }).click();
    await invokePage.locator('main').getByText("The account's keys need an admin key").waitFor();
    t.equal(await invokePage.getByTestId('keys').count(), 0);
    await invokePage.close();

    const live = await fetch(`${s.url}/v2/accounts/${s.accountId}/functions/greeter/logs/live`, { headers: { 'X-Service-Api-Key': apiKey } });
    t.equal(live.status, 403, 'the live logs route refuses an invoke key, as the management API does');
    t.equal(((await live.json()) as { errorCode: string }).errorCode, 'ERR_FORBIDDEN');
  });

  t.test("revoking the session's own key signs the tab out", async (t) => {
    const { apiKey } = await s.engine.createKey(s.accountId, { name: 'temporary-admin', scope: 'admin' });
    const own = await browser.newPage();
    await signIn(own, s.consoleUrl, s.accountId, apiKey);
    await own.getByRole('link', { name: 'Keys' }).click();
    await own.getByRole('button', { name: 'Revoke key temporary-admin' }).click();
    await own.getByRole('button', { name: 'Revoke temporary-admin' }).click();
    await own.getByRole('button', { name: 'Sign in' }).waitFor();
    t.equal(await own.evaluate('sessionStorage.length'), 0, 'the revoked key is forgotten');
    await own.close();
  });
}
