// End-to-end for Go benchmark and GC trace artifacts (issue 7): real `go test -bench` outputs and real
// GODEBUG=gctrace=1 logs uploaded through the page; the Benchmarks tab must print what benchstat printed
// for the same files, and the GC figures what the API (and the corpus' reference figures) say.
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { formatBenchRow } from '../../server/src/api/benchstat-format.ts';
import { formatMs } from '../../server/src/api/format.ts';
import type { Benchmarks, Comparison, GcStages } from '../src/lib/api.ts';
import { gcSummaries } from '../src/lib/gc-summary.ts';
import { CHROMIUM, SAMPLES } from './harness.ts';
import { addStageWithFiles, createComparison, e2eEnvironment, shot, watchPage } from './page-helpers.ts';

const GOBENCH = `${SAMPLES}/gobench`;
const available = existsSync(CHROMIUM) && existsSync(`${GOBENCH}/json-encode-before.txt`);

/** benchstat's text rows: unit → name → [base, base ci, target, target ci, delta, "p=… n=…"]. */
function benchstatRows(text: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  let unit = '';
  for (const line of text.split('\n')) {
    const u = /^\s+│\s+(\S+)\s+│\s+(\S+)\s+vs base/.exec(line);
    if (u) unit = u[1]!;
    const r = /^(\S+)\s+(\S+) ±\s+(\S+)\s+(\S+) ±\s+(\S+)\s+(\S+) \((p=\S+ n=\S+)\)/.exec(line);
    if (r) out.set(`${unit} ${r[1]}`, [r[2]!, `± ${r[3]}`, r[4]!, `± ${r[5]}`, r[6]!, r[7]!]);
  }
  return out;
}

const env = e2eEnvironment(available);

