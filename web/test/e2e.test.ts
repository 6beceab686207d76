// End-to-end: real Chromium (Debian's /usr/bin/chromium via playwright-core) against the real server
// with real files. Screenshots go to test-artifacts/ (gitignored).
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { formatMs, formatRps } from '../../server/src/api/format.ts';
import type { Comparison, StageTable } from '../src/lib/api.ts';
import { stageTableCsv, stageTableMarkdown } from '../src/lib/stage-table-export.ts';
import { CHROMIUM, REPO, SAMPLES } from './harness.ts';
import {
  type DrawnNode,
  addStageWithFiles,
  createComparison,
  e2eEnvironment,
  framePoint,
  shot,
  watchPage,
  widestPath,
} from './page-helpers.ts';

interface StageFiles {
  name: string;
  note: string;
  wrk: string;
  cpu: string;
}

/** The first three stages of the committed demo (fixtures/demo), the first wrk run and CPU profile of each. */
function pickStages(): StageFiles[] {
  const demo = join(REPO, 'fixtures/demo');
  return ['baseline', 'fast-json', 'pooled'].map((n) => {
    const files = { wrk: join(demo, n, 'run-1', 'wrk.txt'), cpu: join(demo, n, 'run-1', 'cpu.pb.gz') };
    for (const f of Object.values(files))
      if (!existsSync(f) || statSync(f).size === 0) throw new Error(`missing: ${f}`);
    return { name: n, note: `key action of ${n}`, ...files };
  });
}

function cli(args: string[]): unknown {
  const out = execFileSync(process.execPath, [join(REPO, 'server/bin/stagediff.mjs'), ...args], {
    cwd: REPO,
    encoding: 'utf8',
  });
  return JSON.parse(out);
}

const env = e2eEnvironment(existsSync(CHROMIUM));

