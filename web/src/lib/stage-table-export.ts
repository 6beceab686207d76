/**
 * The stage table's figures as the page, the Markdown and the CSV show them. Every figure comes from
 * GET …/stage-table (the change engine's medians, intervals and verdicts); numbers are printed by the
 * shared formatter and verdicts worded by the shared words, so the page and its exports read the same.
 */
import { ciText } from '../../../server/src/api/benchstat-format.ts';
import { DASH, formatInt, formatValue } from '../../../server/src/api/format.ts';
import { FIGURES } from '../../../server/src/api/labels.ts';
import { type ChangeStyle, verdictText } from '../../../server/src/api/words.ts';
import type { Estimate, FigureKey, StageRow, StageTable } from './api.ts';

/** How the page names each figure (its column head), its unit, how its change reads, its CSV column. */
export const FIGURE_TEXT = Object.fromEntries(
  (Object.keys(FIGURES) as FigureKey[]).map((k) => {
    const f = FIGURES[k];
    return [k, { label: f.short, unit: f.unit, style: f.style, csv: f.csv }];
  }),
) as Record<FigureKey, { label: string; unit: string; style: ChangeStyle; csv: string }>;

export type Latency = 'p50' | 'p95' | 'p99';
const LATENCIES: Latency[] = ['p50', 'p95', 'p99'];

/** The latency columns some stage has a figure for (wrk prints no P95: that column is left out). */
export function presentLatencyColumns(rows: readonly Pick<StageRow, 'figures'>[]): Latency[] {
  return LATENCIES.filter((k) => rows.some((r) => r.figures[k] !== null));
}

/** The per-request columns some stage has (CPU per request needs CPU profiles, allocations allocs profiles). */
export function presentPerRequestColumns(
  rows: readonly Pick<StageRow, 'figures'>[],
): ('cpuPerRequest' | 'allocPerRequest')[] {
  return (['cpuPerRequest', 'allocPerRequest'] as const).filter((k) => rows.some((r) => r.figures[k] !== null));
}

/** The latency a verdict line names: P95 where there is one, else P99, else P50. */
export function verdictLatency(lat: readonly Latency[]): Latency | null {
  return lat.includes('p95') ? 'p95' : lat.includes('p99') ? 'p99' : (lat[0] ?? null);
}

/** A figure's median in its unit: "9,742 req/s", "3.19 ms", "72.7 µs/req". */
export function figureValue(e: Estimate | null, k: FigureKey): string {
  return e ? formatValue(e.median, FIGURE_TEXT[k].unit) : DASH;
}

/** benchstat's ± of a median across runs ("± 5%", "± ∞" below 6 runs); empty for a single run. */
export function figureSpread(e: Estimate | null): string {
  return e && e.n > 1 ? ciText(e.ci) : '';
}

/** A change against another stage with its verdict: "×2.38 (p=0.008, n=5+5)", "~ (p=0.151, n=5+5)", … */
export function changeText(r: StageRow, side: 'vsPrevious' | 'vsBaseline', k: FigureKey): string {
  return verdictText(r[side]?.[k], FIGURE_TEXT[k].style).text;
}

function mdEscape(text: string): string {
  return text.replace(/\\/g, '\\\\').replace(/\|/g, '\\|').replace(/\r?\n/g, ' ');
}

/** A figure with its spread across runs: "9,216 req/s ± 17% (n=10)"; as printed for one run. */
function figureCell(r: StageRow, k: FigureKey): string {
  const e = r.figures[k];
  const spread = figureSpread(e);
  return spread ? `${figureValue(e, k)} ${spread} (n=${e!.n})` : figureValue(e, k);
}

/**
 * The stage table as a GitHub-flavoured Markdown table, the way Go performance write-ups show results:
 * one row per stage with QPS, P50/P95/P99, errors, CPU (and allocated bytes) per request when the stages
 * have profiles for them, and the change of QPS, one latency and CPU per request against the previous
 * stage and the baseline, each with its verdict as the page words it.
 */