describe.skipIf(!available)('benchmarks and GC traces end to end', () => {
  it('shows benchstat figures, GC pauses and the stage table GC columns for uploaded files', async () => {
    const problems: string[] = [];
    const ctx = await env.browser.newContext({ viewport: { width: 1440, height: 1000 } });
    const page = await ctx.newPage();
    watchPage(page, problems);
    await createComparison(page, env.server.url, 'E2E: encoder benchmarks and GC');
    const before = await addStageWithFiles(page, 'before', 'encoding/json', [
      `${GOBENCH}/json-encode-before.txt`,
      `${GOBENCH}/render-before-gctrace.txt`,
    ]);
    const after = await addStageWithFiles(
      page,
      'after',
      'append encoder',
      [`${GOBENCH}/json-encode-after.txt`, `${GOBENCH}/render-after-gctrace.txt`],
      'drop',
    );
    for (const card of [before, after]) await expect.poll(() => card.locator('.upload-done').count()).toBe(2);
    expect(await before.locator('.upload-error').count()).toBe(0);

    await page.getByRole('link', { name: 'Open comparison' }).click();
    const table = page.getByRole('table', { name: 'Stage table' });
    await table.waitFor();
    const id = new URL(page.url()).pathname.split('/').pop()!;
    const api = (await (await fetch(`${env.server.url}/api/comparisons/${id}`)).json()) as Comparison;
    const [b, a] = api.stages.sort((x, y) => x.position - y.position);
    expect(b!.artifacts.map((x) => x.kind).sort()).toEqual(['benchmark', 'gctrace']);

    // Stage table: the GC column group, figures equal to the API's /gc.
    const gc = (await (await fetch(`${env.server.url}/api/comparisons/${id}/gc`)).json()) as GcStages;
    const gcRows = gcSummaries(gc);
    expect(gcRows.map((r) => r.stageId)).toEqual([b!.id, a!.id]);
    await table.getByRole('columnheader', { name: 'GC', exact: true }).waitFor();
    for (const g of gcRows) {
      const cell = table.locator(`tr[data-stage-id="${g.stageId}"] [data-field="gc-p99"]`);
      await expect.poll(() => cell.getAttribute('data-value')).toBe(String(g.stwPauseMs.p99));
      expect(await cell.textContent()).toBe(formatMs(g.stwPauseMs.p99));
    }
    // …and with the corpus' reference figures (read off the printed trace).
    const refBefore = JSON.parse(readFileSync(`${GOBENCH}/expected/render-before.gctrace.json`, 'utf8')) as {
      summary: {
        cycles: number;
        forced_cycles: number;
        stw_pause_ms: { total: number; max: number; p50_nearest_rank: number; p99_nearest_rank: number };
      };
    };
    expect(gcRows[0]).toMatchObject({
      cycles: refBefore.summary.cycles,
      forcedCycles: refBefore.summary.forced_cycles,
      stwPauseMs: {
        p50: refBefore.summary.stw_pause_ms.p50_nearest_rank,
        p99: refBefore.summary.stw_pause_ms.p99_nearest_rank,
        max: refBefore.summary.stw_pause_ms.max,
      },
    });
    expect(gcRows[0]!.stwPauseMs.total).toBeCloseTo(refBefore.summary.stw_pause_ms.total, 6);
    // "What changed" names the pause change of the second stage.
    const p99 = (i: number) => formatMs(gcRows[i]!.stwPauseMs.p99);
    await expect
      .poll(() => page.locator(`.what-changed li[data-stage-id="${a!.id}"] li`).allTextContents(), {
        timeout: 60_000,
      })
      .toContain(`GC STW p99 ${p99(0)} → ${p99(1)}`);
    await shot(page, '20-artifacts-stage-table');

    // Benchmarks tab: every row as benchstat printed it for the same two files, and as the API says.
    await page.getByRole('tab', { name: 'Benchmarks' }).click();
    const secOp = page.getByRole('table', { name: 'Benchmarks: sec/op' });
    await secOp.waitFor({ timeout: 30_000 });
    const diff = (await (
      await fetch(`${env.server.url}/api/comparisons/${id}/benchmarks?base=${b!.id}&target=${a!.id}`)
    ).json()) as Benchmarks;
    const expected = benchstatRows(readFileSync(`${GOBENCH}/expected/json-encode.benchstat.txt`, 'utf8'));
    expect(diff.rows.length).toBe(expected.size);
    for (const r of diff.rows) {
      const tr = page.locator(`table.bench-table[data-unit="${r.unit}"] tr[data-bench="${r.name}"]`);
      const shown = [
        await tr.locator('[data-field="base"]').getAttribute('data-benchstat'),
        await tr.locator('[data-field="base"]').getAttribute('data-ci'),
        await tr.locator('[data-field="target"]').getAttribute('data-benchstat'),
        await tr.locator('[data-field="target"]').getAttribute('data-ci'),
        await tr.locator('[data-field="delta"]').textContent(),
        await tr.locator('[data-field="pn"]').textContent(),
      ];
      expect(shown, `${r.unit} ${r.name}`).toEqual(expected.get(`${r.unit} ${r.name}`));
      const f = formatBenchRow(r);
      expect(await tr.locator('[data-field="base"]').textContent()).toBe(`${f.base.display} ${f.base.ci}`);
    }
    const small = secOp.locator('tr[data-bench="Encode/small-2"]');
    expect(await small.locator('[data-field="base"]').textContent()).toBe('680.5 ns ± 3%');
    expect(await small.locator('[data-field="delta"]').textContent()).toBe('-70.01%');
    expect(await secOp.locator('tr[data-bench="geomean"] [data-field="delta"]').textContent()).toBe('-71.19%');
    // The small line of each benchmark across stages.
    await expect
      .poll(() => secOp.getByRole('img', { name: /Encode\/small-2 sec\/op across stages/ }).count(), {
        timeout: 30_000,
      })
      .toBe(1);
    await shot(page, '21-benchmarks');

    // GC tab: the pause table equals the API, and both charts are drawn.
    await page.getByRole('tab', { name: 'GC' }).click();
    const gcTable = page.getByRole('table', { name: 'GC pauses per stage' });
    await gcTable.waitFor({ timeout: 30_000 });
    for (const g of gcRows) {
      const tr = gcTable.locator(`tr[data-stage-id="${g.stageId}"]`);
      expect(await tr.locator('[data-field="cycles"]').getAttribute('data-value')).toBe(String(g.cycles));
      expect(await tr.locator('[data-field="forced"]').getAttribute('data-value')).toBe(String(g.forcedCycles));
      for (const k of ['p50', 'p99', 'max', 'total'] as const) {
        expect(await tr.locator(`[data-field="${k}"]`).textContent()).toBe(formatMs(g.stwPauseMs[k]));
      }
    }
    await page.getByRole('img', { name: 'STW pause per GC cycle' }).locator('svg').waitFor({ timeout: 30_000 });
    await page
      .getByRole('img', { name: /Heap at GC start/ })
      .locator('svg')
      .waitFor();
    // One line per stage in the pause chart: as many points as cycles.
    const pathCount = await page.getByRole('img', { name: 'STW pause per GC cycle' }).locator('svg path').count();
    expect(pathCount).toBeGreaterThan(2);
    await shot(page, '22-gc');

    // Dark theme keeps the tables and charts readable.
    await page.getByRole('button', { name: 'Dark theme' }).click();
    await page.getByRole('img', { name: 'STW pause per GC cycle' }).locator('svg').waitFor();
    await shot(page, '23-gc-dark');
    await page.getByRole('tab', { name: 'Benchmarks' }).click();
    await secOp.waitFor();
    await shot(page, '24-benchmarks-dark');

    await ctx.close();
    expect(problems).toEqual([]);
  });

  it('says why two stages’ benchmarks are not compared instead of showing an empty table', async () => {
    // Real go test -bench outputs of two packages: their configuration lines differ (pkg:), so benchstat
    // would print separate tables and compare nothing.
    const post = async <T>(path: string, body: BodyInit, token?: string, json = true): Promise<T> => {
      const r = await fetch(`${env.server.url}${path}`, {
        method: 'POST',
        headers: {
          ...(json ? { 'content-type': 'application/json' } : {}),
          ...(token ? { authorization: `Bearer ${token}` } : {}),
        },
        body,
      });
      if (!r.ok) throw new Error(`${path}: ${r.status} ${await r.text()}`);
      return (await r.json()) as T;
    };
    const c = await post<{ id: string; editToken: string }>('/api/comparisons', JSON.stringify({ title: 'unpaired' }));
    for (const [name, file] of [
      ['encoder', 'json-encode-before.txt'],
      ['concat', 'string-concat-after.txt'],
    ] as const) {
      const st = await post<{ id: string }>(`/api/comparisons/${c.id}/stages`, JSON.stringify({ name }), c.editToken);
      const form = new FormData();
      form.append('file', new Blob([readFileSync(`${GOBENCH}/${file}`)]), file);
      await post(`/api/comparisons/${c.id}/stages/${st.id}/artifacts`, form, c.editToken, false);
    }
    const problems: string[] = [];
    const ctx = await env.browser.newContext({ viewport: { width: 1440, height: 900 } });
    const page = await ctx.newPage();
    watchPage(page, problems);
    await page.goto(`${env.server.url}/c/${c.id}?tab=bench`);
    const note = page.locator('[data-benchmarks="unpaired"]');
    await note.waitFor({ timeout: 30_000 });
    expect(await note.textContent()).toMatch(
      /^no benchmark can be compared: the configuration lines differ \(pkg: "benchcorpus\/jsonenc" vs "benchcorpus\/concat"\)/,
    );
    expect(await page.locator('table.bench-table').count()).toBe(0);
    // The stage table's verdict cell says the same in brief.
    const cell = page.locator('.stage-table [data-figure="bench:none"]');
    await cell.waitFor({ timeout: 30_000 });
    expect(await cell.textContent()).toBe('benchmarks not compared');
    expect(await cell.getAttribute('title')).toMatch(/^no benchmark can be compared/);
    await shot(page, '25-benchmarks-unpaired');
    await ctx.close();
    expect(problems).toEqual([]);
  });
});
