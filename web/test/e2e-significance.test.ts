// End-to-end for noise and significance: real repeated runs of the demo service
// (fixtures/repeated-runs: 5 wrk runs + 5 CPU profiles per stage) uploaded over HTTP, then the comparison
// read in Chromium at 1440 and 390 px: verdicts in the stage table (coloured only when significant),
// benchmark verdicts, the phone layout without sideways scrolling, greyed hot paths inside the noise.
import { existsSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CHROMIUM, REPO } from './harness.ts';
import { e2eEnvironment, shot, watchPage } from './page-helpers.ts';

const RUNS = join(REPO, 'fixtures/repeated-runs');
const available = existsSync(CHROMIUM) && existsSync(join(RUNS, 'pooled/run-5/wrk.txt'));
const env = e2eEnvironment(available);

async function api(path: string, init: RequestInit & { token?: string } = {}) {
  const headers: Record<string, string> = { ...(init.token ? { authorization: `Bearer ${init.token}` } : {}) };
  if (typeof init.body === 'string') headers['content-type'] = 'application/json';
  const r = await fetch(`${env.server.url}${path}`, { ...init, headers });
  if (!r.ok) throw new Error(`${path}: ${r.status} ${await r.text()}`);
  return r.json();
}

/** fast-json → pooled → pooled re-run, each with its 5 wrk runs and CPU profiles; Go benchmarks on the first two. */
async function seed(): Promise<string> {
  const { id, editToken } = await api('/api/comparisons', {
    method: 'POST',
    body: JSON.stringify({ title: 'Repeated runs: is the change real?' }),
  });
  const stages: [string, string, string[]][] = [
    ['fast-json', 'append-based JSON encoder', [join(REPO, 'fixtures/gobench/kvjoin-before.txt')]],
    ['pooled', 'shared Transport, pooled buffers', [join(REPO, 'fixtures/gobench/kvjoin-after.txt')]],
    ['pooled-rerun', 'the same code, measured again', []],
  ];
  for (const [name, note, extra] of stages) {
    const st = await api(`/api/comparisons/${id}/stages`, {
      method: 'POST',
      token: editToken,
      body: JSON.stringify({ name, note }),
    });
    const files = [1, 2, 3, 4, 5].flatMap((i) => [`${RUNS}/${name}/run-${i}/wrk.txt`]);
    files.push(...[1, 2, 3, 4, 5].map((i) => `${RUNS}/${name}/run-${i}/cpu.pb.gz`), ...extra);
    for (const f of files) {
      const form = new FormData();
      const rel = f.startsWith(RUNS) ? f.slice(RUNS.length + 1).replace(/\//g, '-') : basename(f);
      form.append('file', new Blob([readFileSync(f)]), rel);
      await api(`/api/comparisons/${id}/stages/${st.id}/artifacts`, { method: 'POST', token: editToken, body: form });
    }
  }
  return id;
}

describe.skipIf(!available)('significance end to end', () => {
  it('stage table verdicts at 1440 px and on a 390 px phone; hot paths inside the noise greyed', async () => {
    const id = await seed();
    const problems: string[] = [];

    const wide = await env.browser.newContext({ viewport: { width: 1440, height: 1100 } });
    const page = await wide.newPage();
    watchPage(page, problems);
    await page.goto(`${env.server.url}/c/${id}`);
    const table = page.getByRole('table', { name: 'Stage table' });
    await table.waitFor();
    const prev = (stage: string) => table.locator(`tr:has(th:text-is("${stage}")) td[data-kind="prev"]`);
    const qps = (stage: string) => prev(stage).locator('[data-figure="rps"]');
    // fast-json → pooled: every pooled run beat every fast-json run (benchstat: +138.31 %, p=0.008 n=5).
    await expect.poll(() => qps('pooled').textContent()).toBe('QPS ×2.38 (p=0.008, n=5+5)');
    expect(await qps('pooled').getAttribute('class')).toContain('good');
    // pooled → its re-run: ~ (benchstat: p=0.151 n=5), not coloured.
    expect(await qps('pooled-rerun').textContent()).toBe('QPS ~ (p=0.151, n=5+5)');
    expect(await qps('pooled-rerun').getAttribute('class')).not.toMatch(/good|bad/);
    // P99's fall is within the noise (benchstat: ~ p=0.056).
    expect(await prev('pooled').locator('[data-figure="p99"]').textContent()).toBe('P99 ~ (p=0.056, n=5+5)');
    // Medians with benchstat's ± (∞ below 6 runs) and the run count.
    const rps = table.locator('tr:has(th:text-is("pooled")) td[data-field="rps"]');
    expect(await rps.textContent()).toBe('9,742 req/s± ∞ · 5 runs');
    // Benchmarks: benchstat's verdicts (kvjoin: Join −94.58 % and −97.75 % significant, Split ~).
    await expect
      .poll(() => prev('pooled').locator('[data-figure="bench:sec/op"]').textContent())
      .toMatch(/^sec\/op −\d+ % geomean, 2 of 3 significant$/);
    // What changed: only significant changes are worded as changes.
    const wc = page.getByRole('list', { name: 'What changed' });
    const stage = (i: number) => wc.locator(':scope > li').nth(i).locator('li');
    await expect
      .poll(() => stage(2).allTextContents(), { timeout: 60_000 })
      .toContain('QPS ~ within the noise (p=0.151, n=5+5)');
    expect(await stage(1).allTextContents()).toContain('QPS ×2.38 (p=0.008, n=5+5)');
    expect((await stage(1).allTextContents()).some((l) => l.startsWith('go test -bench sec/op'))).toBe(true);
    await page.getByText('How to read this').click();
    await shot(page, 'significance-1440');
    await page
      .locator('section[aria-labelledby="stages-h"]')
      .screenshot({ path: join(REPO, 'test-artifacts', 'significance-1440-stages.png') });

    // Diff pooled → pooled-rerun: most hot paths are inside the noise, marked, their verdict in words.
    const ids = (await api(`/api/comparisons/${id}`)).stages.map((s: { id: string }) => s.id);
    await page.goto(`${env.server.url}/c/${id}?tab=diff&base=${ids[1]}&target=${ids[2]}`);
    const hot = page.getByRole('table', { name: 'Hot-path diff' });
    await hot.waitFor({ timeout: 60_000 });
    await expect.poll(() => hot.locator('tr.in-noise').count()).toBeGreaterThan(15);
    const quiet = hot.locator('tr.in-noise').first();
    // Tested functions carry p and their Benjamini–Hochberg q; those moving less than the floor are untested.
    expect(await quiet.getAttribute('title')).toMatch(
      /^cum: ~ within the noise \((p=\d\.\d{3}, q=\d\.\d{3}, )?n=5\+5\)/,
    );
    expect(await quiet.locator('.verdict-words').textContent()).toMatch(
      /^~ (within the noise \(p=\d\.\d{3}, q=\d\.\d{3}\)|below the test floor)$/,
    );
    // The same build measured twice: no hot path is significant.
    expect(await hot.locator('tr[data-verdict="significant"]').count()).toBe(0);
    await page.locator('.legend-noise').waitFor();
    // The legend says how many functions were tested as one family.
    expect(await page.locator('.legend-noise').textContent()).toMatch(
      /\d+ functions tested \(of [\d,]+: those whose cost moves by at least 1(\.0)? % of the total across the profiles\); a change is significant where its Benjamini–Hochberg q ≤ 0\.05/,
    );
    // Frames inside the noise are hatched, apart from the grey of those below the noise floor; the
    // legend names both.
    await page.locator('[data-flame-drawn="1"]').first().waitFor({ timeout: 60_000 });
    expect(Number(await page.locator('.diff-panel .flame-graph').getAttribute('data-hatched'))).toBeGreaterThan(10);
    expect(await page.locator('.legend-stop[data-legend="within-noise"]').textContent()).toContain(
      'not significant (q > 0.05, or not tested)',
    );
    await page.getByText('below noise floor').first().waitFor();
    expect(await page.locator('.noise-banner').count()).toBe(0);
    await shot(page, 'significance-diff-1440');
    await page.locator('.diff-panel').screenshot({ path: join(REPO, 'test-artifacts', 'significance-diff-panel.png') });

    // Trajectory: each function's share with its range over the 5 profiles of every stage.
    await page.goto(`${env.server.url}/c/${id}?tab=trends`);
    const traj = page.getByRole('list', { name: 'Trajectory of top functions across stages' });
    await traj.waitFor();
    await expect.poll(() => traj.locator('line.traj-whisker').count()).toBeGreaterThan(12);
    expect(await traj.locator('.traj-values').first().textContent()).toMatch(/over 5 profiles/);
    await traj.screenshot({ path: join(REPO, 'test-artifacts', 'significance-trajectory.png') });

    // Phone: stage, QPS, P99 and the verdicts, without scrolling sideways.
    const phone = await env.browser.newContext({ viewport: { width: 390, height: 900 }, deviceScaleFactor: 2 });
    const p2 = await phone.newPage();
    watchPage(p2, problems);
    await p2.goto(`${env.server.url}/c/${id}`);
    const t2 = p2.getByRole('table', { name: 'Stage table' });
    await t2.waitFor();
    await expect.poll(() => t2.locator('td[data-kind="prev"] [data-figure="rps"]').nth(0).isVisible()).toBe(true);
    await shot(p2, 'significance-390');
    await p2
      .locator('section[aria-labelledby="stages-h"]')
      .screenshot({ path: join(REPO, 'test-artifacts', 'significance-390-stages.png') });
    const heads = await t2.locator('thead tr:last-child th:visible').allTextContents();
    expect(heads).toEqual(['Stage', 'QPS', 'P99', 'vs previous']);
    const box = await t2.boundingBox();
    expect(box!.x).toBeGreaterThanOrEqual(0);
    expect(box!.x + box!.width).toBeLessThanOrEqual(390);
    const sideways = await p2.evaluate(() => {
      const wrap = document.querySelector('.stage-table-wrap') as HTMLElement;
      return { page: document.documentElement.scrollWidth, wrap: wrap.scrollWidth - wrap.clientWidth };
    });
    expect(sideways.page).toBeLessThanOrEqual(390);
    expect(sideways.wrap).toBeLessThanOrEqual(0);

    expect(problems).toEqual([]);
    await wide.close();
    await phone.close();
  }, 180_000);
});
