// End-to-end: the seeded demo comparison (/c/demo, fixtures/demo: six wrk runs and six sets of profiles per
// stage) in real Chromium. The stage table shows each stage's median with its interval and run count,
// CPU and allocated bytes per request, and every change against the previous stage carries the verdict
// of the change engine (GET …/stage-table), worded by the shared words: coloured and with its p-value
// when significant, "~" and uncoloured when within the noise. "What changed" is the engine's sentences
// (GET …/changes): the removed work named where it starts, never an ancestor that only looks bigger.
// The page's figures of every pair of stages are the engine's. The API's figures are checked against
// wrk's own text and go tool pprof in the server's tests; here, that the page says the same.
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ciText } from '../../server/src/api/benchstat-format.ts';
import { formatValue } from '../../server/src/api/format.ts';
import { verdictText } from '../../server/src/api/words.ts';
import type { StageChanges, StageTable } from '../src/lib/api.ts';
import { FIGURE_TEXT } from '../src/lib/stage-table-export.ts';
import { CHROMIUM, REPO, type RunningServer, buildWeb, launchBrowser, startServer } from './harness.ts';
import { shot, watchPage } from './page-helpers.ts';

const enabled = existsSync(CHROMIUM) && existsSync(join(REPO, 'fixtures/demo/manifest.json'));

let server: RunningServer;
let browser: Browser;
/** The built bundle's scripts, read before the server starts (it removes the build when it stops). */
let scripts: { name: string; text: string }[] = [];

