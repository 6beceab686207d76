// End-to-end: a folder from `stagediff capture` taken in the browser, as `--server` would upload it. Two
// stage folders of the demo (fixtures/demo/baseline and pooled: six captures of one wrk run each, and
// one of a vegeta run at a fixed rate, each run's files in its own run-K/ folder beside its
// capture.json) picked through the stage's folder picker: the files the records list are uploaded under
// their path in the folder ("run-3-wrk.txt"), each labelled with its run ("wrk run 3 of 6"); the records
// are kept, so the comparison says how each stage was captured; the stage table reads six runs a stage.
// Then every tab at 390 px: no page scrolls sideways.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { CaptureRecord, Comparison, StageTable } from '../src/lib/api.ts';
import { CHROMIUM, REPO } from './harness.ts';
import { addStageWithFiles, createComparison, e2eEnvironment, shot, watchPage } from './page-helpers.ts';

const DEMO = join(REPO, 'fixtures/demo');
const available = existsSync(CHROMIUM) && existsSync(join(DEMO, 'pooled/run-6/capture.json'));
const env = e2eEnvironment(available);

const record = (rel: string) => JSON.parse(readFileSync(join(DEMO, rel), 'utf8')) as CaptureRecord;
const command = (r: CaptureRecord) => (r.load.kind === 'command' ? r.load.command : r.load.equivalentCommand);

describe.skipIf(!available)('a capture folder in the browser', () => {
  it('uploads the files its records list, by run, and keeps the records as the capture details', async () => {
    const problems: string[] = [];
    const ctx = await env.browser.newContext({ viewport: { width: 1440, height: 1000 } });
    const page = await ctx.newPage();
    watchPage(page, problems, true);
    await createComparison(page, env.server.url, 'Captured stages');
    const id = new URL(page.url()).searchParams.get('edit')!;
    for (const stage of ['baseline', 'pooled']) {
      const card = await addStageWithFiles(page, stage, '', []);
      await card.getByLabel(`Add a folder to stage ${stage}`).setInputFiles(join(DEMO, stage));
      await expect
        .poll(() => card.locator('.upload-done[data-filename$=".pb.gz"]').count(), { timeout: 120_000 })
        .toBe(36);
      await expect.poll(() => card.locator('.upload-uploading').count(), { timeout: 120_000 }).toBe(0);
      // Each file under its path in the folder, with its run of the same load.
      const wrk3 = card.locator('li.upload[data-filename="run-3-wrk.txt"]');
      expect(await wrk3.locator('.upload-run').textContent()).toBe('wrk run 3 of 6');
      expect(await wrk3.getAttribute('class')).toContain('upload-done');
      expect(await card.locator('li.upload[data-filename="run-6-cpu.pb.gz"] .upload-run').textContent()).toBe(
        'wrk run 6 of 6',
      );
      expect(await card.locator('li.upload[data-filename="fixed-rate-vegeta.jsonl"] .upload-run').textContent()).toBe(
        'vegeta run 1 of 1',
      );
      // What was read, and what stays out.
      const read = card.locator('li.upload[data-filename="7 capture.json files"]');
      expect(await read.textContent()).toContain('how the stage was captured: 7 runs, 55 files to upload');
      expect(await read.textContent()).toContain('fixed-rate-vegeta.bin');
      // Each run's execution trace and metrics window go up too, and the folder's sources become the stage's.
      expect(await card.locator('li.upload[data-filename="run-2-trace.out"] .upload-run').textContent()).toBe(
        'wrk run 2 of 6',
      );
      expect(await card.locator('li.upload[data-filename="run-2-metrics.json"]').getAttribute('class')).toContain(
        'upload-done',
      );
      await expect
        // (after the writes past RATE_LIMIT_WRITES a minute have waited their Retry-After)
        .poll(() => card.locator('li.upload[data-filename$="sources.tar.gz"].upload-done').count(), {
          timeout: 180_000,
        })
        .toBe(1);
      expect(await card.locator('li.upload[data-filename$="sources.tar.gz"]').textContent()).toMatch(
        /the stage's sources: \d+ files of stagediff\.local\/demo-service/,
      );
      expect(await card.locator('.upload-error').count()).toBe(0);
    }
    await shot(page, 'capture-folder-01-editor');

    // The records are the stage's, as `stagediff capture --server` leaves them.
    const c = (await (await fetch(`${env.server.url}/api/comparisons/${id}`)).json()) as Comparison;
    for (const s of c.stages) {
      expect(s.artifacts).toHaveLength(55);
      expect(s.sources).toMatchObject({ modulePath: 'stagediff.local/demo-service', dirty: false });
      expect((s.captures ?? []).map((r) => r.startedAt).sort()).toEqual(
        [1, 2, 3, 4, 5, 6]
          .map((k) => record(`${s.name}/run-${k}/capture.json`).startedAt)
          .concat(record(`${s.name}/fixed-rate/capture.json`).startedAt)
          .sort(),
      );
    }
    const table = (await (await fetch(`${env.server.url}/api/comparisons/${id}/stage-table`)).json()) as StageTable;
    expect(table.rows.map((r) => r.figures.rps?.n)).toEqual([6, 6]);

    // The comparison says how each stage was captured: the load's command, the run lines.
    await page.getByRole('link', { name: 'Open comparison' }).click();
    await page.getByRole('table', { name: 'Stage table' }).waitFor();
    await page.getByText('How the stages were captured').click();
    const baseline = page.getByRole('region', { name: 'Capture of baseline' });
    const text = (await baseline.textContent()) ?? '';
    expect(text).toContain(command(record('baseline/run-1/capture.json')));
    expect(text).toContain(command(record('baseline/fixed-rate/capture.json')));
    expect(text).toContain('and 5 more captures of the same load, one per run');
    expect(text).toContain(record('baseline/run-1/capture.json').load.kind === 'command' ? 'wrk debian/' : '');
    await shot(page, 'capture-folder-02-details');

    // Every tab on a phone: the page never scrolls sideways.
    await page.setViewportSize({ width: 390, height: 844 });
    for (const tab of ['Flamegraphs', 'Diff', 'Load tests']) {
      await page.getByRole('tab', { name: tab, exact: true }).click();
      if (tab === 'Flamegraphs') await page.locator('[data-flame-drawn="1"]').nth(1).waitFor({ timeout: 60_000 });
      if (tab === 'Diff') await page.getByRole('table', { name: 'Hot-path diff' }).waitFor({ timeout: 120_000 });
      if (tab === 'Load tests') await page.locator('.load-panel .echart').first().waitFor({ timeout: 60_000 });
      const [scroll, client] = await page.evaluate(() => [
        document.documentElement.scrollWidth,
        document.documentElement.clientWidth,
      ]);
      expect(scroll, `${tab}: the page scrolls sideways at 390 px`).toBeLessThanOrEqual(client);
      await shot(page, `capture-folder-390-${tab.replace(/\W+/g, '-').toLowerCase()}`);
    }
    expect(problems).toEqual([]);
    await ctx.close();
  }, 900_000);
});
