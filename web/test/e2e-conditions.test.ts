// End-to-end: a stage's conditions on the page. wrk runs against k6 runs (fixtures/loadtests) read
// "not comparable" in the stage table, with both tools and their settings named over it; a Go 1.22 trace
// against a Go 1.26 one is named in the same banner; each stage's conditions are listed in its details.
import { existsSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CHROMIUM, REPO } from './harness.ts';
import { apiPost, e2eEnvironment, shot, watchPage } from './page-helpers.ts';

const F = join(REPO, 'fixtures');
const available = existsSync(CHROMIUM);
const env = e2eEnvironment(available);

const post = <T>(path: string, body: string | FormData, token?: string) =>
  apiPost<T>(env.server.url, path, body, token);

async function comparison(title: string, stages: [string, string[]][]): Promise<string> {
  const c = await post<{ id: string; editToken: string }>('/api/comparisons', JSON.stringify({ title }));
  for (const [name, files] of stages) {
    const st = await post<{ id: string }>(`/api/comparisons/${c.id}/stages`, JSON.stringify({ name }), c.editToken);
    for (const f of files) {
      const form = new FormData();
      form.append('file', new Blob([readFileSync(join(F, f))]), basename(f));
      await post(`/api/comparisons/${c.id}/stages/${st.id}/artifacts`, form, c.editToken);
    }
  }
  return c.id;
}

describe.skipIf(!available)('conditions on the page', () => {
  it('wrk against k6: no QPS verdict, both tools named; Go 1.22 against 1.26 named', async () => {
    const tools = await comparison('wrk against k6', [
      ['pooled', ['loadtests/wrk/three-runs.txt']],
      [
        'async-log',
        ['console-v1-ok.txt', 'console-v0-ok.txt', 'console-v1-errors-full.txt'].map((f) => `loadtests/k6/${f}`),
      ],
    ]);
    const go = await comparison('go versions', [
      ['before', ['traces/demo-go1.22-baseline.trace']],
      ['after', ['traces/demo-go1.26-baseline.trace']],
    ]);
    const problems: string[] = [];
    const ctx = await env.browser.newContext({ viewport: { width: 1280, height: 1000 } });
    const page = await ctx.newPage();
    watchPage(page, problems);

    await page.goto(`${env.server.url}/c/${tools}`);
    const table = page.getByRole('table', { name: 'Stage table' });
    await table.waitFor({ timeout: 60_000 });
    const prev = table.locator('tr:has(th:has-text("async-log")) td[data-kind="prev"]');
    await expect.poll(() => prev.locator('[data-figure="rps"]').textContent()).toBe('QPS not comparable');
    expect(await prev.textContent()).not.toMatch(/×|%/);
    const banner = page.getByRole('alert', { name: 'Stages measured under different conditions' });
    expect(await banner.textContent()).toBe(
      'pooled → async-log: Measured under different conditions: load (pooled: wrk, 1 thread, 4 connections, 1s, /api/item · async-log: k6, 10 VUs, 50 iterations/s, 2s).',
    );
    expect(await table.locator('th .badge.warn').textContent()).toBe(' conditions differ');
    // Each stage's conditions, per file.
    await page.getByText('Conditions of each stage').click();
    const k6 = page.getByRole('region', { name: 'Conditions of async-log' });
    expect(await k6.locator('[data-condition="load"] dd').textContent()).toBe('k6, 10 VUs, 50 iterations/s, 2s');
    expect(await k6.locator('li').count()).toBe(3);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBe(1280);
    await shot(page, 'conditions-tools');

    await page.goto(`${env.server.url}/c/${go}`);
    const goBanner = page.getByRole('alert', { name: 'Stages measured under different conditions' });
    await goBanner.waitFor({ timeout: 60_000 });
    expect(await goBanner.textContent()).toContain('Go version: before go1.22 · after go1.26');
    await shot(page, 'conditions-go');
    await ctx.close();
    expect(problems).toEqual([]);
  }, 300_000);
});
