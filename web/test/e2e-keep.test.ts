// End-to-end: the edit-token holder keeps a comparison from retention with the page's "Keep" control,
// in real Chromium against the real server; the API and a reload agree with what the page shows.
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CHROMIUM } from './harness.ts';
import { createComparison, e2eEnvironment, watchPage } from './page-helpers.ts';

const env = e2eEnvironment(existsSync(CHROMIUM));

describe.skipIf(!existsSync(CHROMIUM))('keeping a comparison from retention', () => {
  it('sets and clears keep from the edit controls', async () => {
    const problems: string[] = [];
    const page = await (await env.browser.newContext()).newPage();
    watchPage(page, problems);
    await createComparison(page, env.server.url, 'E2E: kept release');
    // The home page's editor holds the new comparison (and keeps its edit token in this browser).
    const id = new URL(page.url()).searchParams.get('edit')!;
    await page.goto(`${env.server.url}/c/${id}`);
    const keepOf = async () =>
      ((await (await fetch(`${env.server.url}/api/comparisons/${id}`)).json()) as { keep: boolean }).keep;
    expect(await keepOf()).toBe(false);

    await page.getByRole('button', { name: 'Edit stages' }).click();
    const keep = page.getByRole('checkbox', { name: /Keep this comparison/ });
    expect(await keep.isChecked()).toBe(false);
    await keep.check();
    await expect.poll(keepOf).toBe(true);

    await page.reload();
    await page.getByRole('button', { name: 'Edit stages' }).click();
    await expect.poll(() => keep.isChecked()).toBe(true);
    await keep.uncheck();
    await expect.poll(keepOf).toBe(false);
    expect(problems).toEqual([]);
  });
});
