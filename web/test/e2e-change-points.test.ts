// End-to-end: change points over many stages on the page. Fifteen stages of one wrk run each
// (fixtures/regression-runs: ten runs of the pooled builds, then five of a build slowed on purpose) show one
// QPS change point, marked on the first slow stage's row and listed under the table with a link that opens
// the Diff of the two stages around it; at 390 px the list stays on screen.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CHROMIUM, REPO } from './harness.ts';
import { apiPost, e2eEnvironment, shot, watchPage } from './page-helpers.ts';

const F = join(REPO, 'fixtures', 'regression-runs');
const available = existsSync(CHROMIUM);
const env = e2eEnvironment(available);

const post = <T>(path: string, body: string | FormData, token?: string) =>
  apiPost<T>(env.server.url, path, body, token);

describe.skipIf(!available)('change points on the page', () => {
  it('one QPS change point: a badge on its stage, a line under the table, a link to the pair', async () => {
    const c = await post<{ id: string; editToken: string }>('/api/comparisons', JSON.stringify({ title: 'nightly' }));
    const ids = new Map<string, string>();
    for (const stage of ['pooled', 'pooled-rerun', 'pooled-slow']) {
      for (const k of [1, 2, 3, 4, 5]) {
        const name = `${stage}-${k}`;
        const st = await post<{ id: string }>(`/api/comparisons/${c.id}/stages`, JSON.stringify({ name }), c.editToken);
        ids.set(name, st.id);
        const form = new FormData();
        form.append('file', new Blob([readFileSync(join(F, stage, `run-${k}`, 'wrk.txt'))]), 'wrk.txt');
        await post(`/api/comparisons/${c.id}/stages/${st.id}/artifacts`, form, c.editToken);
      }
    }
    const problems: string[] = [];
    for (const width of [1440, 390]) {
      const ctx = await env.browser.newContext({ viewport: { width, height: 900 } });
      const page = await ctx.newPage();
      watchPage(page, problems);
      await page.goto(`${env.server.url}/c/${c.id}`);
      const table = page.getByRole('table', { name: 'Stage table' });
      await table.waitFor({ timeout: 60_000 });
      const badges = table.locator('th .badge', { hasText: 'change point' });
      await expect.poll(() => badges.count()).toBe(1);
      expect(await table.locator('tr:has(.badge:has-text("change point")) th[scope="row"]').textContent()).toContain(
        'pooled-slow-1',
      );
      const item = page.locator('.change-points li[data-figure="rps"]');
      expect(await item.count()).toBe(1);
      const text = (await item.textContent()) ?? '';
      expect(text).toMatch(/^QPS worsens between pooled-rerun-5 and pooled-slow-1: /);
      expect(text).toMatch(/p=\d/);
      expect(await item.isVisible()).toBe(true);
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBe(width);
      await shot(page, `change-points-${width}`);
      if (width === 1440) {
        await item.getByRole('link', { name: 'diff of the two stages' }).click();
        await page.waitForURL(/tab=diff/);
        const q = new URL(page.url()).searchParams;
        expect([q.get('base'), q.get('target')]).toEqual([ids.get('pooled-rerun-5'), ids.get('pooled-slow-1')]);
      }
      await ctx.close();
    }
    expect(problems).toEqual([]);
  }, 240_000);
});
