// End-to-end: the seeded demo comparison (/c/demo, fixtures/demo: several wrk runs and CPU profiles per
// stage) in real Chromium. The stage table shows each stage's median with its interval and run count,
// and every change against the previous stage carries the verdict the API computed: coloured and
// with its p-value when significant, "~" and uncoloured when within the noise. "How the stages were
// captured" shows each stage's run-by-run captures as one capture of numbered runs. The API's figures are
// checked against wrk's own text in server/test/services/seed.test.ts; here, that the page says the same.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatChange, formatRatio } from '../src/lib/format.ts';
import { formatP } from '../src/lib/significance.ts';
import { CHROMIUM, REPO, type RunningServer, buildWeb, launchBrowser, startServer } from './harness.ts';
import { shot, watchPage } from './page-helpers.ts';

const enabled = existsSync(CHROMIUM) && existsSync(join(REPO, 'fixtures/demo/manifest.json'));

interface Verdict {
  status: string;
  significant: boolean;
  ratio: number;
  p: number;
  nBase: number;
  nTarget: number;
}
interface Row {
  name: string;
  rps: number;
  summary: string;
  estimates: { rps: { n: number; ci: number | null } };
  significance: { vsPrevious: Record<'rps' | 'p99', Verdict> | null };
}

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

describe.skipIf(!enabled)('the demo comparison in the browser', () => {
  it('reads every stage-to-stage change with its verdict, at 1440 px and on a 390 px phone', async () => {
    const rows = ((await (await fetch(`${server.url}/api/comparisons/demo`)).json()) as { stageTable: Row[] })
      .stageTable;
    expect(rows.every((r) => r.summary === 'median' && r.estimates.rps.ci !== null)).toBe(true);
    // The demo tells both kinds of change: at least one significant, and at least one within the noise.
    const verdicts = rows.flatMap((r) => (r.significance.vsPrevious ? [r.significance.vsPrevious.rps] : []));
    expect(verdicts.some((v) => v.significant)).toBe(true);
    expect(verdicts.some((v) => !v.significant)).toBe(true);

    for (const width of [1440, 390]) {
      const problems: string[] = [];
      const ctx = await browser.newContext({ viewport: { width, height: 1000 } });
      const page = await ctx.newPage();
      watchPage(page, problems);
      await page.goto(`${server.url}/c/demo`);
      const table = page.getByRole('table', { name: 'Stage table' });
      await table.waitFor({ timeout: 60_000 });
      for (const row of rows) {
        const tr = table.locator(`tr:has(th:text-is("${row.name}"))`);
        // The median, benchstat's ± and the run count.
        expect(await tr.locator('td[data-field="rps"]').textContent()).toMatch(
          new RegExp(`^[\\d,]+ req/s± ${Math.round(row.estimates.rps.ci! * 100)} % · ${row.estimates.rps.n} runs$`),
        );
        const v = row.significance.vsPrevious;
        if (!v) continue;
        for (const [figure, label] of [
          ['rps', 'QPS'],
          ['p99', 'P99'],
        ] as const) {
          const cell = tr.locator(`td[data-kind="prev"] [data-figure="${figure}"]`);
          const n = `n=${v[figure].nBase}+${v[figure].nTarget}`;
          const text = await cell.textContent();
          const cls = (await cell.getAttribute('class')) ?? '';
          if (v[figure].significant) {
            // QPS as a ratio (×2.05), latency as a percentage (−35 %).
            const change = figure === 'rps' ? formatRatio(v[figure].ratio) : formatChange(v[figure].ratio);
            expect(text).toBe(`${label} ${change} (${formatP(v[figure].p)}, ${n})`);
            expect(cls).toMatch(/good|bad/);
          } else {
            expect(text).toBe(`${label} ~ (${formatP(v[figure].p)}, ${n})`);
            expect(cls).not.toMatch(/good|bad/);
          }
        }
      }
      // How the stages were captured: per stage, its wrk runs as one capture of numbered runs, and
      // the fixed-rate vegeta capture.
      await page.getByText('How the stages were captured').click();
      for (const row of rows) {
        const section = page.getByRole('region', { name: `Capture of ${row.name}` });
        expect(await section.locator('.capture').count()).toBe(2);
        const wrkRuns = await section.locator('.capture').first().locator('.capture-runs li').allTextContents();
        expect(wrkRuns.map((t) => t.split(' · ')[0])).toEqual(
          Array.from({ length: row.estimates.rps.n }, (_, k) => `run ${k + 1}`),
        );
        expect(await section.locator('.capture').first().textContent()).toContain(
          `and ${row.estimates.rps.n - 1} more captures of the same load, one per run`,
        );
      }
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(width);
      await page.getByRole('region', { name: 'Capture of baseline' }).screenshot({
        path: join(REPO, 'test-artifacts', `demo-capture-${width}.png`),
      });
      await page
        .locator('section[aria-labelledby="stages-h"]')
        .screenshot({ path: join(REPO, 'test-artifacts', `demo-stages-${width}.png`) });
      await shot(page, `demo-${width}`);
      await ctx.close();
      expect(problems).toEqual([]);
    }
  }, 180_000);
});
