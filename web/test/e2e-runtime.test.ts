// End-to-end: the Runtime tab. Real execution traces of the demo service (fixtures/traces: baseline and
// pooled, several Go releases), its runtime metrics and its fixed-rate vegeta runs, uploaded through the
// API; the page shows the trace figures of both stages side by side with the change engine's verdicts
// (exactly the figures GET …/runtime gives), the goroutines and GC timelines of the traces, the metrics
// series and the QPS of the runs. The traces' derived profiles are offered in the profile picker.
import { existsSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { formatInt, formatNanos, formatOffsetSeconds, formatValue } from '../../server/src/api/format.ts';
import type { Reply } from '../src/lib/api.ts';
import { CHROMIUM, REPO } from './harness.ts';
import { e2eEnvironment, shot, watchPage } from './page-helpers.ts';

const F = join(REPO, 'fixtures');
const available = existsSync(CHROMIUM) && existsSync(join(F, 'traces/demo-go1.26-pooled.trace'));
const env = e2eEnvironment(available);

const STAGES: [string, string[]][] = [
  [
    'baseline',
    ['traces/demo-go1.26-baseline.trace', 'traces/demo-go1.22-baseline.trace', 'demo/baseline/fixed-rate/vegeta.jsonl'],
  ],
  [
    'pooled',
    [
      'traces/demo-go1.26-pooled.trace',
      'traces/demo-go1.22-pooled.trace',
      'traces/demo-go1.25-pooled.trace',
      'traces/demo-go1.24-pooled.trace',
      'metrics/demo-prometheus/metrics.json',
      'demo/pooled/fixed-rate/vegeta.jsonl',
    ],
  ],
];

/** One capture of fixtures/runtime-runs: profiles, trace, metrics and vegeta's log over one window. */
const RUN_FILES = ['cpu.pb.gz', 'allocs.pb.gz', 'trace.out', 'metrics.json', 'vegeta.jsonl'];

async function post<T>(path: string, body: string | FormData, token?: string): Promise<T> {
  const r = await fetch(`${env.server.url}${path}`, {
    method: 'POST',
    headers: {
      ...(typeof body === 'string' ? { 'content-type': 'application/json' } : {}),
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    body,
  });
  if (!r.ok) throw new Error(`${path}: ${r.status} ${await r.text()}`);
  return (await r.json()) as T;
}

describe.skipIf(!available)('the Runtime tab', () => {
  it('trace figures side by side with their verdicts, the timelines of goroutines, GC, metrics and QPS', async () => {
    const c = await post<{ id: string; editToken: string }>('/api/comparisons', JSON.stringify({ title: 'runtime' }));
    for (const [name, files] of STAGES) {
      const st = await post<{ id: string }>(`/api/comparisons/${c.id}/stages`, JSON.stringify({ name }), c.editToken);
      const form = new FormData();
      for (const f of files) form.append('file', new Blob([readFileSync(join(F, f))]), basename(f));
      await post(`/api/comparisons/${c.id}/stages/${st.id}/artifacts`, form, c.editToken);
    }
    const rt = (await (
      await fetch(`${env.server.url}/api/comparisons/${c.id}/runtime?base=baseline&target=pooled`)
    ).json()) as Reply<'runtime'>;

    const problems: string[] = [];
    const ctx = await env.browser.newContext({ viewport: { width: 1440, height: 1000 } });
    const page = await ctx.newPage();
    watchPage(page, problems);
    await page.goto(`${env.server.url}/c/${c.id}?tab=runtime`);
    const table = page.getByRole('table', { name: 'Runtime figures of both stages' });
    await table.waitFor({ timeout: 60_000 }).catch(async (e) => {
      await shot(page, 'runtime-tab-failed');
      throw new Error(`${e}\n${problems.join('\n')}`);
    });
    await table.locator('thead th').first().waitFor();
    expect(await table.locator('thead th').allTextContents()).toEqual([
      'Figure',
      'baseline (2 traces)',
      'pooled (4 traces, 1 metrics window)',
      'Change',
    ]);
    // Every figure as the API gives it: the trace rows medians of the traces, unjudged at 2+4 runs; the
    // metrics rows of pooled alone, missing on baseline.
    const cellText = (e: (typeof rt.figures)[number]['base'], unit: string) =>
      e ? `${formatValue(e.median, unit)}${e.n > 1 ? ` (median of ${e.n})` : ''}` : '—';
    for (const f of rt.figures) {
      const row = table.locator(`tr[data-metric="${f.metric}"]`);
      const fromMetrics = ['gc-cpu', 'allocated-bytes', 'sched-latency-p99'].includes(f.metric);
      expect([f.metric, await row.getAttribute('data-status')]).toEqual([
        f.metric,
        fromMetrics ? 'missing' : 'too-few-runs',
      ]);
      expect(await row.locator('td[data-side="base"]').textContent()).toBe(cellText(f.base, f.unit));
      expect(await row.locator('td[data-side="target"]').textContent()).toBe(cellText(f.target, f.unit));
      if (!fromMetrics) expect(await row.locator('td').nth(2).textContent()).toContain('2+4 runs: too few to test');
    }
    // 12 rows of the trace and metrics figures, and 9 of the traced requests (latency P50/P90/P99 and the
    // parts the slowest 1 % spent time in)
    expect(rt.figures.filter((f) => f.metric.startsWith('request-'))).toHaveLength(9);
    expect(await table.locator('tbody tr').count()).toBe(21);
    // The traces carry their own wall clock (Go 1.25+); the metrics and the vegeta runs were recorded at
    // other times than the first traces, and the page says so rather than drawing them as one window.
    const clock = page.getByRole('list', { name: 'Timeline alignment' }).locator('li');
    expect(await clock.allTextContents()).toEqual([
      'baseline: trace at 0 s by its own wall clock (Go 1.25+, to the millisecond); QPS of vegeta.jsonl not aligned: it was not running during this window, drawn from the axis’ zero',
      'pooled: trace at 0 s by its own wall clock (Go 1.25+, to the millisecond); metrics (metrics.json) not aligned: its window is not the trace’s, drawn from the axis’ zero; QPS of vegeta.jsonl not aligned: it was not running during this window, drawn from the axis’ zero',
    ]);
    // Goroutine lifetimes by entry function, from each stage's first trace, as the API gives them.
    const entries = page.getByRole('table', { name: 'Goroutine lifetimes by entry function' });
    // (wrk keeps its connections: the goroutines that end inside the trace are the connections' readers)
    const serve = rt.target.traces[0]!.summary.entryFunctions.functions.find((f) => f.lifetime.count > 0)!;
    expect(serve.name).toBe('net/http.(*connReader).backgroundRead');
    const serveRow = entries
      .locator('tr', { has: page.locator('td:text-is("pooled")') })
      .filter({ has: page.locator(`td:text-is("${serve.name}")`) });
    expect(await serveRow.locator('td').allTextContents()).toEqual([
      'pooled',
      serve.name,
      formatInt(serve.created),
      formatNanos(serve.lifetime.p50Nanos),
      formatNanos(serve.lifetime.p99Nanos),
      formatNanos(serve.lifetime.maxNanos),
    ]);
    const titles = await page.locator('.runtime-panel .chart-box h3').allTextContents();
    expect(titles).toEqual([
      'Throughput per second (QPS)',
      'Goroutines running (solid) and runnable (dashed), execution trace',
      'GC mark phase (share, shaded) and stop-the-world (ms, dotted), execution trace',
      'Goroutines (runtime metrics)',
      'Heap objects (runtime metrics)',
      'GC CPU (runtime metrics, CPU-s per s)',
      'Scheduling latency P99 per second (runtime metrics)',
    ]);
    // Each chart drew: ECharts renders into the box (SVG or canvas).
    await expect
      .poll(() =>
        page
          .locator('.runtime-panel .chart-box')
          .evaluateAll((els) => els.filter((e) => e.querySelector('svg path, canvas')).length),
      )
      .toBe(7);
    await shot(page, 'runtime-tab');

    // The traces' derived profiles are kinds of the profile picker, and their diff opens on them.
    await page.getByRole('tab', { name: 'Diff' }).click();
    const picker = page.getByLabel('Profile').and(page.locator('select'));
    await picker.waitFor();
    expect(await picker.locator('option').allTextContents()).toEqual([
      'network blocking (trace)',
      'sync blocking (trace)',
      'syscall blocking (trace)',
      'scheduler latency (trace)',
    ]);
    await picker.selectOption('trace-sched');
    await expect.poll(() => new URL(page.url()).searchParams.get('kind')).toBe('trace-sched');
    expect(problems).toEqual([]);
    await ctx.close();
  }, 240_000);

  it('a trace, metrics and a timed load of the same window share one wall-clock axis; runtime rows in the diff', async () => {
    const c = await post<{ id: string; editToken: string }>(
      '/api/comparisons',
      JSON.stringify({ title: 'runtime runs' }),
    );
    for (const name of ['baseline', 'pooled']) {
      const st = await post<{ id: string }>(`/api/comparisons/${c.id}/stages`, JSON.stringify({ name }), c.editToken);
      for (const k of [1, 2, 3, 4]) {
        const form = new FormData();
        for (const f of RUN_FILES)
          form.append('file', new Blob([readFileSync(join(F, 'runtime-runs', name, `run-${k}`, f))]), f);
        await post(`/api/comparisons/${c.id}/stages/${st.id}/artifacts`, form, c.editToken);
      }
    }
    const get = async <T>(path: string) => (await (await fetch(`${env.server.url}${path}`)).json()) as T;
    const rt = await get<Reply<'runtime'>>(`/api/comparisons/${c.id}/runtime?base=baseline&target=pooled`);
    const load = await get<Reply<'timeline'>>(`/api/comparisons/${c.id}/timeline`);
    const ch = await get<Reply<'changes'>>(`/api/comparisons/${c.id}/changes?base=baseline&target=pooled`);

    // Where each piece of each stage's first run sits, from the API's wall-clock times.
    const expected = [rt.base, rt.target].map((side) => {
      const t = side.traces[0]!;
      const tWall = Date.parse(t.wallClock.start!);
      const m = side.metrics.find(
        (x) => Date.parse(x.start) <= tWall && tWall <= Date.parse(x.start) + x.times[x.times.length - 1]! * 1000,
      )!;
      const runs = load.stages
        .find((s) => s.stageId === side.stageId)!
        .runs.filter((r) => {
          const w = r.summary.meta.startedAt as number;
          return w - 1000 <= tWall && tWall <= w + (r.timeline!.length + 1) * 1000;
        });
      expect(runs).toHaveLength(1);
      const vWall = runs[0]!.summary.meta.startedAt as number;
      const origin = Math.min(tWall, Date.parse(m.start), vWall);
      // the load started before the window (warm-up), the trace in its middle
      expect(origin).toBe(vWall);
      expect(tWall).toBeGreaterThan(Date.parse(m.start));
      const at = (w: number) => formatOffsetSeconds((w - origin) / 1000);
      return `${side.name}: trace at ${at(tWall)} by its own wall clock (Go 1.25+, to the millisecond); metrics from ${at(Date.parse(m.start))}, at each scrape’s time; QPS of vegeta.jsonl from ${at(vWall)}, at its requests’ own times`;
    });

    const problems: string[] = [];
    for (const width of [1440, 390]) {
      const ctx = await env.browser.newContext({ viewport: { width, height: 1000 } });
      const page = await ctx.newPage();
      watchPage(page, problems);
      await page.goto(`${env.server.url}/c/${c.id}?tab=runtime`);
      const table = page.getByRole('table', { name: 'Runtime figures of both stages' });
      await table.waitFor({ timeout: 60_000 }).catch(async (e) => {
        await shot(page, `runtime-clock-${width}-failed`);
        throw new Error(`${e}\n${problems.join('\n')}`);
      });
      expect(await table.locator('thead th').allTextContents()).toEqual([
        'Figure',
        'baseline (4 traces, 4 metrics windows)',
        'pooled (4 traces, 4 metrics windows)',
        'Change',
      ]);
      expect(
        await table.locator('tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-status'))),
      ).toEqual(rt.figures.map((f) => f.verdict.status));
      const clock = page.getByRole('list', { name: 'Timeline alignment' }).locator('li');
      expect(await clock.allTextContents()).toEqual(expected);
      expect(await clock.evaluateAll((li) => li.map((x) => x.getAttribute('data-exact')))).toEqual(['yes', 'yes']);
      // every chart on the same axis, from the earliest timeline (0) to past the last
      await expect
        .poll(() =>
          page
            .locator('.runtime-panel .chart-box')
            .evaluateAll((els) => els.filter((e) => e.querySelector('svg path, canvas')).length),
        )
        .toBe(7);
      const axis = (await page.locator('.runtime-panel').getAttribute('data-axis'))!.split(',').map(Number);
      expect(axis[0]).toBe(0);
      expect(axis[1]).toBeGreaterThanOrEqual(5);
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBe(width);
      await shot(page, `runtime-clock-${width}`);

      // The diff's figures carry the same runtime rows as GET …/changes.
      await page.getByRole('tab', { name: 'Diff' }).click();
      const rows = page.locator('table.pair-changes tbody.pair-runtime tr[data-metric]');
      await rows.first().waitFor({ timeout: 60_000 });
      expect(
        await rows.evaluateAll((rs) => rs.map((r) => [r.getAttribute('data-metric'), r.getAttribute('data-verdict')])),
      ).toEqual(ch.runtime!.figures.map((f) => [f.metric, f.verdict.status]));
      expect(await page.locator('.pair-crosscheck').textContent()).toMatch(
        /^Allocated bytes per request, runtime metrics ÷ allocs profile: baseline ×[\d.]+, pooled ×[\d.]+/,
      );
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBe(width);
      await shot(page, `runtime-diff-${width}`);
      await ctx.close();
    }
    expect(problems).toEqual([]);
  }, 300_000);
});
