// End-to-end: runs are runs. Real repeated runs of the demo service (fixtures/repeated-runs: wrk runs
// with a CPU profile taken during each) uploaded through the page, two per stage: the stage table and
// the diff say 2+2 runs are too few to test, and the diff is coloured by the size of each change with a
// banner saying so. The same file uploaded again is refused at the file and counts nothing; a file can
// be deleted from its stage; a visitor holding the edit token (as the CLI or CI prints it) pastes it and
// the page becomes editable.
import { copyFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { StageTable } from '../src/lib/api.ts';
import { neutralColor } from '../src/lib/diff-color.ts';
import { CHROMIUM, REPO } from './harness.ts';
import {
  type DrawnNode,
  addStageWithFiles,
  createComparison,
  e2eEnvironment,
  frameFills,
  shot,
  watchPage,
} from './page-helpers.ts';

const RUNS = join(REPO, 'fixtures/repeated-runs');
const available = existsSync(CHROMIUM) && existsSync(join(RUNS, 'pooled/run-2/cpu.pb.gz'));
const env = e2eEnvironment(available);

// The runs' files under names that say which run they are (the fixture folders name them alike).
const files = mkdtempSync(join(tmpdir(), 'stagediff-runs-'));
afterAll(() => rmSync(files, { recursive: true, force: true }));
function runFiles(stage: string, runs: number[]): string[] {
  return runs.flatMap((r) =>
    ['wrk.txt', 'cpu.pb.gz'].map((f) => {
      const to = join(files, `${stage}-run-${r}-${f}`);
      copyFileSync(join(RUNS, stage, `run-${r}`, f), to);
      return to;
    }),
  );
}

describe.skipIf(!available)('runs are runs', () => {
  it('2+2 runs: too few to test, coloured by size; a duplicate is refused at the file; delete a file; paste a token', async () => {
    const problems: string[] = [];
    const ctx = await env.browser.newContext({ viewport: { width: 1440, height: 1000 } });
    const page = await ctx.newPage();
    watchPage(page, problems, true);
    await createComparison(page, env.server.url, 'Two runs per stage');
    const id = new URL(page.url()).searchParams.get('edit')!;
    for (const stage of ['fast-json', 'pooled']) {
      const card = await addStageWithFiles(page, stage, '', runFiles(stage, [1, 2]));
      await expect.poll(() => card.locator('.upload-done').count()).toBe(4);
    }
    const stageTable = async () =>
      (await (await fetch(`${env.server.url}/api/comparisons/${id}/stage-table`)).json()) as StageTable;
    const before = await stageTable();
    expect(before.rows.map((r) => [r.figures.rps?.n, r.figures.cpuPerRequest?.n])).toEqual([
      [2, 2],
      [2, 2],
    ]);
    expect(before.rows[1]!.vsPrevious!.rps.status).toBe('too-few-runs');

    // The stage table: the change is shown, unjudged.
    await page.getByRole('link', { name: 'Open comparison' }).click();
    const table = page.getByRole('table', { name: 'Stage table' });
    await table.waitFor();
    const pooledQps = table.locator('tr:has(th:text-is("pooled")) td[data-kind="prev"] [data-figure="rps"]');
    expect(await pooledQps.textContent()).toMatch(/^QPS ×[\d.]+ · 2\+2 runs: too few to test$/);
    expect(await pooledQps.getAttribute('class')).not.toMatch(/good|bad/);
    expect(await table.locator('tr:has(th:text-is("fast-json")) td[data-field="rps"]').textContent()).toMatch(
      /± ∞ · 2 runs$/,
    );

    // The diff: coloured by the size of each change, and a banner that says why nothing is judged.
    const diffAnswer = page.waitForResponse((r) => /\/diff\?/.test(r.url()) && !r.url().includes('root='), {
      timeout: 60_000,
    });
    await page.getByRole('tab', { name: 'Diff' }).click();
    const diffTree = ((await (await diffAnswer).json()) as { tree: DrawnNode }).tree;
    const banner = page.locator('.noise-banner');
    await banner.waitFor({ timeout: 60_000 });
    expect(await banner.locator('strong').textContent()).toBe(
      '2+2 runs: too few to test — record at least 4 per stage.',
    );
    await page.locator('.diff-panel [data-flame-drawn="1"]').waitFor({ timeout: 60_000 });
    // The colours drawn, read from the canvas where the tree's values put each frame: most frames are
    // tinted by their change, none is hatched.
    const graph = page.locator('.diff-panel .flame-graph');
    const fills = await frameFills(graph, diffTree, 8);
    const grey = neutralColor(false);
    expect(fills.length).toBeGreaterThan(10);
    expect(fills.filter((f) => f !== grey).length).toBeGreaterThan(fills.length / 4);
    expect(await graph.getAttribute('data-hatched')).toBe('0');
    // Hot paths carry no verdict words (the banner says it once) and none is marked as inside the noise.
    const hot = page.getByRole('table', { name: 'Hot-path diff' });
    // (Rendered after the graph is painted: wait for it, so the counts below are of its rows.)
    await hot.locator('tbody tr').first().waitFor();
    expect(await hot.locator('tr.in-noise').count()).toBe(0);
    expect(await hot.locator('.verdict-words').count()).toBe(0);
    await shot(page, 'runs-2x2-diff');

    // The same bytes again: refused at the file, naming the file already there; n stays 2.
    await page.getByRole('button', { name: 'Edit stages' }).click();
    const card = page.getByRole('region', { name: 'Stage fast-json' });
    await card.getByLabel('Add files to stage fast-json').setInputFiles(join(files, 'fast-json-run-1-wrk.txt'));
    const refused = card.locator('.upload-error');
    await refused.waitFor({ timeout: 30_000 });
    expect(await refused.locator('.upload-result').textContent()).toBe(
      '✗ already in this stage as fast-json-run-1-wrk.txt: a run uploaded twice is one run; nothing was stored',
    );
    expect(await refused.locator('.upload-result .bad').getAttribute('title')).toMatch(
      /the stage already holds these exact bytes as fast-json-run-1-wrk\.txt/,
    );
    expect((await stageTable()).rows[0]!.figures.rps!.n).toBe(2);
    await expect
      .poll(() => table.locator('tr:has(th:text-is("fast-json")) td[data-field="rps"]').textContent())
      .toMatch(/· 2 runs$/);
    await card.screenshot({ path: join(REPO, 'test-artifacts', 'runs-duplicate.png') });

    // Delete a run's wrk output: the stage has one run left.
    await card.getByRole('button', { name: 'Delete file fast-json-run-2-wrk.txt' }).click();
    await expect.poll(async () => (await stageTable()).rows[0]!.figures.rps!.n).toBe(1);
    await expect.poll(() => card.getByRole('button', { name: 'Delete file fast-json-run-2-wrk.txt' }).count()).toBe(0);
    await expect
      .poll(() => table.locator('tr:has(th:text-is("fast-json")) td[data-field="rps"] .spread').count())
      .toBe(0);
    expect(await pooledQps.textContent()).toMatch(/· 1 run: no noise estimate$/);

    // A visitor with the token the CLI printed: read-only until it is pasted, editable after.
    const token = await page.evaluate((cid) => JSON.parse(localStorage.getItem('stagediff.tokens') ?? '{}')[cid], id);
    expect(typeof token).toBe('string');
    const other = await env.browser.newContext({ viewport: { width: 1440, height: 1000 } });
    const visitor = await other.newPage();
    watchPage(visitor, problems);
    await visitor.goto(`${env.server.url}/c/${id}`);
    await visitor.getByText('read-only', { exact: false }).waitFor();
    expect(await visitor.getByRole('button', { name: 'Edit stages' }).count()).toBe(0);
    await visitor.getByRole('button', { name: 'Have an edit token? Paste it' }).click();
    const field = visitor.getByLabel('Edit token', { exact: true });
    await field.fill('not-the-token');
    await visitor.getByRole('button', { name: 'Use token' }).click();
    await expect
      .poll(() => visitor.getByRole('form', { name: 'Paste an edit token' }).getByRole('alert').textContent())
      .toBe('This token does not open this comparison.');
    await field.fill(` ${token} `);
    await visitor.getByRole('button', { name: 'Use token' }).click();
    await visitor.getByRole('button', { name: 'Edit stages' }).waitFor({ timeout: 30_000 });
    expect(await visitor.getByLabel('Comparison title').inputValue()).toBe('Two runs per stage');
    expect(await visitor.evaluate((cid) => JSON.parse(localStorage.getItem('stagediff.tokens') ?? '{}')[cid], id)).toBe(
      token,
    );
    // Kept like a token made here: the home page lists the comparison, and its editor opens.
    await visitor.goto(`${env.server.url}/?edit=${id}`);
    await visitor.getByRole('region', { name: 'Stage pooled' }).waitFor();
    await shot(visitor, 'runs-token-pasted');

    await other.close();
    await ctx.close();
    expect(problems).toEqual([]);
  }, 240_000);
});
