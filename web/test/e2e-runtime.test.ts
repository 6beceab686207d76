// End-to-end: the Runtime tab. Real execution traces of the demo service (fixtures/traces: baseline and
// pooled, several Go releases), its runtime metrics and its fixed-rate vegeta runs, uploaded through the
// API; the page shows the trace figures of both stages side by side with the change engine's verdicts
// (exactly the figures GET …/runtime gives), the goroutines and GC timelines of the traces, the metrics
// series and the QPS of the runs. The traces' derived profiles are offered in the profile picker.
import { existsSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { formatInt, formatNanos, formatValue } from '../../server/src/api/format.ts';
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

describe.skipIf(!available)('the Runtime tab', () => {
  it('trace figures side by side with their verdicts, the timelines of goroutines, GC, metrics and QPS', async () => {
    const post = async <T>(path: string, body: string | FormData, token?: string): Promise<T> => {
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
    };
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
      'pooled (4 traces)',
      'Change',
    ]);
    // Every figure as the API gives it: medians of the traces, unjudged at 2+4 runs.
    for (const f of rt.figures) {
      const row = table.locator(`tr[data-metric="${f.metric}"]`);
      expect(await row.getAttribute('data-status')).toBe('too-few-runs');
      expect(await row.locator('td[data-side="base"]').textContent()).toBe(
        `${formatValue(f.base!.median, f.unit)} (median of 2)`,
      );
      expect(await row.locator('td[data-side="target"]').textContent()).toBe(
        `${formatValue(f.target!.median, f.unit)} (median of 4)`,
      );
      expect(await row.locator('td').nth(2).textContent()).toContain('2+4 runs: too few to test');
    }
    expect(await table.locator('tbody tr').count()).toBe(9);
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
    const picker = page.getByLabel('Profile');
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
});
