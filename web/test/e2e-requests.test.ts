// End-to-end: the Requests tab of the seeded demo (fixtures/demo: six annotated execution traces per
// stage) for fast-json → pooled, in real Chromium at 1440 and 390 px. The page shows what GET …/requests
// gives (its figures are checked against the traces themselves in server/test/services/requests-view.test.ts):
// the overlaid latency histograms, the engine's request rows, the parts of the median and of the slowest
// 1 %, a critical-path timeline per slow request, and the tail's goroutine entry functions, one of which
// opens the sandwich of that function. No horizontal overflow outside the scroll boxes.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { formatInt, formatNanos } from '../../server/src/api/format.ts';
import { REQUEST_PART_WORDS } from '../../server/src/api/request-parts.ts';
import type { Reply } from '../src/lib/api.ts';
import { CHROMIUM, REPO } from './harness.ts';
import { e2eEnvironment, shot, watchPage } from './page-helpers.ts';

const enabled = existsSync(CHROMIUM) && existsSync(join(REPO, 'fixtures/demo/manifest.json'));
const env = e2eEnvironment(enabled, { seedDemo: true });

async function get<T>(path: string): Promise<T> {
  const r = await fetch(`${env.server.url}${path}`);
  if (!r.ok) throw new Error(`${path}: ${r.status} ${await r.text()}`);
  return (await r.json()) as T;
}

describe.skipIf(!enabled)('the Requests tab of the demo', () => {
  it('fast-json → pooled: histograms, rows, parts, timelines, tail functions to the sandwich, at 1440 and 390 px', async () => {
    const table = await get<Reply<'stageTable'>>('/api/comparisons/demo/stage-table');
    const id = (name: string) => table.rows.find((r) => r.name === name)!.stageId;
    const base = id('fast-json');
    const target = id('pooled');
    const view = await get<Reply<'requests'>>(`/api/comparisons/demo/requests?base=${base}&target=${target}`);
    expect(view.status).toBe('ok');
    // a frame of fast-json's tail wait stacks that its CPU profiles hold (so its sandwich has figures)
    let frame = '';
    for (const w of view.base.tailWaits)
      for (const fn of w.stack.slice(0, 4)) {
        if (frame) break;
        const q = new URLSearchParams({ stage: base, fn });
        const sw = await get<Reply<'sandwich'>>(`/api/comparisons/demo/sandwich?${q}`);
        if (sw.cum > 0) frame = fn;
      }
    expect(frame).not.toBe('');

    for (const width of [1440, 390]) {
      const problems: string[] = [];
      const ctx = await env.browser.newContext({ viewport: { width, height: 1000 } });
      const page = await ctx.newPage();
      watchPage(page, problems);
      await page.goto(`${env.server.url}/c/demo?tab=requests&base=${base}&target=${target}`);
      const panel = page.locator('.requests-panel');
      await panel.waitFor({ timeout: 120_000 });
      // counted once the page has drawn its tabs (a loaded machine draws them late)
      expect(await page.getByRole('tab', { name: 'Requests' }).count()).toBe(1);

      // how each stage's requests were found
      const how = page.getByRole('list', { name: 'How requests were found' });
      expect(await how.locator('li').allTextContents()).toEqual([
        `fast-json: ${formatInt(view.base.requests)} requests in 6 traces, from runtime/trace tasks (annotated requests)`,
        `pooled: ${formatInt(view.target.requests)} requests in 6 traces, from runtime/trace tasks (annotated requests)`,
      ]);
      // the engine's request rows, one per figure, labelled as the runtime rows
      const rows = page.getByRole('table', { name: 'Traced request figures of both stages' });
      expect(await rows.locator('tbody tr').count()).toBe(view.figures.length);
      expect(await rows.locator('tr[data-metric="request-p99"] th').textContent()).toBe('Traced request latency P99');
      // the histogram: one chart with both stages' series
      const chart = page.getByRole('img', { name: /^Request latency: requests per bin/ });
      await chart.waitFor();
      const legend = await chart.locator('text').allTextContents();
      expect(legend).toContain(`fast-json (${formatInt(view.base.requests)} requests)`);
      // (a phone's legend scrolls: the second stage's entry may sit past its edge)
      if (width === 1440) expect(legend).toContain(`pooled (${formatInt(view.target.requests)} requests)`);
      expect(await chart.locator('path').count()).toBeGreaterThan(2);

      // the parts of the median and of the slowest 1 %, in the runtime rows' words, with their unit
      const tail = page.getByRole('list', { name: 'fast-json, slowest 1 %: parts' });
      const tailParts = await tail.locator('li').allTextContents();
      expect(tailParts.length).toBeGreaterThan(0);
      const words = Object.values(REQUEST_PART_WORDS);
      for (const t of tailParts) {
        expect(words.some((w) => t.startsWith(`${w} `))).toBe(true);
        expect(t).toMatch(/ \d[\d.,]* (ns|µs|ms|s)$/);
      }
      expect(await page.getByRole('list', { name: 'pooled, median (ranks 45–55 %): parts' }).count()).toBe(1);

      // a critical-path timeline per slow request: one lane per goroutine, rectangles coloured by part
      const timelines = page.locator('figure.request-timeline');
      expect(await timelines.count()).toBe(6);
      const first = timelines.first();
      const svg = first.getByRole('img', { name: /^Critical path of request #1 across \d+ goroutines$/ });
      expect(await svg.locator('rect').count()).toBeGreaterThan(1);
      expect(await first.locator('figcaption').textContent()).toMatch(/^#1: \d[\d.]* ms, goroutine \d+, started /);
      const lanes = await first.locator('ol.lane-names li').allTextContents();
      expect(lanes.length).toBeGreaterThan(0);
      // slowest of the fast-json trace drawn first: its caption's time is that request's
      const shownTrace = (await page.locator('.timeline-stage h4').first().textContent())!;
      const tr = view.base.traces.find((t) => shownTrace.includes(t.filename))!;
      expect(await first.locator('figcaption').textContent()).toContain(formatNanos(tr.slowest[0]!.durationNanos));

      // nothing wider than the page outside its scroll boxes
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(width);
      await shot(page, `requests-${width}`);

      // the tail's wait stacks: a click on a frame opens the sandwich of that function
      const waits = page.getByRole('table', { name: 'Tail waits' });
      expect(await waits.locator('ol.tail-stack').count()).toBeGreaterThan(0);
      await waits.getByRole('button', { name: frame, exact: true }).first().click();
      await page.waitForURL(/tab=sandwich/);
      expect(new URL(page.url()).searchParams.get('fn')).toBe(frame);
      await expect
        .poll(() => page.locator('.sandwich-figures code.fn-name').first().textContent(), { timeout: 120_000 })
        .toBe(frame);
      expect(problems).toEqual([]);
      await ctx.close();
    }
  }, 600_000);
});