export function stageTableMarkdown(table: StageTable): string {
  const rows = table.rows;
  const lat: Latency = presentLatencyColumns(rows).includes('p95') || rows.length === 0 ? 'p95' : 'p99';
  const perRequest = presentPerRequestColumns(rows);
  const judged: FigureKey[] = ['rps', lat, ...perRequest.filter((k) => k === 'cpuPerRequest')];
  const header = [
    'Stage',
    'Key action',
    'QPS',
    'P50',
    'P95',
    'P99',
    'Errors',
    ...perRequest.map((k) => FIGURE_TEXT[k].label),
    ...judged.map((k) => `${FIGURE_TEXT[k].label} vs prev`),
    ...judged.map((k) => `${FIGURE_TEXT[k].label} vs baseline`),
  ];
  const lines = [`| ${header.join(' | ')} |`, `| ${header.map((_, i) => (i >= 2 ? '---:' : '---')).join(' | ')} |`];
  for (const r of rows) {
    const cells = [
      mdEscape(r.name),
      mdEscape(r.note || ''),
      ...(['rps', 'p50', 'p95', 'p99'] as const).map((k) => figureCell(r, k)),
      formatInt(r.errors),
      ...perRequest.map((k) => figureCell(r, k)),
      ...judged.map((k) => changeText(r, 'vsPrevious', k)),
      ...judged.map((k) => changeText(r, 'vsBaseline', k)),
    ];
    lines.push(`| ${cells.join(' | ')} |`);
  }
  if (rows.some((r) => r.summary === 'median'))
    lines.push(
      '',
      `Figures of stages with several runs are medians ± benchstat's 95 % confidence interval (∞: fewer than 6 runs). A change reads as a change only when the Mann–Whitney U test of the runs gives p ≤ ${table.alpha}; \`~\` is within the noise; fewer than ${table.runsNeeded} runs per stage are too few to test.`,
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

const LOAD: FigureKey[] = ['rps', 'p50', 'p95', 'p99'];
const PER_REQUEST: FigureKey[] = ['cpuPerRequest', 'allocPerRequest'];

/**
 * The stage table as CSV with raw numbers in explicit units (req/s, ms, ns and bytes per request,
 * ratios new/old). The load-test columns come first as they always have: medians, ratios against the
 * previous stage and the baseline, runs, each figure's 95 % interval (empty where benchstat prints ± ∞),
 * and per change its Mann–Whitney U p-value and verdict (significant, no-change, too-few-runs,
 * single-run, missing). Then the same for CPU and allocated bytes per request (per profile).
 */
export function stageTableCsv(table: StageTable): string {
  const header = [
    'stage',
    'key_action',
    'rps',
    'requests',
    'errors',
    'p50_ms',
    'p95_ms',
    'p99_ms',
    ...(['previous', 'baseline'] as const).flatMap((side) => LOAD.map((k) => `${k}_vs_${side}`)),
    'runs',
    ...LOAD.flatMap((k) => [`${FIGURE_TEXT[k].csv}_ci_lo`, `${FIGURE_TEXT[k].csv}_ci_hi`]),
    ...(['previous', 'baseline'] as const).flatMap((side) =>
      LOAD.flatMap((k) => [`${k}_vs_${side}_p`, `${k}_vs_${side}_verdict`]),
    ),
    ...PER_REQUEST.flatMap((k) => {
      const c = FIGURE_TEXT[k].csv;
      return [
        c,
        `${c}_profiles`,
        `${c}_ci_lo`,
        `${c}_ci_hi`,
        ...(['previous', 'baseline'] as const).flatMap((side) => [
          `${c}_vs_${side}`,
          `${c}_vs_${side}_p`,
          `${c}_vs_${side}_verdict`,
        ]),
      ];
    }),
  ];
  const out = [header.join(',')];
  for (const r of table.rows) {
    const f = r.figures;
    const sides = ['vsPrevious', 'vsBaseline'] as const;
    out.push(
      [
        r.name,
        r.note,
        f.rps?.median,
        r.requests,
        r.errors,
        f.p50?.median,
        f.p95?.median,
        f.p99?.median,
        ...sides.flatMap((side) => LOAD.map((k) => r[side]?.[k]?.ratio)),
        r.loadTests,
        ...LOAD.flatMap((k) => [f[k]?.lo, f[k]?.hi]),
        ...sides.flatMap((side) => LOAD.flatMap((k) => [r[side]?.[k]?.p, r[side]?.[k]?.status])),
        ...PER_REQUEST.flatMap((k) => [
          f[k]?.median,
          f[k]?.n,
          f[k]?.lo,
          f[k]?.hi,
          ...sides.flatMap((side) => [r[side]?.[k]?.ratio, r[side]?.[k]?.p, r[side]?.[k]?.status]),
        ]),
      ]
        .map(csvCell)
        .join(','),
    );
  }
  return `${out.join('\n')}\n`;
}
