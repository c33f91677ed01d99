import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import t from 'tap';
import type { Browser, Page } from 'playwright-core';
import { browserMissing, launchBrowser, screenshotPath } from '../helpers/browser';
import { functionFolder } from '../helpers/functions';
import { startTestServer, type TestServer } from '../helpers/server';

// Issue 26, item 3 (and the console's part of item 7): the console as a new user meets it, in a
// real browser. Screenshots of the function page with latencies of 1-30 s and at 400 px go to
// ISLET_SCREENSHOTS when it names a folder.

const missing = browserMissing();
if (missing) {
  t.plan(0, `skipped: ${missing}`);
} else {
  run();
}

const FAILING = 'exports.handler = (body) => { if (body && body.fail) throw new TypeError("boom " + body.fail); return "ok"; };\n';

async function signIn(page: Page, url: string, accountId: string, key: string): Promise<void> {
  await page.goto(`${url}/console/`);
  await page.getByLabel('Account id').fill(accountId);
  await page.getByLabel('API key').fill(key);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
}

function run(): void {
  let s: TestServer;
  let browser: Browser;

  t.before(async () => {
    s = await startTestServer();
    await s.deploy('slow', functionFolder(FAILING), 'handler');
    const workers = mkdtempSync(path.join(tmpdir(), 'islet-console-fetch-'));
    writeFileSync(path.join(workers, 'index.mjs'), 'export default { fetch: () => new Response("hi") };\n');
    await s.deploy('workers', workers, 'handler', { file: 'index.mjs' });
    // Calls of 1 to 30 s, as the history would hold them, over the last minute: recorded into the
    // function's counters and sampled slot by slot (a real call of 30 s is not worth the wait).
    const stats = s.internals.functionStats.of(s.engine.describe(s.accountId, 'slow')!);
    const history = s.internals.history!;
    const now = Date.now();
    history.sample(now - 65_000);
    for (let slot = 0; slot < 12; slot++) {
      for (let i = 0; i < 10; i++) stats.record(200, undefined, (1 + ((slot * 10 + i) % 30)) * 1_000_000 + i * 1000);
      history.sample(now - 60_000 + slot * 5_000);
    }
    browser = await launchBrowser();
  });
  t.teardown(async () => {
    await browser?.close();
    await s?.stop();
  });

  t.test('GET / on the function port says what the server is and where the console is; on the console port it leads there', async (t) => {
    const text = await fetch(`${s.url}/`);
    t.equal(text.status, 200);
    t.match(text.headers.get('content-type'), /^text\/plain/);
    const body = await text.text();
    t.match(body, /^islet \d+\.\d+\.\d+: functions run at \/v2\/run\/<account>\/<function> on this port\./);
    t.match(body, `The web console: ${s.consoleUrl}/console/`);
    const browserAsks = await fetch(`${s.url}/`, { headers: { accept: 'text/html,application/xhtml+xml' }, redirect: 'manual' });
    t.equal(browserAsks.status, 302);
    t.equal(browserAsks.headers.get('location'), `${s.consoleUrl}/console/`, 'a browser is sent to the console');
    const consoleRoot = await fetch(`${s.consoleUrl}/`, { redirect: 'manual' });
    t.equal(consoleRoot.status, 302);
    t.equal(consoleRoot.headers.get('location'), '/console/');
  });

  t.test('latencies past 1,000 ms read in seconds on the chart, and no label is cut', async (t) => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
    await signIn(page, s.consoleUrl, s.accountId, s.apiKey);
    await page.goto(`${s.consoleUrl}/console/#/functions/slow`);
    await page.getByTestId('figures').waitFor();
    const latency = page.locator('figure.chart', { hasText: 'Latency' }).locator('.chart-canvas');
    await latency.locator('canvas').waitFor();
    let labels: string[] = [];
    for (let i = 0; i < 100 && labels.length === 0; i++) {
      labels = JSON.parse((await latency.getAttribute('data-y-labels')) ?? '[]') as string[];
      if (labels.length === 0) await page.waitForTimeout(100);
    }
    t.ok(labels.length >= 2, `the axis has labels: ${labels.join(', ')}`);
    t.ok(
      labels.every((l) => /^\d+(\.\d+)? s$/.test(l)),
      'every label in seconds',
    );
    t.ok(
      labels.some((l) => Number.parseFloat(l) >= 20),
      'up to the 30 s calls',
    );
    // Each label fits the room the axis gives it, at the axis's font.
    const size = Number(await latency.getAttribute('data-y-size'));
    const widths = await page.evaluate((texts) => {
      const ctx = (globalThis as unknown as { document: { createElement(k: string): { getContext(k: string): { font: string; measureText(s: string): { width: number } } } } }).document
        .createElement('canvas')
        .getContext('2d');
      ctx.font = '12px system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, "Noto Sans", sans-serif';
      return texts.map((text) => ctx.measureText(text).width);
    }, labels);
    t.ok(Math.max(...widths) + 10 <= size, `the widest label (${Math.max(...widths).toFixed(1)} px) fits the axis (${size} px)`);
    // What the eye sees, apart from what the chart says of itself: a label cut on the left has ink
    // in the canvas's first columns (the axis's labels are right-aligned in its room, the plot after it).
    const inkAtLeftEdge = await latency.locator('canvas').evaluate((canvas) => {
      const c = canvas as unknown as { height: number; getContext(k: string): { getImageData(x: number, y: number, w: number, h: number): { data: Uint8ClampedArray } } };
      const pixels = c.getContext('2d').getImageData(0, 0, 3, c.height).data;
      let ink = 0;
      for (let i = 3; i < pixels.length; i += 4) if (pixels[i]! > 0) ink++;
      return ink;
    });
    t.equal(inkAtLeftEdge, 0, 'nothing is drawn at the left edge of the chart: no label runs off it');
    const figures = await page.getByTestId('figures').textContent();
    t.match(figures, /p50\d+(\.\d)? s/, 'p50 in seconds');
    const p99 = Number(/p99(\d+(?:\.\d)?) s/.exec(figures ?? '')?.[1]);
    t.ok(p99 >= 29 && p99 <= 30.1, `p99 ${p99} s: the slowest calls took 30 s, never more`);
    const shot = screenshotPath('console-latency-seconds');
    if (shot) await page.screenshot({ path: shot, fullPage: true });
    await page.close();
  });

  t.test('at 400 px wide nothing runs off the right: the header wraps, every control stays reachable', async (t) => {
    const page = await browser.newPage({ viewport: { width: 400, height: 900 } });
    await signIn(page, s.consoleUrl, s.accountId, s.apiKey);
    for (const route of ['#/functions', '#/functions/slow', '#/keys']) {
      await page.goto(`${s.consoleUrl}/console/${route}`);
      await page.getByRole('button', { name: 'Sign out' }).waitFor();
      if (route.endsWith('slow')) await page.getByTestId('figures').waitFor();
      const overflow = await page.evaluate(() => {
        const doc = (globalThis as unknown as { document: { documentElement: { scrollWidth: number; clientWidth: number } } }).document.documentElement;
        return doc.scrollWidth - doc.clientWidth;
      });
      t.equal(overflow, 0, `${route}: the page is not wider than the window`);
      for (const name of ['Sign out', 'Functions', 'Keys']) {
        const box = await page
          .getByRole(name === 'Sign out' ? 'button' : 'link', { name, exact: true })
          .first()
          .boundingBox();
        t.ok(box && box.x >= 0 && box.x + box.width <= 400, `${route}: ${name} is inside the window`);
      }
    }
    const shot = screenshotPath('console-400px');
    if (shot) {
      await page.goto(`${s.consoleUrl}/console/#/functions/slow`);
      await page.getByTestId('figures').waitFor();
      await page.screenshot({ path: shot, fullPage: true });
    }
    await page.close();
  });

  t.test("the configuration says how the entry is called: a handler, or a module's fetch", async (t) => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
    await signIn(page, s.consoleUrl, s.accountId, s.apiKey);
    await page.goto(`${s.consoleUrl}/console/#/functions/workers`);
    t.equal(await page.getByTestId('entry').textContent(), 'index.mjs · fetch(request, env, ctx) of the default export');
    await page.goto(`${s.consoleUrl}/console/#/functions/slow`);
    await page.getByTestId('entry').getByText('handler(body, context)').waitFor();
    t.equal(await page.getByTestId('entry').textContent(), 'function.js · handler(body, context)');
    await page.close();
  });

  t.test('item 7: a failed call in the live logs: its code and message once, then its stack', async (t) => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
    await signIn(page, s.consoleUrl, s.accountId, s.apiKey);
    await page.goto(`${s.consoleUrl}/console/#/functions/slow`);
    await page.getByTestId('logs-state').getByText('Live', { exact: true }).waitFor();
    const res = await s.call('slow', { body: '{"fail": 7}' });
    t.equal(res.status, 500);
    const line = page.getByTestId('logs').locator('li.level-error');
    await line.waitFor();
    const text = (await line.locator('.msg').textContent()) ?? '';
    t.match(text, /^ERR_FUNCTION_FAILED TypeError: boom 7\n\s+at /, 'the code, the message, then the frames');
    t.equal(text.split('TypeError: boom 7').length - 1, 1, 'the message once');
    await page.close();
  });
}
