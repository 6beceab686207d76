/// <reference types="node" />
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { StageTable } from './api.ts';
import {
  changeText,
  figureSpread,
  figureValue,
  presentLatencyColumns,
  presentPerRequestColumns,
  stageTableCsv,
  stageTableMarkdown,
  verdictLatency,
} from './stage-table-export.ts';

const table = (name: string) =>
  JSON.parse(readFileSync(new URL(`./testdata/${name}.stage-table.json`, import.meta.url), 'utf8')) as StageTable;
const demo = table('demo');
const single = table('single-run');

describe('stage table export, one run per stage', () => {
  it('renders Markdown with escaped pipes and formatted units; a change of one run is shown, not judged', () => {
    const md = stageTableMarkdown(single).trim().split('\n');
    expect(md).toHaveLength(4);
    expect(md[0]).toBe(
      '| Stage | Key action | QPS | P50 | P95 | P99 | Errors | CPU/req | QPS vs prev | P99 vs prev | CPU/req vs prev | QPS vs baseline | P99 vs baseline | CPU/req vs baseline |',
    );
    // wrk's own figures for the baseline's run of an earlier one-run demo capture (7610.50 req/s, 50% 3.99ms, 99% 10.81ms).
    expect(md[2]).toBe(
      '| baseline | encoding/json \\| reflection | 7,611 req/s | 3.99 ms | — | 10.8 ms | 0 | 218 µs/req | — | — | — | — | — | — |',
    );
    expect(md[3]).toContain('| ×0.92 · 1 run: no noise estimate |');
    expect(md[3]).toContain('| +5.4 % · 1 run: no noise estimate |');
  });
  it('renders CSV with raw numbers, neutralised formulas, and the per-request figures after the load test', () => {
    const csv = stageTableCsv(single).trim().split('\n');
    const head = csv[0]!.split(',');
    expect(head.slice(0, 8)).toEqual([
      'stage',
      'key_action',
      'rps',
      'requests',
      'errors',
      'p50_ms',
      'p95_ms',
      'p99_ms',
    ]);
    expect(head).toHaveLength(8 + 8 + 1 + 8 + 16 + 2 * 10);
    expect(csv[1]!.startsWith('baseline,encoding/json | reflection,7610.5,61058,0,3.99,,10.81,,,,,,,,,1,')).toBe(true);
    expect(csv[2]!.startsWith("fast-json,'=cmd(),7021,")).toBe(true);
    const row = csv[2]!.split(',');
    expect(row[head.indexOf('rps_vs_previous_verdict')]).toBe('single-run');
    expect(row[head.indexOf('rps_vs_previous_p')]).toBe('');
    expect(Number(row[head.indexOf('cpu_ns_per_request')])).toBe(single.rows[1]!.figures.cpuPerRequest!.median);
    expect(row[head.indexOf('cpu_ns_per_request_vs_previous_verdict')]).toBe('single-run');
  });
});

describe('stage table export, six runs per stage (the demo)', () => {
  it('Markdown: medians with their ±, each change with p and n, ~ inside the noise, and a note', () => {
    const md = stageTableMarkdown(demo).trim().split('\n');
    expect(md[0]).toContain('| CPU/req | Alloc/req | QPS vs prev | P99 vs prev | CPU/req vs prev |');
    expect(md[2]).toMatch(
      /^\| baseline \| .* \| 4,482 req\/s ± 15% \(n=6\) \| 6.82 ms ± 18% \(n=6\) \| — \| 18.3 ms ± 27% \(n=6\) \| 0 \| 396 µs\/req ± 17% \(n=6\) \| 31.5 KiB\/req ± 5% \(n=6\) \| — \|/,
    );
    // pooled: the demo README's figures (QPS ×1.98, p=0.002, n=6+6).
    expect(md[4]).toContain('| ×1.98 (p=0.002, n=6+6) | −41 % (p=0.002, n=6+6) | −52 % (p=0.002, n=6+6) |');
    // async-log: within the noise.
    expect(md[5]).toContain('| ~ (p=1.000, n=6+6) | ~ (p=0.818, n=6+6) | ~ (p=0.818, n=6+6) |');
    expect(md[7]).toMatch(/^Figures of stages with several runs are medians ± benchstat's 95 % confidence interval/);
  });
  it('CSV: runs, interval bounds, p and verdict per change', () => {
    const [head, , , pooled] = stageTableCsv(demo)
      .trim()
      .split('\n')
      .map((l) => l.split(','));
    const col = (name: string) => head!.indexOf(name);
    const row = demo.rows[2]!;
    expect(pooled![col('runs')]).toBe('6');
    expect(Number(pooled![col('rps_ci_lo')])).toBe(row.figures.rps!.lo);
    expect(Number(pooled![col('rps_ci_hi')])).toBe(row.figures.rps!.hi);
    expect(Number(pooled![col('rps_vs_previous_p')])).toBe(row.vsPrevious!.rps.p);
    expect(pooled![col('rps_vs_previous_verdict')]).toBe('significant');
    expect(pooled![col('p95_vs_previous_verdict')]).toBe('missing');
    expect(pooled![col('cpu_ns_per_request_profiles')]).toBe('6');
    expect(pooled![col('alloc_bytes_per_request_vs_baseline_verdict')]).toBe('significant');
  });
  it('words figures and changes as the page does', () => {
    const pooled = demo.rows[2]!;
    expect(figureValue(pooled.figures.rps, 'rps')).toBe('10,783 req/s');
    expect(figureSpread(pooled.figures.rps)).toBe('± 21%');
    expect(figureValue(pooled.figures.cpuPerRequest, 'cpuPerRequest')).toBe('155 µs/req');
    expect(changeText(pooled, 'vsPrevious', 'allocPerRequest')).toBe('−74 % (p=0.002, n=6+6)');
    expect(figureSpread(single.rows[0]!.figures.rps)).toBe('');
  });
});

describe('stage table columns', () => {
  it('leaves out latency and per-request columns no stage has', () => {
    expect(presentLatencyColumns(demo.rows)).toEqual(['p50', 'p99']);
    expect(verdictLatency(presentLatencyColumns(demo.rows))).toBe('p99');
    expect(presentPerRequestColumns(demo.rows)).toEqual(['cpuPerRequest', 'allocPerRequest']);
    expect(presentPerRequestColumns(single.rows)).toEqual(['cpuPerRequest']);
    expect(presentLatencyColumns([])).toEqual([]);
    expect(verdictLatency([])).toBe(null);
  });
});
