import type { StageRow } from './api-types.ts';
import { DASH, formatInt, formatMs, formatRps } from './format.ts';
import { formatCi, verdictOrSingle, verdictText } from './significance.ts';

function mdEscape(text: string): string {
  return text.replace(/\\/g, '\\\\').replace(/\|/g, '\\|').replace(/\r?\n/g, ' ');
}

type Figure = 'rps' | 'p50' | 'p95' | 'p99';

/** A change with its verdict: "×2.38 (p=0.008, n=5+5)", "~ (p=0.151, n=5+5)", "×1.03 · 1 run: no noise estimate". */
function changeCell(r: StageRow, side: 'vsPrevious' | 'vsBaseline', k: Figure): string {
  const ratio = r[side]?.[k];
  if (ratio === null || ratio === undefined) return DASH;
  return verdictText(verdictOrSingle(ratio, r.significance?.[side]?.[k]), k === 'rps' ? 'ratio' : 'percent').text;
}

/** A figure with its spread across runs: "9,216 req/s ± 17 % (n=10)"; as printed for one run. */
function figureCell(r: StageRow, k: Figure): string {
  const v = k === 'rps' ? r.rps : r.latencyMs[k];
  const text = k === 'rps' ? formatRps(v) : formatMs(v);
  const e = r.estimates?.[k];
  return e && e.n > 1 ? `${text} ${formatCi(e)} (n=${e.n})` : text;
}

/**
 * The stage table as a GitHub-flavoured Markdown table, the way Go performance write-ups show results:
 * one row per stage with QPS, P50/P95/P99 (ms), errors and change vs the previous stage and the baseline.
 * With repeated runs, figures are medians ± benchstat's 95 % interval and every change carries its
 * Mann–Whitney U p-value (a note under the table says so).
 */
export function stageTableMarkdown(rows: StageRow[]): string {
  const lat: Figure = presentLatencyColumns(rows).includes('p95') || rows.length === 0 ? 'p95' : 'p99';
  const L = lat.toUpperCase();
  const header = [
    'Stage',
    'Key action',
    'QPS',
    'P50',
    'P95',
    'P99',
    'Errors',
    'QPS vs prev',
    `${L} vs prev`,
    'QPS vs baseline',
    `${L} vs baseline`,
  ];
  const lines = [`| ${header.join(' | ')} |`, `| ${header.map((_, i) => (i >= 2 ? '---:' : '---')).join(' | ')} |`];
  for (const r of rows) {
    const cells = [
      mdEscape(r.name),
      mdEscape(r.note || ''),
      figureCell(r, 'rps'),
      figureCell(r, 'p50'),
      figureCell(r, 'p95'),
      figureCell(r, 'p99'),
      formatInt(r.errors),
      changeCell(r, 'vsPrevious', 'rps'),
      changeCell(r, 'vsPrevious', lat),
      changeCell(r, 'vsBaseline', 'rps'),
      changeCell(r, 'vsBaseline', lat),
    ];
    lines.push(`| ${cells.join(' | ')} |`);
  }
  if (rows.some((r) => r.summary === 'median'))
    lines.push(
      '',
      "Figures of stages with several runs are medians ± benchstat's 95 % confidence interval (∞: fewer than 6 runs). A change reads as a change only when the Mann–Whitney U test of the runs gives p ≤ 0.05; `~` is within the noise.",
    );
  return `${lines.join('\n')}\n`;
}

function csvCell(v: string | number | null | undefined): string {
  if (v === null || v === undefined) return '';
  const s = String(v);
  // Quote when needed; also neutralise spreadsheet formula prefixes in untrusted names.
  const safe = /^[=+\-@\t\r]/.test(s) && typeof v === 'string' ? `'${s}` : s;
  return /[",\n\r]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}

const FIGURES: Figure[] = ['rps', 'p50', 'p95', 'p99'];
const CSV_NAME: Record<Figure, string> = { rps: 'rps', p50: 'p50_ms', p95: 'p95_ms', p99: 'p99_ms' };

/**
 * The stage table as CSV with raw numbers in explicit units (req/s, ms, ratios new/old). After the
 * figures and ratios: runs per stage, each figure's 95 % interval (empty where benchstat prints ± ∞),
 * and per change its Mann–Whitney U p-value and verdict (significant, no-change, need-more-runs,
 * single-run, missing).
 */
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
    'runs',
    ...FIGURES.flatMap((k) => [`${CSV_NAME[k]}_ci_lo`, `${CSV_NAME[k]}_ci_hi`]),
    ...(['previous', 'baseline'] as const).flatMap((side) =>
      FIGURES.flatMap((k) => [`${k}_vs_${side}_p`, `${k}_vs_${side}_verdict`]),
    ),
  ];
  const out = [header.join(',')];
  for (const r of rows) {
    const verdicts = (['vsPrevious', 'vsBaseline'] as const).flatMap((side) =>
      FIGURES.flatMap((k) => {
        const v = r.significance?.[side]?.[k];
        return [v?.p, v?.status];
      }),
    );
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
        r.loadTests,
        ...FIGURES.flatMap((k) => [r.estimates?.[k]?.lo, r.estimates?.[k]?.hi]),
        ...verdicts,
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