describe.skipIf(!existsSync(CHROMIUM))('dashboard end to end', () => {
  it('uploads three stages, shows the table, diff, hot path, and a share link that reopens the same view', async () => {
    const problems: string[] = [];
    const ctx = await env.browser.newContext({ viewport: { width: 1440, height: 1000 } });
    await ctx.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: env.server.url });
    const page = await ctx.newPage();
    watchPage(page, problems);
    const stages = pickStages();

    await createComparison(page, env.server.url, 'E2E: JSON service story');
    for (const [i, s] of stages.entries()) {
      const card = await addStageWithFiles(page, s.name, s.note, [s.wrk, s.cpu], i === 2 ? 'drop' : 'picker');
      await expect.poll(() => card.locator('.upload-done').count()).toBe(2);
      // The per-file result names the detected format.
      await card.locator('.upload-done .badge').first().waitFor({ state: 'visible' });
    }
    // A bad file is reported on its own line with the server's message; the stage keeps its good files.
    const first = page.getByRole('region', { name: `Stage ${stages[0]!.name}` });
    await first
      .getByLabel(`Add files to stage ${stages[0]!.name}`)
      .setInputFiles(`${SAMPLES}/pprof/hostile/empty_file.pb.gz`);
    await expect.poll(async () => first.locator('.upload-error').count(), { timeout: 30_000 }).toBe(1);
    expect((await first.locator('.upload-error .upload-result').textContent())?.length).toBeGreaterThan(3);
    await shot(page, '01-home-uploads');

    await page.getByRole('link', { name: 'Open comparison' }).click();
    const table = page.getByRole('table', { name: 'Stage table' });
    await table.waitFor();
    const id = new URL(page.url()).pathname.split('/').pop()!;

    // Stage table numbers agree with the API, and the API with the CLI on the same files.
    const api = (await (await fetch(`${env.server.url}/api/comparisons/${id}/stage-table`)).json()) as StageTable;
    expect(api.rows.map((r) => r.name)).toEqual(stages.map((s) => s.name));
    for (const [i, s] of stages.entries()) {
      const row = table.locator(`tbody tr[data-stage-id="${api.rows[i]!.stageId}"]`);
      const apiRow = api.rows[i]!;
      const parsed = cli(['inspect', s.wrk, '--json']) as {
        summary: { rps: number; latencyMs: { p50: number | null; p99: number | null } };
      };
      // One run per stage: its figures are the run's own.
      expect(apiRow.figures.rps!.n).toBe(1);
      expect(apiRow.figures.rps!.median).toBeCloseTo(parsed.summary.rps, 6);
      expect(apiRow.figures.p99!.median).toBe(parsed.summary.latencyMs.p99);
      expect(Number(await row.locator('[data-field="rps"]').getAttribute('data-value'))).toBeCloseTo(
        apiRow.figures.rps!.median,
        6,
      );
      expect(await row.locator('[data-field="rps"]').textContent()).toContain(formatRps(apiRow.figures.rps!.median));
      expect(await row.locator('[data-field="p50"]').textContent()).toBe(formatMs(apiRow.figures.p50!.median));
      expect(await row.locator('[data-field="p99"]').textContent()).toBe(formatMs(apiRow.figures.p99!.median));
      // A single run's change is shown, not judged.
      if (i > 0)
        expect(await row.locator('td[data-kind="prev"] [data-figure="rps"]').textContent()).toMatch(
          /^QPS ×[\d.]+ · 1 run: no noise estimate$/,
        );
    }
    // What changed words stage 2's QPS change, unjudged (one run each).
    await expect
      .poll(async () => page.getByRole('list', { name: 'What changed' }).textContent(), { timeout: 60_000 })
      .toMatch(/QPS ×[\d.]+ \(1 run: no noise estimate\)/);
    await expect
      .poll(async () => page.getByRole('list', { name: 'What changed' }).textContent(), { timeout: 60_000 })
      .not.toMatch(/computing/);

    // Exports: Markdown to the clipboard, CSV as a download, both equal to the lib's rendering of the API's table.
    await page.getByRole('button', { name: 'Copy Markdown' }).click();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(stageTableMarkdown(api));
    const [csvDownload] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Download CSV' }).click(),
    ]);
    expect(readFileSync((await csvDownload.path())!, 'utf8')).toBe(stageTableCsv(api));

    // Both flamegraphs are drawn, side by side.
    await expect.poll(async () => page.locator('[data-flame-drawn="1"]').count(), { timeout: 30_000 }).toBe(2);
    await shot(page, '02-comparison-flamegraphs');

    // Synchronised search: typing once highlights matches in both graphs ("/" focuses the box).
    await page.locator('body').press('/');
    await page.keyboard.type('runtime');
    await expect
      .poll(
        async () =>
          (
            await page
              .locator('.flame-graph')
              .evaluateAll((gs) => gs.map((g) => Number(g.getAttribute('data-highlighted'))))
          ).every((n) => n > 0),
        { timeout: 10_000 },
      )
      .toBe(true);
    await page.getByLabel('Search').fill('');
    // A flamegraph exports as a standalone SVG: labels become <text>, no HTML inside.
    const [svgDownload] = await Promise.all([
      page.waitForEvent('download'),
      page
        .getByRole('button', { name: /Download flamegraph-.* as SVG/ })
        .first()
        .click(),
    ]);
    const svgText = readFileSync((await svgDownload.path())!, 'utf8');
    expect(svgText.startsWith('<svg')).toBe(true);
    expect(svgText).toContain('<text');
    expect(svgText).not.toContain('foreignObject');

    // Diff tab, then click the top hot path.
    await page.getByRole('tab', { name: 'Diff' }).click();
    const hot = page.getByRole('table', { name: 'Hot-path diff' });
    await hot.waitFor({ timeout: 60_000 });
    // Each profile has its own wrk run: the diff opens per request, and says why.
    await page.getByText(/Mode: per request/).waitFor({ state: 'visible' });
    await page.getByText(/Chosen automatically/).waitFor({ state: 'visible' });
    const firstFn = hot.locator('tbody tr').first().locator('button.fn-name');
    const fnName = (await firstFn.textContent())!;
    await firstFn.click();
    await expect.poll(() => hot.locator('tbody tr').first().getAttribute('aria-selected')).toBe('true');
    await expect.poll(() => page.locator('.focus-row code').textContent()).toBe(fnName);
    expect(new URL(page.url()).searchParams.get('fn')).toBe(fnName);
    expect(new URL(page.url()).searchParams.get('tab')).toBe('diff');
    await page.getByLabel('Diff mode').selectOption('share');
    await page.getByText(/Mode: share/).waitFor({ state: 'visible', timeout: 30_000 });
    await page.locator('[data-flame-drawn="1"]').first().waitFor();
    await shot(page, '03-diff-hot-path');

    // Copy link → the clipboard holds the address; a fresh context shows the same view, read-only.
    await page.getByRole('button', { name: 'Copy link' }).click();
    const link = await page.evaluate(() => navigator.clipboard.readText());
    expect(link).toBe(page.url());
    const ctx2 = await env.browser.newContext({ viewport: { width: 1440, height: 1000 } });
    const page2 = await ctx2.newPage();
    watchPage(page2, problems);
    await page2.goto(link);
    await page2.getByRole('table', { name: 'Hot-path diff' }).waitFor({ timeout: 60_000 });
    await expect.poll(() => page2.getByRole('tab', { name: 'Diff' }).getAttribute('aria-selected')).toBe('true');
    await expect.poll(() => page2.getByLabel('Diff mode').inputValue()).toBe('share');
    await expect.poll(() => page2.locator('.focus-row code').textContent()).toBe(fnName);
    await expect
      .poll(() =>
        page2
          .getByRole('table', { name: 'Hot-path diff' })
          .locator('tr[aria-selected="true"] button.fn-name')
          .textContent(),
      )
      .toBe(fnName);
    expect(await page2.getByLabel('Base stage').inputValue()).toBe(await page.getByLabel('Base stage').inputValue());
    expect(await page2.getByLabel('Target stage').inputValue()).toBe(
      await page.getByLabel('Target stage').inputValue(),
    );
    await expect.poll(() => page2.getByRole('button', { name: 'Edit stages' }).count()).toBe(0);
    await expect.poll(() => page2.getByLabel('Comparison title').count()).toBe(0);
    await page2.getByText('read-only', { exact: false }).waitFor({ state: 'visible' });
    await page2.locator('[data-flame-drawn="1"]').first().waitFor();
    await shot(page2, '04-shared-link-readonly');

    // The other tabs render without errors.
    await page2.getByRole('tab', { name: 'Trajectory' }).click();
    await page2.getByRole('list', { name: /Trajectory/ }).waitFor({ timeout: 30_000 });
    await page2.getByRole('tab', { name: 'Sandwich' }).click();
    await page2
      .getByRole('figure', { name: /Callers of/ })
      .first()
      .waitFor({ timeout: 30_000 });
    await shot(page2, '05-sandwich');
    await page2.getByRole('tab', { name: 'Load tests' }).click();
    await page2.getByRole('img', { name: /Latency by percentile/ }).waitFor({ timeout: 30_000 });
    await shot(page2, '06-load-tests');
    // Esc resets the zoom (and drops the focused function from the address).
    await page2.locator('body').press('Escape');
    await expect.poll(() => new URL(page2.url()).searchParams.get('fn')).toBe(null);
    await page2.getByRole('button', { name: 'Reset zoom' }).waitFor();
    await page2.getByRole('button', { name: 'Dark theme' }).click();
    await page2.getByRole('tab', { name: 'Flamegraphs' }).click();
    await expect.poll(async () => page2.locator('[data-flame-drawn="1"]').count(), { timeout: 30_000 }).toBe(2);
    await shot(page2, '07-dark-flamegraphs');

    await ctx2.close();
    await ctx.close();
    expect(problems).toEqual([]);
  });

  it('renders hostile function names as text and runs no script', async () => {
    const problems: string[] = [];
    const ctx = await env.browser.newContext({ viewport: { width: 1440, height: 1000 } });
    const page = await ctx.newPage();
    watchPage(page, problems);
    await page.addInitScript(() => {
      (window as unknown as { __xss: number }).__xss = 0;
      window.alert = () => {
        (window as unknown as { __xss: number }).__xss++;
      };
    });
    await createComparison(page, env.server.url, 'Hostile <img src=x onerror=alert(1)> names');
    await addStageWithFiles(page, 'normal', '', [`${SAMPLES}/pprof/go_httpserver_before_cpu.pb.gz`]);
    await addStageWithFiles(page, 'hostile <b>x</b>', '<img src=x onerror=alert(2)>', [
      `${SAMPLES}/pprof/hostile/xss_names.pb.gz`,
    ]);
    await addStageWithFiles(page, 'hostile again', '', [`${SAMPLES}/pprof/hostile/xss_names.pb.gz`]);
    await page.getByRole('link', { name: 'Open comparison' }).click();
    await page.getByRole('table', { name: 'Stage table' }).waitFor();
    // The hostile profile's sample types differ from the normal one: compare the two hostile stages.
    const options = await page.getByLabel('Left stage').locator('option').allTextContents();
    expect(options.some((o) => o.includes('hostile <b>x</b>'))).toBe(true);
    await page.getByLabel('Left stage').selectOption({ index: 1 });
    await expect.poll(async () => page.locator('[data-flame-drawn="1"]').count(), { timeout: 30_000 }).toBe(2);
    // Hover a hostile frame, found where the tree's values put it: the tooltip shows the name as text.
    const leftStage = await page.getByLabel('Left stage').inputValue();
    const leftAnswer = await fetch(
      `${env.server.url}/api/comparisons/${new URL(page.url()).pathname.split('/').pop()}/flamegraph?stage=${leftStage}&minFraction=0.0005&maxNodes=20000`,
    ).then(async (r) => (await r.json()) as { tree: DrawnNode; fullNames?: Record<string, string[]> });
    const leftTree = leftAnswer.tree;
    // pprof shortens these C++-looking names (their <…> groups go): the full names the answer lists keep them.
    const fullOf = (n: string): string[] => {
      const f = leftAnswer.fullNames && Object.hasOwn(leftAnswer.fullNames, n) ? leftAnswer.fullNames[n] : undefined;
      return Array.isArray(f) ? f : typeof f === 'string' ? [f] : [];
    };
    const hostile = (n: string) => n.includes('<script>') || fullOf(n).some((f) => f.includes('<script>'));
    const hostilePath = widestPath(leftTree, hostile)!;
    expect(hostilePath).not.toBe(null);
    const leftGraph = page.locator('.flame-graph').first();
    const frame = async () => framePoint(leftGraph, leftTree, hostilePath);
    const at = await frame();
    await page.mouse.move(at.x, at.y);
    await expect.poll(() => page.locator('.flame-tip:visible').textContent()).toContain('<script>alert(1)</script>');
    // Hot paths and sandwich with the hostile names.
    await page.getByRole('tab', { name: 'Diff' }).click();
    const hot = page.getByRole('table', { name: 'Hot-path diff' });
    await hot.waitFor({ timeout: 30_000 });
    // The row shows pprof's short name; its hover (title) gives the name as written, as text.
    const named = await hot
      .locator('button.fn-name')
      .evaluateAll((bs) => bs.map((b) => `${b.textContent ?? ''}\n${b.getAttribute('title') ?? ''}`));
    expect(named.some((t) => t.includes('<script>alert(1)</script>'))).toBe(true);
    await page.locator('[data-flame-drawn="1"]').first().waitFor();
    await shot(page, '08a-hostile-diff');
    await page.getByRole('tab', { name: 'Flamegraphs' }).click();
    await expect.poll(async () => page.locator('[data-flame-drawn="1"]').count(), { timeout: 30_000 }).toBe(2);
    const again = await frame();
    await page.mouse.click(again.x, again.y);
    await page.getByRole('tab', { name: 'Sandwich' }).click();
    await page
      .getByRole('figure', { name: /Callers of/ })
      .first()
      .waitFor({ timeout: 30_000 });
    await shot(page, '08-hostile-names');

    const injected = await page.evaluate(() => ({
      imgs: document.querySelectorAll('img').length,
      scripts: Array.from(document.querySelectorAll('script')).filter((s) => !s.src).length,
      xss: (window as unknown as { __xss: number }).__xss,
    }));
    expect(injected).toEqual({ imgs: 0, scripts: 0, xss: 0 });
    expect(await page.locator('body').textContent()).toContain('<script>alert(1)</script>');
    await ctx.close();
    expect(problems).toEqual([]);
  });
  it('edits stages (rename, key action, reorder, delete), exports a PNG and deletes the comparison', async () => {
    const problems: string[] = [];
    const ctx = await env.browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await ctx.newPage();
    watchPage(page, problems, true);
    await createComparison(page, env.server.url, 'Editing flow');
    const id = new URL(page.url()).searchParams.get('edit')!;
    const p = `${SAMPLES}/pprof`;
    await addStageWithFiles(page, 'one', 'first', [`${p}/go_httpserver_before_cpu.pb.gz`]);
    await addStageWithFiles(page, 'two', 'second', [`${p}/go_httpserver_after_cpu.pb.gz`]);
    await addStageWithFiles(page, 'three', '', []);
    const order = async () =>
      ((await (await fetch(`${env.server.url}/api/comparisons/${id}`)).json()) as Comparison).stages
        .sort((a, b) => a.position - b.position)
        .map((st) => `${st.name}:${st.note}`);
    await expect.poll(order).toEqual(['one:first', 'two:second', 'three:']);

    await page.getByLabel('Name of stage two').fill('two-renamed');
    await page.getByLabel('Name of stage two').press('Enter');
    await expect.poll(order).toEqual(['one:first', 'two-renamed:second', 'three:']);
    await page.getByLabel('Key action of stage three').fill('third <b>note</b>');
    await page.getByLabel('Key action of stage three').press('Enter');
    await expect.poll(order).toEqual(['one:first', 'two-renamed:second', 'three:third <b>note</b>']);
    await page.getByRole('button', { name: 'Move three up' }).click();
    await expect.poll(order).toEqual(['one:first', 'three:third <b>note</b>', 'two-renamed:second']);
    await page.getByRole('button', { name: 'Delete stage three' }).click();
    await expect.poll(order).toEqual(['one:first', 'two-renamed:second']);

    // The comparison page: PNG export of a flamegraph, then delete everything.
    await page.getByRole('link', { name: 'Open comparison' }).click();
    await expect.poll(async () => page.locator('[data-flame-drawn="1"]').count(), { timeout: 30_000 }).toBe(2);
    const [png] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: /Download flamegraph-one as PNG/ }).click(),
    ]);
    const bytes = readFileSync((await png.path())!);
    expect(bytes.subarray(1, 4).toString('latin1')).toBe('PNG');
    expect(bytes.length).toBeGreaterThan(5000);
    await page.getByRole('button', { name: 'Edit stages' }).click();
    await page.getByRole('button', { name: 'Delete comparison' }).click();
    await page.getByRole('heading', { name: 'Tell the story of an optimization' }).waitFor();
    expect((await fetch(`${env.server.url}/api/comparisons/${id}`)).status).toBe(404);
    await ctx.close();
    expect(problems).toEqual([]);
  });
});
