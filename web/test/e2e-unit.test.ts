// End-to-end: one unit on every tab. The demo's Flamegraphs and Sandwich tabs read per request (µs/req in
// every label) as its Diff does, and the page's one mode control turns them to absolute. And the demo's six
// baseline runs uploaded through the file picker without their capture records (cpu-1…6.pb.gz,
// wrk-1…6.txt, sent in parallel) pair each profile with its own run by name: each profile's run, divisor
// and CPU per request, shown in the stage's details, are the seeded demo's (its capture records' figures for
// runs 5 and 6).
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { formatValue } from '../../server/src/api/format.ts';
import { flatCum, percentageBase } from '../../server/src/analysis/flat-cum.ts';
import { parsePprof } from '../../server/src/ingest/pprof/index.ts';
import type { StageTable } from '../src/lib/api.ts';
import { CHROMIUM, REPO } from './harness.ts';
import { addStageWithFiles, createComparison, e2eEnvironment, shot, watchPage } from './page-helpers.ts';

const DEMO = join(REPO, 'fixtures/demo');
const enabled = existsSync(CHROMIUM) && existsSync(join(DEMO, 'manifest.json'));
const env = e2eEnvironment(enabled, { seedDemo: true });
const SERVE = 'main.(*service).serveOrders';

const folder = mkdtempSync(join(tmpdir(), 'stagediff-picker-'));
afterAll(() => rmSync(folder, { recursive: true, force: true }));

async function get<T>(path: string): Promise<T> {
  const r = await fetch(`${env.server.url}${path}`);
  if (!r.ok) throw new Error(`${path}: ${r.status} ${await r.text()}`);
  return (await r.json()) as T;
}

/** CPU nanoseconds per request of demo baseline run k, from its files: the profile's total over wrk's rate × its window. */
function ownPerRequest(k: number): number {
  const p = parsePprof(readFileSync(join(DEMO, `baseline/run-${k}/cpu.pb.gz`)));
  const rps = Number(
    /Requests\/sec:\s+([\d.]+)/.exec(readFileSync(join(DEMO, `baseline/run-${k}/wrk.txt`), 'utf8'))![1],
  );
  return (
    percentageBase(
      p,
      p.sampleTypes.findIndex((t) => t.type === 'cpu'),
    ) /
    (rps * (p.durationNanos / 1e9))
  );
}

/** The CPU per request a demo baseline run's capture record states (µs, one decimal). */
function recordedMicrosPerRequest(k: number): string {
  const rec = JSON.parse(readFileSync(join(REPO, 'fixtures', 'demo', 'baseline', `run-${k}`, 'capture.json'), 'utf8'));
  return (rec.runs[0].summary.cpuMicrosPerRequest as number).toFixed(1);
}

