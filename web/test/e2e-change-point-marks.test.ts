// End-to-end: change points marked on the trajectory and on the stage table's rows. Fifteen stages of one wrk run
// and its CPU profile each (fixtures/regression-runs: ten runs of the pooled builds, then five of a build slowed
// on purpose): the trajectory draws one dashed mark between pooled-rerun-5 and pooled-slow-1 on every function's
// card, labelled with the figures that shift there, and the mark on pooled-slow-1's row of the stage table links to
// the Diff of that pair. At 1440 and 390 px.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CHROMIUM, REPO } from './harness.ts';
import { apiPost, e2eEnvironment, shot, watchPage } from './page-helpers.ts';

const F = join(REPO, 'fixtures', 'regression-runs');
const available = existsSync(CHROMIUM);
const env = e2eEnvironment(available);

const post = <T>(path: string, body: string | FormData, token?: string) =>
  apiPost<T>(env.server.url, path, body, token);

describe.skipIf(!available)('change points marked on the trajectory and the stage table', () => {
  it('a dashed mark on every trajectory card; the row mark opens the diff of the pair around it', async () => {
    const c = await post<{ id: string; editToken: string }>('/api/comparisons', JSON.stringify({ title: 'nightly' }));
    const ids = new Map<string, string>();
    for (const stage of ['pooled', 'pooled-rerun', 'pooled-slow']) {
      for (const k of [1, 2, 3, 4, 5]) {
        const name = `${stage}-${k}`;
        const st = await post<{ id: string }>(`/api/comparisons/${c.id}/stages`, JSON.stringify({ name }), c.editToken);
        ids.set(name, st.id);
        const form = new FormData();
        for (const file of ['wrk.txt', 'cpu.pb.gz'])
          form.append('file', new Blob([readFileSync(join(F, stage, `run-${k}`, file))]), file);
        await post(`/api/comparisons/${c.id}/stages/${st.id}/artifacts`, form, c.editToken);
      }
    }
    // What the server says: the marks the page must draw (QPS at least, at the first slow stage).
    const table = (await (await fetch(`${env.server.url}/api/comparisons/${c.id}/stage-table`)).json()) as {
      changePoints: { figure: string; stageId: string; previousStageId: string }[];
    };
    const atSlow = table.changePoints.filter((m) => m.stageId === ids.get('pooled-slow-1'));
    expect(atSlow.map((m) => m.figure)).toContain('rps');
    expect(new Set(table.changePoints.map((m) => m.stageId))).toEqual(new Set([ids.get('pooled-slow-1')]));

    const problems: string[] = [];
    for (const width of [1440, 390]) {
      const ctx = await env.browser.newContext({ viewport: { width, height: 900 } });
      const page = await ctx.newPage();
      watchPage(page, problems);
      await page.goto(`${env.server.url}/c/${c.id}?tab=trends`);
      const cards = page.locator('.trajectory .traj-card');
      await cards.first().waitFor({ timeout: 60_000 });
      const marks = page.locator('.trajectory .traj-change-point');
      await expect.poll(() => marks.count(), { timeout: 60_000 }).toBe(await cards.count());
      // One mark per card, at the first slow stage, labelled with the figures that shift there.
      const drawn = await marks.evaluateAll((gs) =>
        gs.map((g) => {
          const line = g.querySelector('line');
          return {
            stage: g.getAttribute('data-stage-id'),
            figures: g.getAttribute('data-figures'),
            label: g.querySelector('text')?.textContent,
            x: Number(line?.getAttribute('x1')),
            title: g.querySelector('title')?.textContent,
          };
        }),
      );
      const figures = atSlow.map((m) => m.figure).join(' ');
      for (const d of drawn) {
        expect(d.stage).toBe(ids.get('pooled-slow-1'));
        expect(d.figures).toBe(figures);
        expect(d.label).toMatch(/^QPS/);
        expect(d.title).toContain('QPS worsens between pooled-rerun-5 and pooled-slow-1');
        // Halfway between stage 10 (x = 4 + 9·212/14) and stage 11 (x = 4 + 10·212/14) of the 220 px card.
        expect(d.x).toBeCloseTo(4 + (9.5 * 212) / 14, 5);
      }
      const caption = page.locator('.trajectory-change-points');
      expect(await caption.textContent()).toContain('QPS worsens between pooled-rerun-5 and pooled-slow-1');
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBe(width);
      await shot(page, `change-point-marks-trajectory-${width}`);

      // The stage table's mark on the row of the first slow stage links to the pair around the change.
      const stageTable = page.getByRole('table', { name: 'Stage table' });
      await stageTable.waitFor({ timeout: 60_000 });
      const rowMarks = stageTable.locator('a.change-point-mark');
      expect(await rowMarks.count()).toBe(1);
      const rowMark = rowMarks.first();
      expect(await stageTable.locator('tr:has(a.change-point-mark) th[scope="row"]').textContent()).toContain(
        'pooled-slow-1',
      );
      expect(await rowMark.textContent()).toMatch(/change point: QPS/);
      const href = new URL((await rowMark.getAttribute('href')) ?? '', env.server.url);
      expect(href.searchParams.get('tab')).toBe('diff');
      expect([href.searchParams.get('base'), href.searchParams.get('target')]).toEqual([
        ids.get('pooled-rerun-5'),
        ids.get('pooled-slow-1'),
      ]);
      await rowMark.scrollIntoViewIfNeeded();
      await shot(page, `change-point-marks-table-${width}`);
      if (width === 1440) {
        await rowMark.click();
        await page.waitForURL(/tab=diff/);
        const q = new URL(page.url()).searchParams;
        expect([q.get('base'), q.get('target')]).toEqual([ids.get('pooled-rerun-5'), ids.get('pooled-slow-1')]);
      }
      await ctx.close();
    }
    expect(problems).toEqual([]);
  }, 300_000);
});
