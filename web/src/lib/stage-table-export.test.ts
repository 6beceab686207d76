import { describe, expect, it } from 'vitest';
import type { StageRow } from './api-types.ts';
import { presentLatencyColumns, stageTableCsv, stageTableMarkdown } from './stage-table-export.ts';

/** The bookkeeping fields of a stage whose figures come from one wrk run. */
const single = (id: string) => ({
  loadTests: 1,
  aggregated: false,
  source: { format: 'wrk', artifactIds: [id], otherRuns: 0, headline: true },
});

const rows: StageRow[] = [
  {
    stageId: 'a',
    name: 'baseline',
    note: 'encoding/json | reflection',
    rps: 8589.52,
    requests: 43389,
    errors: 0,
    latencyMs: { p50: 3.19, p95: null, p99: 34.32 },
    vsPrevious: null,
    vsBaseline: null,
    ...single('a'),
  },
  {
    stageId: 'b',
    name: 'fast-json',
    note: '=cmd()',
    rps: 90190,
    requests: 455000,
    errors: 2,
    latencyMs: { p50: 0.3, p95: 0.9, p99: 2 },
    vsPrevious: { rps: 10.5, p50: 0.094, p95: null, p99: 0.058 },
    vsBaseline: { rps: 10.5, p50: 0.094, p95: null, p99: 0.058 },
    ...single('b'),
  },
];

describe('stage table export', () => {
  it('renders Markdown with escaped pipes and formatted units', () => {
    const md = stageTableMarkdown(rows);
    const lines = md.trim().split('\n');
    expect(lines).toHaveLength(4);
    expect(lines[0]).toBe(
      '| Stage | Key action | QPS | P50 | P95 | P99 | Errors | QPS vs prev | P95 vs prev | QPS vs baseline | P95 vs baseline |',
    );
    expect(lines[2]).toBe(
      '| baseline | encoding/json \\| reflection | 8,590 req/s | 3.19 ms | — | 34.3 ms | 0 | — | — | — | — |',
    );
    expect(lines[3]).toContain('| ×10.5 (+950 %) |');
  });
  it('renders CSV with raw numbers and neutralised formulas', () => {
    const csv = stageTableCsv(rows).trim().split('\n');
    expect(csv[0]?.split(',')).toHaveLength(16);
    expect(csv[1]).toBe('baseline,encoding/json | reflection,8589.52,43389,0,3.19,,34.32,,,,,,,,');
    expect(csv[2]?.startsWith("fast-json,'=cmd(),90190,455000,2,0.3,0.9,2,10.5,0.094,,0.058")).toBe(true);
  });
});

describe('stage table columns', () => {
  it('leaves out latency columns no stage has', () => {
    expect(presentLatencyColumns(rows)).toEqual(['p50', 'p95', 'p99']);
    expect(presentLatencyColumns([rows[0]!])).toEqual(['p50', 'p99']);
    expect(presentLatencyColumns([])).toEqual([]);
  });
});
