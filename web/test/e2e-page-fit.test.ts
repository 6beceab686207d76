// End-to-end: the demo's first screen and its tables at a desktop (1440 × 900) and a phone (390 × 844)
// width, in real Chromium against the real server. The page opens on the pair with the stage table's
// largest significant change; the Lines tab, the Runtime tab and the stage table overflow nowhere but
// inside their own scroll boxes (and the Lines and stage tables not even there); at 390 px every
// significant change of the stage table is on screen, regressions first; the Lines tab words its verdicts
// in the shared words and shows the function whole.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import type { FigureKey, StageChanges, StageTable } from '../src/lib/api.ts';
import { CHROMIUM, REPO } from './harness.ts';
import { e2eEnvironment, shot, watchPage } from './page-helpers.ts';

const enabled = existsSync(CHROMIUM) && existsSync(join(REPO, 'fixtures/demo/manifest.json'));
const env = e2eEnvironment(enabled, { seedDemo: true });
/** The demo's request handler: sampled in every stage, with its source stored with each. */
const HANDLER = 'main.(*service).serveOrders';

/**
 * The function whose lines the test reads: the request handler, or the first of the program's own
 * functions the pair's changes name, or the encoder's, whichever the source view shows aligned from both
 * stages' sources with lines judged (an edited function's moved lines carry no verdict).
 */
async function linesFunction(base: string, target: string): Promise<string> {
  const ch = await get<StageChanges>(`/api/comparisons/demo/changes?base=${base}&target=${target}`);
  const names = [
    HANDLER,
    ...(ch.functions?.changes ?? []).map((c) => c.name).filter((n) => n.startsWith('main.')),
    // The encoder's hot functions, which the later commits leave as they are.
    'main.appendJSONString',
    'main.appendOrder',
  ];
  for (const fn of names) {
    const v = await get<{ aligned: boolean; rows: { verdict: unknown }[] }>(
      `/api/comparisons/demo/source?base=${base}&target=${target}&fn=${encodeURIComponent(fn)}`,
    );
    // Lines are judged where they kept their place: a function its commit edited may have none.
    if (v.aligned && v.rows.length > 10 && v.rows.some((r) => r.verdict)) return fn;
  }
  throw new Error('no function of the pair has its lines in both stages');
}
const VIEWPORTS = [
  { width: 1440, height: 900 },
  { width: 390, height: 844 },
] as const;

async function get<T>(path: string): Promise<T> {
  const r = await fetch(`${env.server.url}${path}`);
  if (!r.ok) throw new Error(`${path}: ${r.status} ${await r.text()}`);
  return (await r.json()) as T;
}

/** Each significant change of the stage table against the previous stage, with its size |ln ratio|. */
function significant(table: StageTable) {
  return table.rows.flatMap((r) =>
    Object.entries(r.vsPrevious ?? {}).flatMap(([figure, v]) =>
      v.status === 'significant' && v.ratio !== null && v.ratio > 0
        ? [{ stageId: r.stageId, name: r.name, figure: figure as FigureKey, size: Math.abs(Math.log(v.ratio)) }]
        : [],
    ),
  );
}

/**
 * What sticks out sideways: the document past the window, and each of `selector`'s elements past the
 * window or past its scroll box (the nearest ancestor that scrolls sideways), by how many pixels.
 */
async function overflow(page: Page, selector: string) {
  return page.evaluate((sel) => {
    const vw = document.documentElement.clientWidth;
    const out: { what: string; by: number }[] = [];
    if (document.documentElement.scrollWidth > vw)
      out.push({ what: 'document', by: document.documentElement.scrollWidth - vw });
    for (const el of document.querySelectorAll(sel)) {
      let box: HTMLElement | null = el.parentElement;
      while (box && getComputedStyle(box).overflowX !== 'auto' && getComputedStyle(box).overflowX !== 'scroll')
        box = box.parentElement;
      const r = el.getBoundingClientRect();
      if (r.right > vw + 0.5) out.push({ what: `${sel} past the window`, by: r.right - vw });
      if (box) {
        const b = box.getBoundingClientRect();
        if (b.right > vw + 0.5) out.push({ what: `${sel}'s scroll box past the window`, by: b.right - vw });
        if (box.scrollWidth > box.clientWidth)
          out.push({ what: `${sel} scrolls inside its box`, by: box.scrollWidth - box.clientWidth });
      }
    }
    return out;
  }, selector);
}