beforeAll(async () => {
  if (!enabled) return;
  const dist = buildWeb();
  const assets = join(dist, 'assets');
  scripts = readdirSync(assets)
    .filter((f) => f.endsWith('.js'))
    .map((f) => ({ name: f, text: readFileSync(join(assets, f), 'utf8') }));
  server = await startServer(dist, { seedDemo: true });
  browser = await launchBrowser();
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

async function get<T>(path: string): Promise<T> {
  const r = await fetch(`${server.url}${path}`);
  if (!r.ok) throw new Error(`${path}: ${r.status} ${await r.text()}`);
  return (await r.json()) as T;
}

describe.skipIf(!enabled)('the demo comparison in the browser', () => {
  it('ships no server code beyond the contract’s plain modules: no schema library in the bundle', () => {
    expect(scripts.length).toBeGreaterThan(0);
    // TypeBox marks every schema with '~kind'; the contract's types are erased, its schemas never shipped.
    expect(scripts.filter((s) => /~kind|typebox|fastify/i.test(s.text)).map((s) => s.name)).toEqual([]);
    // …while the shared formatter and words are there (the page prints through them).
    expect(scripts.some((s) => s.text.includes('too few to test'))).toBe(true);
  });

  it('reads every stage-to-stage change with its verdict, CPU per request, and what changed, at 1440 and 390 px', async () => {
    const table = await get<StageTable>('/api/comparisons/demo/stage-table');
    const rows = table.rows;
    expect(rows.map((r) => r.name)).toEqual(['baseline', 'fast-json', 'pooled', 'async-log']);
    expect(rows.every((r) => r.summary === 'median' && r.figures.rps?.ci !== null)).toBe(true);
    expect(rows.every((r) => r.figures.cpuPerRequest?.n === 6)).toBe(true);
    // The demo tells both kinds of change: at least one significant, and at least one within the noise.
    const verdicts = rows.flatMap((r) => (r.vsPrevious ? [r.vsPrevious.rps] : []));
    expect(verdicts.some((v) => v.status === 'significant')).toBe(true);
    expect(verdicts.some((v) => v.status === 'no-change')).toBe(true);
    const sentences = new Map<string, string[]>();
    for (const [i, r] of rows.entries())
      if (i > 0)
        sentences.set(
          r.name,
          (await get<StageChanges>(`/api/comparisons/demo/changes?base=${rows[i - 1]!.stageId}&target=${r.stageId}`))
            .sentences,
        );

    for (const width of [1440, 390]) {
      const problems: string[] = [];
      const ctx = await browser.newContext({ viewport: { width, height: 1000 } });
      const page = await ctx.newPage();
      watchPage(page, problems);
      // Loading the page starts no diff: the summary is the change engine's.
      const diffRequests: string[] = [];
      page.on('request', (r) => {
        if (/\/api\/comparisons\/[^/]+\/diff\?/.test(r.url())) diffRequests.push(r.url());
      });
      await page.goto(`${server.url}/c/demo`);
      const tableEl = page.getByRole('table', { name: 'Stage table' });
      await tableEl.waitFor({ timeout: 60_000 });
      for (const row of rows) {
        const tr = tableEl.locator(`tr:has(th:text-is("${row.name}"))`);
        // The median, benchstat's ± and the run count.
        const rps = row.figures.rps!;
        expect(await tr.locator('td[data-field="rps"]').textContent()).toBe(
          `${formatValue(rps.median, 'req/s')}${ciText(rps.ci)} · ${rps.n} runs`,
        );
        // CPU per request: the median over the stage's six CPU profiles, with its interval.
        const cpu = row.figures.cpuPerRequest!;
        expect(await tr.locator('td[data-field="cpuPerRequest"]').textContent()).toBe(
          `${formatValue(cpu.median, 'nanoseconds/request')}${ciText(cpu.ci)} · ${cpu.n} profiles`,
        );
        const v = row.vsPrevious;
        if (!v) continue;
        for (const figure of ['rps', 'p99', 'cpuPerRequest'] as const) {
          const cell = tr.locator(`td[data-kind="prev"] [data-figure="${figure}"]`);
          const t = verdictText(v[figure], FIGURE_TEXT[figure].style);
          expect(await cell.textContent()).toBe(`${FIGURE_TEXT[figure].label} ${t.text}`);
          const cls = (await cell.getAttribute('class')) ?? '';
          if (v[figure].status === 'significant') {
            // QPS as a ratio (×1.98, p=0.002), latency and CPU per request as a percentage (−41 %).
            expect(t.text).toMatch(/^[×+−]/);
            expect(cls).toMatch(/good|bad/);
          } else {
            expect(t.text).toMatch(/^~ \(p=[01]\.\d{3}, n=6\+6\)$/);
            expect(cls).not.toMatch(/good|bad/);
          }
        }
      }
      // The CPU per request column is there (on a phone: in the vs-previous verdicts).
      if (width === 1440) await tableEl.getByRole('columnheader', { name: 'CPU/req' }).waitFor();
      expect(
        await tableEl.locator('tr:has(th:text-is("pooled")) [data-figure="cpuPerRequest"]').first().textContent(),
      ).toBe('CPU/req −59 % (p=0.002, n=6+6)');

      // What changed: the engine's sentences, one line each; the removed work named at its root.
      const wc = page.getByRole('list', { name: 'What changed' });
      await expect.poll(() => wc.textContent(), { timeout: 120_000 }).not.toContain('computing');
      const lines = (name: string) =>
        wc.locator(`li[data-stage-id="${rows.find((r) => r.name === name)!.stageId}"] li`);
      for (const [name, expected] of sentences) expect(await lines(name).allTextContents()).toEqual(expected);
      const first = async (name: string) => (await lines(name).allTextContents())[0];
      // A function's p is adjusted over the functions its diff tested (Benjamini–Hochberg q ≤ 0.05).
      expect(await first('fast-json')).toMatch(
        /^Removed encoding\/json\.\(\*Encoder\)\.Encode: .* → 0 \(p=0\.002, q=0\.0\d\d, n=6\+6\)$/,
      );
      expect(await first('pooled')).toMatch(
        /^Removed net\/http\.\(\*Transport\)\.dialConnFor: .* → 0 \(p=0\.002, q=0\.0\d\d, n=6\+6\)$/,
      );
      // The logger's removal (p=0.002 over 6+6 runs) does not pass q ≤ 0.05 among the functions tested: not worded.
      expect((await lines('async-log').allTextContents()).join('\n')).not.toContain('syncLogger');
      // No line promotes the request path's ancestors, whose share grew only because work vanished: one
      // is named at most for a change of its own, worded apart from the whole call's figures. (The tracing
      // middleware's closure keeps one name in every version, main.traceRequests.func1, so no request path
      // reads as removed in one version and added in the next.)
      const all = await wc.locator('li li').allTextContents();
      expect(all.length).toBeGreaterThan(12);
      expect(
        all.filter(
          (l) => /ServeHTTP|\(\*conn\)\.serve/.test(l) && !/ in its own code and small callees \(whole call /.test(l),
        ),
      ).toEqual([]);
      // Only significant changes are worded as changes: async-log's QPS is within the noise.
      expect(await lines('async-log').allTextContents()).toContain('QPS ~ within the noise (p=0.180, n=6+6)');
      // The first stage: its own figures.
      expect(await wc.locator(`li[data-stage-id="${rows[0]!.stageId}"]`).textContent()).toContain(
        `QPS ${formatValue(rows[0]!.figures.rps!.median, 'req/s')}`,
      );
      expect(diffRequests).toEqual([]);

      // The code change: pooled's commit edited serveOrders; net/http's dialing, code it did not touch, is gone.
      const pooledId = rows.find((r) => r.name === 'pooled')!.stageId;
      const cc = page.getByRole('region', { name: 'The code change' }).locator(`details[data-stage-id="${pooledId}"]`);
      await cc.locator('summary').click();
      expect(await cc.locator('tr[data-fn="main.(*service).serveOrders"]').getAttribute('data-code')).toBe('edited');
      const dial = cc.locator('tr[data-fn="net/http.(*Transport).dialConnFor"]');
      expect(await dial.getAttribute('data-code')).toBe('outside');
      expect(await dial.getAttribute('data-verdict')).toBe('significant');

      // How the stages were captured: per stage, its wrk runs as one capture of numbered runs, and
      // the fixed-rate vegeta capture.
      // (Opening it renders its records: wait for each section before counting in it.)
      await page.getByText('How the stages were captured').click();
      for (const row of rows) {
        const section = page.getByRole('region', { name: `Capture of ${row.name}` });
        await section.waitFor();
        expect(await section.locator('.capture').count()).toBe(2);
        const wrkRuns = await section.locator('.capture').first().locator('.capture-runs li').allTextContents();
        expect(wrkRuns.map((t) => t.split(' · ')[0])).toEqual(
          Array.from({ length: row.figures.rps!.n }, (_, k) => `run ${k + 1}`),
        );
        expect(await section.locator('.capture').first().textContent()).toContain(
          `and ${row.figures.rps!.n - 1} more captures of the same load, one per run`,
        );
      }
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(width);
      const wrap = await page.evaluate(() => {
        const w = document.querySelector('.stage-table-wrap') as HTMLElement;
        return w.scrollWidth - w.clientWidth;
      });
      expect(wrap).toBeLessThanOrEqual(0);
      await page.getByRole('region', { name: 'Capture of baseline' }).screenshot({
        path: join(REPO, 'test-artifacts', `demo-capture-${width}.png`),
      });
      await page
        .locator('section[aria-labelledby="stages-h"]')
        .screenshot({ path: join(REPO, 'test-artifacts', `demo-stages-${width}.png`) });
      await shot(page, `demo-${width}`);
      await ctx.close();
      expect(problems).toEqual([]);
    }
  }, 300_000);

  it('shows, for every pair of stages, the verdict, p and n of QPS, P50, P99 and CPU per request that GET …/changes gives', async () => {
    const table = await get<StageTable>('/api/comparisons/demo/stage-table');
    const ids = table.rows.map((r) => r.stageId);
    const problems: string[] = [];
    const ctx = await browser.newContext({ viewport: { width: 1440, height: 1000 } });
    const page = await ctx.newPage();
    watchPage(page, problems);
    const metrics = ['rps', 'p50', 'p99', 'cpu-per-request'];
    let pairs = 0;
    for (let i = 0; i < ids.length; i++)
      for (let j = i + 1; j < ids.length; j++) {
        const api = await get<StageChanges>(`/api/comparisons/demo/changes?base=${ids[i]}&target=${ids[j]}`);
        await page.goto(`${server.url}/c/demo?tab=diff&base=${ids[i]}&target=${ids[j]}`);
        const figures = page.getByRole('table', { name: `Figures: ${api.base.name} → ${api.target.name}` });
        await figures.waitFor({ timeout: 60_000 });
        for (const metric of metrics) {
          const c = api.figures.find((f) => f.metric === metric)!;
          const tr = figures.locator(`tr[data-metric="${metric}"]`);
          const shown = {
            verdict: await tr.getAttribute('data-verdict'),
            p: await tr.getAttribute('data-p'),
            n: await tr.getAttribute('data-n'),
            text: await tr.locator('td.verdict').textContent(),
          };
          expect(shown, `${api.base.name} → ${api.target.name} ${metric}`).toEqual({
            verdict: c.verdict.status,
            p: c.verdict.p === null ? '' : String(c.verdict.p),
            n: `n=${c.verdict.nBase}+${c.verdict.nTarget}`,
            text: verdictText(c.verdict, metric === 'rps' ? 'ratio' : 'percent').text,
          });
        }
        // Adjacent stages: the stage table says the same.
        if (j === i + 1) {
          await page.getByRole('table', { name: 'Stage table' }).waitFor();
          const row = page.locator(`.stage-table tr[data-stage-id="${ids[j]}"] td[data-kind="prev"]`);
          for (const [metric, key] of [
            ['rps', 'rps'],
            ['p99', 'p99'],
            ['cpu-per-request', 'cpuPerRequest'],
          ] as const) {
            const c = api.figures.find((f) => f.metric === metric)!;
            const line = row.locator(`[data-figure="${key}"]`);
            expect(await line.getAttribute('data-verdict')).toBe(c.verdict.status);
            expect(await line.getAttribute('data-p')).toBe(String(c.verdict.p));
            expect(await line.getAttribute('data-n')).toBe(`n=${c.verdict.nBase}+${c.verdict.nTarget}`);
          }
        }
        pairs++;
      }
    expect(pairs).toBe(6);
    // The diff opens per request on the demo: every profile has its own wrk run.
    await expect.poll(() => page.locator('.legend-mode').getAttribute('data-mode')).toBe('per-request');
    expect(await page.locator('.legend-mode').textContent()).toContain(
      'Chosen automatically: every profile of both stages has its own load run',
    );
    await page.locator('[data-flame-drawn="1"]').first().waitFor({ timeout: 60_000 });
    await shot(page, 'demo-diff-pair');
    await ctx.close();
    expect(problems).toEqual([]);
  }, 300_000);

  it('offers the profile kinds apart: allocations over a window per request, heap snapshots with the since-start warning', async () => {
    const problems: string[] = [];
    const ctx = await browser.newContext({ viewport: { width: 1440, height: 1000 } });
    const page = await ctx.newPage();
    watchPage(page, problems);
    const sent: string[] = [];
    page.on('request', (r) => {
      if (/\/api\/comparisons\/demo\/(diff|flamegraph)\?/.test(r.url())) sent.push(r.url());
    });
    await page.goto(`${server.url}/c/demo?tab=diff`);
    const kind = page.getByRole('combobox', { name: /^Profile/ });
    await kind.waitFor({ timeout: 60_000 });
    // The profiles recorded, and those each stage's execution traces give (go tool trace -pprof=…).
    expect(await kind.locator('option').allTextContents()).toEqual([
      'CPU',
      'network blocking (trace)',
      'sync blocking (trace)',
      'syscall blocking (trace)',
      'scheduler latency (trace)',
      'allocations (window)',
      'mutex',
      'block',
      'heap (snapshot)',
      'goroutines',
    ]);
    // Allocations over a window: per request works, no since-start warning.
    await kind.selectOption({ label: 'allocations (window)' });
    await expect
      .poll(() => page.locator('.legend-mode').getAttribute('data-mode'), { timeout: 60_000 })
      .toBe('per-request');
    expect(new URL(page.url()).searchParams.get('kind')).toBe('allocs');
    expect(sent.some((u) => new URL(u).searchParams.get('kind') === 'allocs')).toBe(true);
    expect(await page.getByLabel('Sample type').locator('option').allTextContents()).toEqual([
      'default (alloc_space)',
      'alloc_objects (count)',
      'alloc_space (bytes)',
      'inuse_objects (count)',
      'inuse_space (bytes)',
    ]);
    await page.getByLabel('Sample type').selectOption('alloc_space');
    await page.locator('.legend-mode').waitFor();
    expect(await page.locator('[data-since-start]').count()).toBe(0);
    // A heap snapshot's alloc_space counts since the process started: the warning says so.
    await kind.selectOption({ label: 'heap (snapshot)' });
    await page.getByLabel('Sample type').selectOption('alloc_space');
    await page.locator('[data-since-start="alloc_space"]').waitFor({ timeout: 30_000 });
    await page.getByLabel('Sample type').selectOption('inuse_space');
    await expect.poll(() => page.locator('[data-since-start]').count()).toBe(0);
    // A link of before kinds (a sample type alone) still opens: the kind holding it is chosen.
    await page.goto(`${server.url}/c/demo?sampleType=alloc_space`);
    await expect
      .poll(() => page.getByLabel('Profile').and(page.locator('select')).inputValue(), { timeout: 60_000 })
      .toBe('allocs');
    await expect.poll(() => page.locator('[data-flame-drawn="1"]').count(), { timeout: 60_000 }).toBe(2);
    expect(await page.locator('.flame-panel .panel-head').first().textContent()).toContain(
      'allocations (window) · alloc_space',
    );
    await ctx.close();
    expect(problems).toEqual([]);
  }, 300_000);
});
