// End-to-end in real Chromium, on the seeded demo comparison (whose JSON encoder runs generic code,
// `reflect.TypeAssert[go.shape.interface { MarshalJSON() ([]uint8, error) }]`): the hot-path table
// shows a function as `go tool pprof` prints it by default (the shape's argument lists dropped), and
// its name's hover text is the name as the profile writes it (the diff answer's `fullNames`).
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Diff } from '../src/lib/api.ts';
import { CHROMIUM, REPO, type RunningServer, buildWeb, launchBrowser, startServer } from './harness.ts';
import { watchPage } from './page-helpers.ts';

const enabled = existsSync(CHROMIUM) && existsSync(join(REPO, 'fixtures/demo/manifest.json'));

let server: RunningServer;
let browser: Browser;

beforeAll(async () => {
  if (!enabled) return;
  server = await startServer(buildWeb(), { seedDemo: true });
  browser = await launchBrowser();
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

describe.skipIf(!enabled)('short names on the page, full names on hover', () => {
  it('a shortened hot-path row shows pprof’s name and hovers the full one', async () => {
    const page = await browser.newPage({ viewport: { width: 1440, height: 1000 } });
    const problems: string[] = [];
    watchPage(page, problems);
    const diffs: string[] = [];
    page.on('request', (r) => {
      if (/\/api\/comparisons\/demo\/diff\?/.test(r.url())) diffs.push(r.url());
    });
    // focus on the generic function's samples and show only its frames (pprof's -focus and -show match
    // its short name), so it is a row
    // the baseline stage (its runs call the generic function) against the next one
    const table = (await (await fetch(`${server.url}/api/comparisons/demo/stage-table`)).json()) as {
      rows: { stageId: string; name: string }[];
    };
    const base = table.rows.find((r) => r.name === 'baseline')!.stageId;
    const target = table.rows.find((r) => r.name !== 'baseline')!.stageId;
    const pair = `base=${base}&target=${target}`;
    await page.goto(`${server.url}/c/demo?tab=diff&${pair}&focus=TypeAssert&show=TypeAssert`);
    await expect.poll(() => diffs.length, { timeout: 60_000 }).toBeGreaterThan(0);
    const r = await fetch(diffs[0]!);
    expect(r.status).toBe(200);
    const d = (await r.json()) as Diff;
    expect(new URL(diffs[0]!).searchParams.get('focus')).toBe('TypeAssert');
    const short = d.top.map((x) => x.name).find((n) => d.fullNames?.[n] !== undefined);
    expect(short, 'a row of the demo diff whose name pprof shortens').toBeTruthy();
    const full = d.fullNames![short!]!;
    expect(full.every((f) => f.includes('(') && f !== short)).toBe(true);
    // select it (the table keeps a selected row shown below its cut), then read its name's hover text
    await page.goto(
      `${server.url}/c/demo?tab=diff&${pair}&focus=TypeAssert&show=TypeAssert&fn=${encodeURIComponent(short!)}`,
    );
    const button = page.locator('button.fn-name', { hasText: short! }).first();
    await button.waitFor({ timeout: 60_000 });
    expect(await button.textContent()).toBe(short);
    expect(await button.getAttribute('title')).toBe(full.join('\n'));
    expect(problems).toEqual([]);
    await page.close();
  });
});