/** Whether the element is drawn, and wholly inside the window's width and its scroll box. */
async function onScreen(page: Page, selector: string, index: number): Promise<boolean> {
  return page.evaluate(
    ({ sel, i }) => {
      const el = document.querySelectorAll(sel)[i] as HTMLElement | undefined;
      if (!el) return false;
      const r = el.getBoundingClientRect();
      if (r.width === 0 || r.height === 0 || getComputedStyle(el).visibility === 'hidden') return false;
      const box = el.closest('.table-scroll')?.getBoundingClientRect();
      const right = Math.min(document.documentElement.clientWidth, box?.right ?? Number.POSITIVE_INFINITY);
      return r.left >= (box?.left ?? 0) - 0.5 && r.right <= right + 0.5;
    },
    { sel: selector, i: index },
  );
}

describe.skipIf(!enabled)('the demo page at a desktop and a phone width', () => {
  it('opens on the largest significant change; Lines, Runtime and stage table fit; every significant change on a phone', async () => {
    const table = await get<StageTable>('/api/comparisons/demo/stage-table');
    const changes = significant(table);
    expect(changes.length).toBeGreaterThan(0);
    const largest = changes.reduce((a, b) => (b.size > a.size ? b : a));
    const previous = table.rows[table.rows.findIndex((r) => r.stageId === largest.stageId) - 1]!;
    const fn = await linesFunction(previous.stageId, largest.stageId);

    for (const vp of VIEWPORTS) {
      const problems: string[] = [];
      const ctx = await env.browser.newContext({ viewport: vp });
      const page = await ctx.newPage();
      watchPage(page, problems);
      await page.goto(`${env.server.url}/c/demo`);
      const stageTable = page.getByRole('table', { name: 'Stage table' });
      await stageTable.waitFor({ timeout: 60_000 });
      // The pair opened on: the largest significant change and the stage before it, pinned in the address.
      await expect
        .poll(() => new URL(page.url()).searchParams.get('target'), { timeout: 60_000 })
        .toBe(largest.stageId);
      expect(new URL(page.url()).searchParams.get('base')).toBe(previous.stageId);
      await expect
        .poll(() => page.getByLabel('Target stage').or(page.getByLabel('Right stage')).inputValue())
        .toBe(largest.stageId);

      // The stage table: nothing sideways.
      expect(await overflow(page, '.stage-table')).toEqual([]);
      // Every significant change of the table is drawn, on screen; in each cell the regressions first.
      for (const row of table.rows.filter((r) => r.vsPrevious)) {
        const mine = changes.filter((c) => c.stageId === row.stageId).map((c) => c.figure);
        const sel = `.stage-table tr[data-stage-id="${row.stageId}"] td[data-kind="prev"] .verdict[data-figure]`;
        const cells = await page.locator(sel).evaluateAll((els) =>
          els.map((e) => ({
            figure: e.getAttribute('data-figure'),
            verdict: e.getAttribute('data-verdict'),
            tone: e.classList.contains('bad') ? 'bad' : e.classList.contains('good') ? 'good' : 'plain',
          })),
        );
        // The figures the table judges (QPS, its tail latency, CPU and bytes per request): each
        // significant one of them is in the cell, on a phone too.
        const judged = new Set(cells.map((c) => c.figure));
        expect(judged.has('rps')).toBe(true);
        if (row.vsPrevious && row.vsPrevious.allocPerRequest.status !== 'missing')
          expect(judged.has('allocPerRequest')).toBe(true);
        const shownSignificant = cells.filter((c) => c.verdict === 'significant').map((c) => c.figure);
        expect(shownSignificant.sort(), row.name).toEqual(mine.filter((f) => judged.has(f)).sort());
        for (const [i, c] of cells.entries())
          if (c.verdict === 'significant')
            expect(await onScreen(page, sel, i), `${row.name} ${c.figure} at ${vp.width} px`).toBe(true);
        const tones = cells.map((c) => c.tone);
        const firstGood = tones.indexOf('good');
        if (firstGood >= 0) expect(tones.slice(firstGood), row.name).not.toContain('bad');
      }
      // What changed: each stage leads with its named changes and headline figures; the rest folded.
      const wc = page.getByRole('list', { name: 'What changed' });
      await expect.poll(() => wc.textContent(), { timeout: 120_000 }).not.toContain('computing');
      const item = wc.locator(`li[data-stage-id="${largest.stageId}"]`);
      expect(await item.locator(':scope > ul > li').count()).toBeGreaterThan(0);
      expect(await item.locator(':scope > ul > li').first().isVisible()).toBe(true);
      const folded = item.locator(':scope > details li');
      if ((await folded.count()) > 0) expect(await folded.first().isVisible()).toBe(false);
      await page
        .locator('section[aria-labelledby="stages-h"]')
        .screenshot({ path: join(REPO, 'test-artifacts', `fit-stages-${vp.width}.png`) });
      await shot(page, `fit-first-${vp.width}`);

      // The Lines tab of the request handler: both versions, never cut; verdicts in the shared words.
      const lines = new URL(page.url());
      lines.searchParams.set('tab', 'lines');
      lines.searchParams.set('fn', fn);
      await page.goto(lines.href);
      const source = page.locator('.source-table');
      await source.waitFor({ timeout: 120_000 });
      expect(await source.getAttribute('data-layout')).toBe(vp.width >= 1000 ? 'side-by-side' : 'stacked');
      expect(await overflow(page, '.source-table')).toEqual([]);
      const text = (await source.locator('.src-verdict, .src-change').allTextContents()).join('\n');
      expect(text).not.toMatch(/\b(tested|too-few-runs|single-run|no-change|not-comparable)\b/);
      expect(text).toMatch(/within the noise|significant \(p=/);
      if (vp.width >= 1000) {
        const head = source.getByRole('columnheader', { name: 'verdict' });
        const box = (await head.boundingBox())!;
        expect(box.x + box.width).toBeLessThanOrEqual(vp.width);
      }
      // The function whole: its last line shown is its closing brace.
      const codeLines = await source.locator('tr[data-target-line] td.src-text').allTextContents();
      expect(codeLines.length).toBeGreaterThan(10);
      expect(codeLines[codeLines.length - 1]).toBe('}');
      await page
        .locator('.lines-panel')
        .screenshot({ path: join(REPO, 'test-artifacts', `fit-lines-${vp.width}.png`) });

      // The Runtime tab: its tables within the window, the change column on screen.
      const runtime = new URL(page.url());
      runtime.searchParams.set('tab', 'runtime');
      await page.goto(runtime.href);
      const rt = page.getByRole('table', { name: 'Runtime figures of both stages' });
      await rt.waitFor({ timeout: 120_000 });
      expect(await overflow(page, '.runtime-table')).toEqual([]);
      const change = (await rt.getByRole('columnheader', { name: 'Change' }).boundingBox())!;
      expect(change.x + change.width).toBeLessThanOrEqual(vp.width);
      await rt.screenshot({ path: join(REPO, 'test-artifacts', `fit-runtime-${vp.width}.png`) });
      await ctx.close();
      expect(problems).toEqual([]);
    }
  }, 600_000);
});
