// The README's screenshot of the demo comparison: start the real server with the demo seeded
// from fixtures/demo, open /c/demo in headless Chromium at 1440×900 and capture the top of the page
// (stage table, "what changed", the side-by-side flamegraphs) into docs/demo.png. The Diff tab goes to
// test-artifacts/demo-diff.png for a look, not into the repository.
//
//   npx tsx web/test/screenshot-demo.ts            (writes docs/demo.png)
//   SCREENSHOT_OUT=/tmp/x.png npx tsx web/test/screenshot-demo.ts
import { mkdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Page } from 'playwright-core';
import { ARTIFACTS, REPO, buildWeb, launchBrowser, startServer } from './harness.ts';

const OUT = process.env.SCREENSHOT_OUT ?? join(REPO, 'docs/demo.png');
const WIDTH = 1440;
const HEIGHT = 900;
/** The picture stops below the flamegraphs, at most this tall. */
const MAX_HEIGHT = 1700;

async function settle(page: Page, problems: string[]) {
  await page.getByRole('table', { name: 'Stage table' }).waitFor({ timeout: 60_000 });
  const list = page.getByRole('list', { name: 'What changed' });
  for (let i = 0; i < 240; i++) {
    if (!/computing/.test((await list.textContent()) ?? '')) break;
    await page.waitForTimeout(250);
  }
  if (/computing/.test((await list.textContent()) ?? '')) problems.push('"what changed" still computing after 60 s');
  // No caret or hover effects in the picture.
  await page.mouse.move(0, 0);
  await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
}

async function main() {
  const server = await startServer(buildWeb(), { seedDemo: true });
  const browser = await launchBrowser();
  const problems: string[] = [];
  try {
    const ctx = await browser.newContext({
      viewport: { width: WIDTH, height: HEIGHT },
      deviceScaleFactor: 1,
      colorScheme: 'light',
    });
    const page = await ctx.newPage();
    page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
    page.on('console', (m) => {
      if (m.type() === 'error') problems.push(`console.error: ${m.text()}`);
    });
    await page.goto(`${server.url}/c/demo`);
    await settle(page, problems);
    await page
      .locator('[data-flame-drawn="1"]')
      .nth(1)
      .waitFor({ timeout: 60_000 })
      .catch(async (e: unknown) => {
        await page.screenshot({ path: join(ARTIFACTS, 'demo-failed.png'), fullPage: true });
        throw e;
      });
    const box = await page.locator('.side-by-side').boundingBox();
    const bottom = box ? Math.ceil(box.y + box.height + 16) : HEIGHT;
    mkdirSync(dirname(OUT), { recursive: true });
    await page.screenshot({
      path: OUT,
      fullPage: true,
      clip: { x: 0, y: 0, width: WIDTH, height: Math.min(Math.max(bottom, HEIGHT), MAX_HEIGHT) },
    });
    console.log(`${OUT}: ${statSync(OUT).size} bytes`);

    // The Diff tab, for review.
    mkdirSync(ARTIFACTS, { recursive: true });
    await page.getByRole('tab', { name: 'Diff' }).click();
    await page.getByRole('table', { name: 'Hot-path diff' }).waitFor({ timeout: 60_000 });
    await page.locator('[data-flame-drawn="1"]').first().waitFor({ timeout: 60_000 });
    await page.mouse.move(0, 0);
    const diffOut = join(ARTIFACTS, 'demo-diff.png');
    await page.screenshot({ path: diffOut, fullPage: true });
    console.log(`${diffOut}: ${statSync(diffOut).size} bytes`);
    // The diff flamegraph at full size, to read its labels.
    const graph = await page.locator('.diff-panel .flame-graph').boundingBox();
    if (graph) {
      await page.screenshot({
        path: join(ARTIFACTS, 'demo-diff-flame.png'),
        fullPage: true,
        clip: { x: 0, y: Math.max(0, graph.y - 140), width: WIDTH, height: Math.min(graph.height + 160, 900) },
      });
    }
    await ctx.close();
  } finally {
    await browser.close();
    await server.stop();
  }
  if (problems.length) {
    console.error(problems.join('\n'));
    process.exitCode = 1;
  }
}

await main();
