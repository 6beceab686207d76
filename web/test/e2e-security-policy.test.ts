// The whole demo under the server's Content-Security-Policy, in real Chromium: every tab of /c/demo
// opened, its charts drawn and hovered (tooltips are where libraries reach for inline styles), with
// every `securitypolicyviolation` event and every console error recorded. Both must stay empty.
import { existsSync, mkdirSync } from 'node:fs';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ARTIFACTS, CHROMIUM, buildWeb, launchBrowser, startServer, type RunningServer } from './harness.ts';
import { shot } from './page-helpers.ts';

const enabled = existsSync(CHROMIUM);
let server: RunningServer;
let browser: Awaited<ReturnType<typeof launchBrowser>>;

beforeAll(async () => {
  if (!enabled) return;
  mkdirSync(ARTIFACTS, { recursive: true });
  server = await startServer(buildWeb(), { seedDemo: true });
  browser = await launchBrowser();
}, 240_000);
afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

interface Recorded {
  violations: string[];
  errors: string[];
}

/** Records CSP violations (from the page's own event, before any app code runs) and console errors. */
async function record(page: Page): Promise<Recorded> {
  const rec: Recorded = { violations: [], errors: [] };
  await page.exposeFunction('__cspViolation', (v: string) => rec.violations.push(v));
  await page.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (e) => {
      const report = (window as unknown as { __cspViolation: (s: string) => void }).__cspViolation;
      report(
        `${e.effectiveDirective} blocked ${e.blockedURI || '(inline)'} at ${e.sourceFile}:${e.lineNumber} ${e.sample}`,
      );
    });
  });
  page.on('console', (m) => {
    if (m.type() === 'error') rec.errors.push(`console.error: ${m.text()}`);
  });
  page.on('pageerror', (e) => rec.errors.push(`pageerror: ${e.message}`));
  return rec;
}

/** Moves the mouse across an element, so tooltips and hover states render. */
async function sweep(page: Page, selector: string) {
  for (const el of await page.locator(selector).all()) {
    const box = await el.boundingBox();
    if (!box || box.width < 4 || box.height < 4) continue;
    await el.scrollIntoViewIfNeeded();
    const b = (await el.boundingBox())!;
    for (const fx of [0.2, 0.5, 0.8]) {
      await page.mouse.move(b.x + b.width * fx, b.y + b.height * 0.5, { steps: 3 });
      await page.waitForTimeout(80);
    }
  }
}

/** Clicks every export button in view (SVG and PNG of charts and flamegraphs) and waits for its file. */
async function exportAll(page: Page, rec: Recorded): Promise<string[]> {
  const files: string[] = [];
  for (const button of await page.locator('button[aria-label^="Download "]').all()) {
    if (!(await button.isVisible())) continue;
    const label = await button.getAttribute('aria-label');
    const download = page.waitForEvent('download', { timeout: 8_000 });
    await button.click();
    await download.then(
      (d) => files.push(d.suggestedFilename()),
      () => rec.errors.push(`${label}: no file downloaded`),
    );
  }
  return files;
}

describe.skipIf(!enabled)('the demo under the Content-Security-Policy', () => {
  it('records a violation when there is one', async () => {
    // The recorder itself: an inline <style> the policy refuses must show up.
    const ctx = await browser.newContext();
    const page = await ctx.newPage();
    const rec = await record(page);
    await page.goto(`${server.url}/c/demo`);
    await page.evaluate(() => {
      const style = document.createElement('style');
      style.textContent = 'body { outline: 1px solid red }';
      document.head.append(style);
    });
    await expect.poll(() => rec.violations.length).toBe(1);
    expect(rec.violations[0]).toMatch(/^style-src-elem blocked inline/);
    await ctx.close();
  });

  it('runs every tab of /c/demo with zero CSP violations and zero console errors', async () => {
    const ctx = await browser.newContext({ viewport: { width: 1440, height: 1000 }, acceptDownloads: true });
    await ctx.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.url });
    const page = await ctx.newPage();
    const rec = await record(page);
    const downloads: string[] = [];

    const first = await page.goto(`${server.url}/c/demo`);
    const csp = first?.headers()['content-security-policy'] ?? '';
    // The policy really is the strict one: no inline scripts or styles, no eval, no framing.
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("style-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toMatch(/unsafe-inline|unsafe-eval/);
    expect(first?.headers()['referrer-policy']).toBe('no-referrer');

    await page.getByRole('table', { name: 'Stage table' }).waitFor({ timeout: 60_000 });
    const tabs = page.getByRole('tablist', { name: 'Views' }).getByRole('tab');
    const names = (await tabs.allTextContents()).map((t) => t.trim());
    // The demo has profiles and load tests: at least flamegraphs, diff and the load tab.
    expect(names.length).toBeGreaterThanOrEqual(3);
    for (const name of names) {
      await page.getByRole('tab', { name, exact: true }).click();
      const panel = page.getByRole('tabpanel');
      await panel.first().waitFor({ timeout: 60_000 });
      // Let the panel fetch and draw: flamegraphs mark themselves drawn, charts render SVG.
      await page.waitForLoadState('networkidle');
      await page.waitForTimeout(500);
      await sweep(page, '[data-flame-drawn="1"] canvas, .chart-box, .echart, svg.sparkline');
      // Exports rasterise SVG through an <img> of a blob: URL and download through blob: links.
      downloads.push(...(await exportAll(page, rec)));
      await shot(page, `csp-${name.toLowerCase().replace(/[^a-z0-9]+/g, '-')}`);
    }
    // The dark theme redraws every chart and flamegraph.
    await page.getByRole('button', { name: /dark/i }).click();
    await page.waitForTimeout(500);
    await sweep(page, '[data-flame-drawn="1"] canvas, .echart');
    // The stage table's exports and the share link.
    for (const name of ['Copy link', 'Copy Markdown', 'Copy CSV']) await page.getByRole('button', { name }).click();
    for (const name of ['Download Markdown', 'Download CSV']) {
      const [d] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name }).click()]);
      downloads.push(d.suggestedFilename());
    }

    // Back to the first tab through the address (a share link), which reloads the page.
    await page.reload();
    await page.getByRole('table', { name: 'Stage table' }).waitFor({ timeout: 60_000 });
    await page.waitForLoadState('networkidle');

    expect(rec.violations).toEqual([]);
    expect(rec.errors).toEqual([]);
    expect(downloads.filter((f) => f.endsWith('.png')).length).toBeGreaterThanOrEqual(2);
    expect(downloads.filter((f) => f.endsWith('.svg')).length).toBeGreaterThanOrEqual(2);
    expect(downloads.some((f) => f.endsWith('.csv'))).toBe(true);
    await ctx.close();
  }, 240_000);
});