describe.skipIf(!enabled)('one unit on every tab', () => {
  it('the demo’s Flamegraphs and Sandwich tabs read per request; the one mode control turns them absolute', async () => {
    const table = await get<StageTable>('/api/comparisons/demo/stage-table');
    const ids = new Map(table.rows.map((r) => [r.name, r.stageId]));
    const base = ids.get('baseline')!;
    const target = ids.get('fast-json')!;
    const problems: string[] = [];
    const page = await env.browser.newPage({ viewport: { width: 1440, height: 1000 } });
    watchPage(page, problems);
    await page.goto(`${env.server.url}/c/demo?tab=flame&base=${base}&target=${target}&kind=cpu`);
    const totals = page.locator('.flame-panel .view-total');
    await expect.poll(() => totals.count(), { timeout: 60_000 }).toBe(2);
    for (const t of await totals.all()) {
      expect(await t.textContent()).toMatch(/^[\d.,]+ [mµn]?s\/req$/);
      expect(await t.getAttribute('data-unit')).toBe('nanoseconds/request');
    }
    expect(await page.locator('.flame-panel .unit-note[data-unit-mode="per-request"]').count()).toBe(2);
    // The page's figure is the stage's merged total over its runs' requests, as the files give it.
    const f = await get<{ total: number }>(`/api/comparisons/demo/flamegraph?stage=${base}&kind=cpu`);
    expect(await totals.first().textContent()).toBe(formatValue(f.total, 'nanoseconds/request'));
    await shot(page, 'unit-01-flamegraphs-per-request');

    // The same control the Diff reads: absolute is the profile as recorded, in seconds.
    await page.getByRole('combobox', { name: 'Unit', exact: true }).selectOption('absolute');
    await expect.poll(() => totals.first().getAttribute('data-unit'), { timeout: 60_000 }).toBe('nanoseconds');
    expect(await totals.first().textContent()).not.toMatch(/\/req/);
    await page.getByRole('combobox', { name: 'Unit', exact: true }).selectOption('auto');

    // The sandwich of the function serving the orders: flat and cum per request on both sides.
    await page.goto(
      `${env.server.url}/c/demo?tab=sandwich&base=${base}&target=${target}&kind=cpu&fn=${encodeURIComponent(SERVE)}`,
    );
    const figures = page.locator('.sandwich .sandwich-figures');
    await expect.poll(() => figures.count(), { timeout: 60_000 }).toBe(2);
    for (const s of await figures.all()) {
      expect(await s.getAttribute('data-unit')).toBe('nanoseconds/request');
      expect((await s.textContent())?.match(/[mµn]?s\/req/g)).toHaveLength(2);
    }
    expect(await page.locator('.sandwich .unit-note[data-unit-mode="per-request"]').count()).toBe(2);
    const sw = await get<{ cum: number; perRequest: { requests: number } }>(
      `/api/comparisons/demo/sandwich?stage=${base}&kind=cpu&fn=${encodeURIComponent(SERVE)}`,
    );
    // Its cum per request, counted here from the six files and wrk's printed rates.
    const runs = [1, 2, 3, 4, 5, 6].map((k) => {
      const p = parsePprof(readFileSync(join(DEMO, `baseline/run-${k}/cpu.pb.gz`)));
      const idx = p.sampleTypes.findIndex((t) => t.type === 'cpu');
      const rps = Number(
        /Requests\/sec:\s+([\d.]+)/.exec(readFileSync(join(DEMO, `baseline/run-${k}/wrk.txt`), 'utf8'))![1],
      );
      return { cum: flatCum(p, idx).find((r) => r.name === SERVE)?.cum ?? 0, requests: rps * (p.durationNanos / 1e9) };
    });
    const expected = runs.reduce((a, r) => a + r.cum, 0) / runs.reduce((a, r) => a + r.requests, 0);
    expect(sw.cum / expected).toBeCloseTo(1, 9);
    expect(await figures.first().textContent()).toContain(`cum ${formatValue(sw.cum, 'nanoseconds/request')}`);
    await shot(page, 'unit-02-sandwich-per-request');

    // The Trajectory: each stage's cost per request, its spread across the stage's profiles per request too.
    await page.goto(`${env.server.url}/c/demo?tab=trends&kind=cpu`);
    const note = page.locator('.trajectory-unit');
    await note.waitFor({ timeout: 60_000 });
    expect(await note.getAttribute('data-unit-mode')).toBe('per-request');
    expect(await note.textContent()).toMatch(/cost per request .*\([mµn]?s\/req\)/);
    const values = page.locator('.traj-values').first();
    expect((await values.textContent())?.match(/[mµn]?s\/req/g)?.length).toBeGreaterThanOrEqual(4);
    expect(await page.locator('line.traj-whisker').count()).toBeGreaterThan(0);
    expect(problems).toEqual([]);
    await page.close();
  }, 180_000);

  it('the demo’s baseline runs through the file picker, without capture records, divide as the seeded demo', async () => {
    const files: string[] = [];
    for (const k of [1, 2, 3, 4, 5, 6]) {
      for (const [from, to] of [
        ['cpu.pb.gz', `cpu-${k}.pb.gz`],
        ['wrk.txt', `wrk-${k}.txt`],
      ] as const) {
        copyFileSync(join(DEMO, `baseline/run-${k}/${from}`), join(folder, to));
        files.push(join(folder, to));
      }
    }
    const problems: string[] = [];
    const page = await env.browser.newPage({ viewport: { width: 1440, height: 1000 } });
    watchPage(page, problems);
    await createComparison(page, env.server.url, 'Picked runs');
    const id = new URL(page.url()).searchParams.get('edit')!;
    // All twelve files at once through the picker: the page sends them in parallel, in no fixed order.
    await addStageWithFiles(page, 'baseline', 'six runs from the picker', files);
    const tree = await get<{ stages: { artifacts: { filename: string }[] }[] }>(`/api/comparisons/${id}`);
    expect(tree.stages[0]!.artifacts.map((a) => a.filename).sort()).toEqual(
      files.map((f) => f.slice(folder.length + 1)).sort(),
    );
    await page.goto(`${env.server.url}/c/${id}?tab=flame&kind=cpu`);
    const divisors = page.locator('.flame-panel').first().locator('details.unit-divisors');
    await divisors.waitFor({ timeout: 60_000 });
    await divisors.locator('summary').click();
    const items = divisors.locator('li');
    await expect.poll(() => items.count()).toBe(6);
    for (const k of [1, 2, 3, 4, 5, 6]) {
      const li = divisors.locator(`li[data-profile="cpu-${k}.pb.gz"]`);
      // Paired with its own run, by the names.
      expect(await li.getAttribute('data-run')).toBe(`wrk-${k}.txt`);
      expect(await li.getAttribute('data-method')).toBe('paired-run');
      const v = Number(await li.getAttribute('data-per-request'));
      expect(v / ownPerRequest(k)).toBeCloseTo(1, 9);
      const text = (await li.textContent()) ?? '';
      expect(text).toContain(`÷ wrk-${k}.txt`);
      expect(text).toContain(formatValue(v, 'nanoseconds/request'));
    }
    // The seeded demo's figures (its capture records) for runs 5 and 6.
    const us = async (k: number) =>
      (
        Number(await divisors.locator(`li[data-profile="cpu-${k}.pb.gz"]`).getAttribute('data-per-request')) / 1000
      ).toFixed(1);
    expect(await us(5)).toBe(recordedMicrosPerRequest(5));
    expect(await us(6)).toBe(recordedMicrosPerRequest(6));
    await shot(page, 'unit-03-picker-divisors');
    expect(problems).toEqual([]);
    await page.close();
  }, 240_000);
});
