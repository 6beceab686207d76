import type { StageRow } from './api-types.ts';
import { DASH, formatChange, formatInt, formatMs, formatRatio, formatRps } from './format.ts';

function mdEscape(text: string): string {
  return text.replace(/\\/g, '\\\\').replace(/\|/g, '\\|').replace(/\r?\n/g, ' ');
}

function changeCell(ratio: number | null | undefined, kind: 'rps' | 'latency'): string {
  if (ratio === null || ratio === undefined) return DASH;
  return kind === 'rps' ? `${formatRatio(ratio)} (${formatChange(ratio)})` : formatChange(ratio);
}

/**
 * The stage table as a GitHub-flavoured Markdown table, the way Go performance write-ups show results:
 * one row per stage with QPS, P50/P95/P99 (ms), errors and change vs the previous stage and the baseline.
 */
export function stageTableMarkdown(rows: StageRow[]): string {
  const header = [
    'Stage',
    'Key action',
    'QPS',
    'P50',
    'P95',
    'P99',
    'Errors',
    'QPS vs prev',
    'P95 vs prev',
    'QPS vs baseline',
    'P95 vs baseline',
  ];
  const lines = [`| ${header.join(' | ')} |`, `| ${header.map((_, i) => (i >= 2 ? '---:' : '---')).join(' | ')} |`];
  for (const r of rows) {
    const cells = [
      mdEscape(r.name),
      mdEscape(r.note || ''),
      formatRps(r.rps),
      formatMs(r.latencyMs.p50),
      formatMs(r.latencyMs.p95),
      formatMs(r.latencyMs.p99),
      formatInt(r.errors),
      changeCell(r.vsPrevious?.rps, 'rps'),
      changeCell(r.vsPrevious?.p95, 'latency'),
      changeCell(r.vsBaseline?.rps, 'rps'),
      changeCell(r.vsBaseline?.p95, 'latency'),
    ];
    lines.push(`| ${cells.join(' | ')} |`);
  }
  return `${lines.join('\n')}\n`;
}

function csvCell(v: string | number | null | undefined): string {
  if (v === null || v === undefined) return '';
  const s = String(v);
  // Quote when needed; also neutralise spreadsheet formula prefixes in untrusted names.
  const safe = /^[=+\-@\t\r]/.test(s) && typeof v === 'string' ? `'${s}` : s;
  return /[",\n\r]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}

/** The stage table as CSV with raw numbers in explicit units (req/s, ms, ratios new/old). */
export function stageTableCsv(rows: StageRow[]): string {
  const header = [
    'stage',
    'key_action',
    'rps',
    'requests',
    'errors',
    'p50_ms',
    'p95_ms',
    'p99_ms',
    'rps_vs_previous',
    'p50_vs_previous',
    'p95_vs_previous',
    'p99_vs_previous',
    'rps_vs_baseline',
    'p50_vs_baseline',
    'p95_vs_baseline',
    'p99_vs_baseline',
  ];
  const out = [header.join(',')];
  for (const r of rows) {
    out.push(
      [
        r.name,
        r.note,
        r.rps,
        r.requests,
        r.errors,
        r.latencyMs.p50,
        r.latencyMs.p95,
        r.latencyMs.p99,
        r.vsPrevious?.rps,
        r.vsPrevious?.p50,
        r.vsPrevious?.p95,
        r.vsPrevious?.p99,
        r.vsBaseline?.rps,
        r.vsBaseline?.p50,
        r.vsBaseline?.p95,
        r.vsBaseline?.p99,
      ]
        .map(csvCell)
        .join(','),
    );
  }
  return `${out.join('\n')}\n`;
}

/** The latency columns some stage has a figure for (wrk prints no P95: that column is left out). */
export function presentLatencyColumns(rows: readonly Pick<StageRow, 'latencyMs'>[]): ('p50' | 'p95' | 'p99')[] {
  return (['p50', 'p95', 'p99'] as const).filter((k) => rows.some((r) => r.latencyMs[k] !== null));
}
