import { formatValue } from '../render/flamegraph-svg.ts';
import { mdCode, mdTable, mdText } from '../render/markdown.ts';
import type { Change, GcSummary, Judgement, PairData, StageRow } from './stage-changes.ts';

/**
 * `stagediff report`: one base → target pair of a comparison, for a pull request (Markdown) or a tool
 * (JSON, schema in report-schema.ts). Everything in it comes from the API; verdicts are the server's.
 */
export interface Report {
  schema: 'stagediff-report/1';
  comparison: { id: string; title: string; url: string | null };
  base: { id: string; name: string; note: string };
  target: { id: string; name: string; note: string };
  /** Counts over `changes` (load-test figures and CPU per request) and `benchmarks`. */
  summary: Record<'improvements' | 'regressions' | 'withinNoise' | 'tooFewRuns' | 'notTested', number>;
  changes: Change[];
  stages: {
    id: string;
    name: string;
    role: 'base' | 'target' | null;
    summary: string;
    loadTests: number;
    rps: number | null;
    latencyMs: { p50: number | null; p95: number | null; p99: number | null };
    ci: { rps: number | null; p50: number | null; p95: number | null; p99: number | null } | null;
    vsPrevious: { rps: VerdictCell; p99: VerdictCell } | null;
  }[];
  topFunctions: {
    sampleType: string;
    mode: string;
    unit: string;
    rowsTotal: number;
    warnings: string[];
    rows: {
      name: string;
      base: { flat: number; cum: number };
      target: { flat: number; cum: number };
      deltaFlat: number;
      deltaCum: number;
      status: string;
      /** The server's test of the function's cum across the stages' profiles, when it ran one. */
      verdict: Judgement | null;
      p: number | null;
    }[];
  } | null;
  gc: { stage: string; role: 'base' | 'target'; traces: number; summary: GcSummary }[];
  benchmarks: Change[];
  images: { diffSvg: string | null; diffPng: string | null };
  notes: string[];
}

export interface VerdictCell {
  ratio: number | null;
  judgement: Judgement;
  p: number | null;
  n: string | null;
}

function cell(
  v: NonNullable<StageRow['significance']>['vsPrevious'],
  k: 'rps' | 'p99',
  ratio: number | null,
): VerdictCell {
  const x = v?.[k];
  if (!x) return { ratio, judgement: 'not-tested', p: null, n: null };
  const j: Judgement =
    x.status === 'significant'
      ? 'significant'
      : x.status === 'no-change'
        ? 'within-noise'
        : x.status === 'missing'
          ? 'missing'
          : 'too-few-runs';
  return { ratio: x.ratio, judgement: j, p: x.p, n: `${x.nBase}+${x.nTarget}` };
}

/** The report's data: a pure function of what readPair fetched. */
export function buildReport(
  d: PairData,
  links: { share: string | null; image: (path: string) => string | null },
): Report {
  const id = encodeURIComponent(d.comparison.id);
  const all = [...d.loadTests, ...(d.cpuPerRequest ? [d.cpuPerRequest] : [])];
  const counted = [...all, ...d.benchmarkChanges];
  const count = (f: (c: Change) => boolean) => counted.filter(f).length;
  const notes: string[] = [];
  if (all.some((c) => c.judgement === 'too-few-runs'))
    notes.push(
      'Some figures come from too few runs to tell a change from noise: capture each stage with `--runs 5` (or more) to get verdicts.',
    );
  const rows = d.comparison.stageTable;
  const gc: Report['gc'] = [];
  for (const [role, st] of [
    ['base', d.base],
    ['target', d.target],
  ] as const) {
    const g = d.gc?.stages.find((s) => s.stageId === st.id);
    const first = g?.traces[0];
    if (first) gc.push({ stage: st.name, role, traces: g.traces.length, summary: first.trace.summary });
  }
  if (gc.some((g) => g.traces > 1)) notes.push('GC figures are from the first GC trace of each stage.');
  const top = d.diff;
  return {
    schema: 'stagediff-report/1',
    comparison: { id: d.comparison.id, title: d.comparison.title, url: links.share },
    base: { id: d.base.id, name: d.base.name, note: d.base.note },
    target: { id: d.target.id, name: d.target.name, note: d.target.note },
    summary: {
      improvements: count((c) => c.direction === 'improvement'),
      regressions: count((c) => c.direction === 'regression'),
      withinNoise: count((c) => c.judgement === 'within-noise'),
      tooFewRuns: count((c) => c.judgement === 'too-few-runs'),
      notTested: count((c) => c.judgement === 'not-tested'),
    },
    changes: all,
    stages: rows.map((r, i) => ({
      id: r.stageId,
      name: r.name,
      role: r.stageId === d.base.id ? 'base' : r.stageId === d.target.id ? 'target' : null,
      summary: r.summary ?? (r.loadTests > 1 ? 'aggregate' : r.loadTests === 1 ? 'single-run' : 'none'),
      loadTests: r.loadTests,
      rps: r.rps,
      latencyMs: r.latencyMs,
      ci: r.estimates
        ? {
            rps: r.estimates.rps?.ci ?? null,
            p50: r.estimates.p50?.ci ?? null,
            p95: r.estimates.p95?.ci ?? null,
            p99: r.estimates.p99?.ci ?? null,
          }
        : null,
      vsPrevious:
        i === 0
          ? null
          : {
              rps: cell(r.significance?.vsPrevious ?? null, 'rps', ratioOf(rows[i - 1]!.rps, r.rps)),
              p99: cell(
                r.significance?.vsPrevious ?? null,
                'p99',
                ratioOf(rows[i - 1]!.latencyMs.p99, r.latencyMs.p99),
              ),
            },
    })),
    topFunctions: top
      ? {
          sampleType: top.sampleType,
          mode: top.mode,
          unit: top.unit,
          rowsTotal: top.rowsTotal,
          warnings: top.warnings,
          rows: top.top.map((r) => {
            const v = r.noise?.cum;
            const verdict: Judgement | null = !v
              ? null
              : v.status === 'significant'
                ? 'significant'
                : v.status === 'no-change'
                  ? 'within-noise'
                  : v.status === 'missing'
                    ? 'missing'
                    : 'too-few-runs';
            return {
              name: r.name,
              base: r.base,
              target: r.target,
              deltaFlat: r.deltaFlat,
              deltaCum: r.deltaCum,
              status: r.status,
              verdict,
              p: v?.p ?? null,
            };
          }),
        }
      : null,
    gc,
    benchmarks: d.benchmarkChanges,
    images: d.diffQuery
      ? {
          diffSvg: links.image(`/api/comparisons/${id}/diff.svg?${d.diffQuery}`),
          diffPng: links.image(`/api/comparisons/${id}/diff.png?${d.diffQuery}`),
        }
      : { diffSvg: null, diffPng: null },
    notes,
  };
}

function ratioOf(a: number | null, b: number | null): number | null {
  return a !== null && b !== null && a !== 0 ? b / a : null;
}

// ---- Markdown ----

/** GitHub refuses comments over 65,536 characters; the report stays below this, folds included. */
export const MARKDOWN_LIMIT = 60_000;

const group = (v: number, digits: number) =>
  v.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });

/** A figure in its unit as the tools print it. */
export function formatFigure(v: number | null, unit: string): string {
  if (v === null) return '–';
  if (unit === 'req/s') return `${group(v, v >= 1000 ? 0 : 1)} req/s`;
  if (unit === 'ms') return `${v < 10 ? v.toFixed(2) : v < 100 ? v.toFixed(1) : group(v, 0)} ms`;
  if (unit === 'sec/op') return `${formatValue(v * 1e9, 'nanoseconds')}/op`;
  if (unit === 'B/op') return `${formatValue(v, 'bytes')}/op`;
  if (unit === 'B/s') return `${formatValue(v, 'bytes')}/s`;
  if (/\//.test(unit) && !/^(nanoseconds|microseconds|bytes|count|fraction)\//.test(unit))
    return `${group(v, Math.abs(v) >= 100 ? 0 : 2)} ${unit}`;
  return formatValue(v, unit);
}

export function formatRatio(r: number | null): string {
  if (r === null) return '–';
  if (r >= 0.995 && r <= 1.005) return '×1.00';
  return r < 10 ? `×${r.toFixed(2)}` : `×${r.toFixed(1)}`;
}

export function formatPercent(d: number | null): string {
  if (d === null) return '–';
  const a = Math.abs(d);
  return `${d > 0 ? '+' : d < 0 ? '−' : '±'}${a < 10 ? a.toFixed(1) : a.toFixed(0)} %`;
}

export function formatP(p: number | null): string {
  if (p === null) return '';
  return p < 0.001 ? 'p<0.001' : `p=${p.toFixed(3)}`;
}

/**
 * A change's verdict in words: "significant (p=0.002, n=6+6)", "~ within the noise (p=0.818, n=6+6)",
 * "too few runs to judge (1 run: no noise estimate)". `noiseMark: false` drops benchstat's "~" (the
 * check's plain-text lines).
 */
export function verdictWords(
  c: Pick<Change, 'judgement' | 'p' | 'nBase' | 'nTarget' | 'reason'>,
  { noiseMark = true } = {},
): string {
  const n = `n=${c.nBase}+${c.nTarget}`;
  const pn = c.p === null ? n : `${formatP(c.p)}, ${n}`;
  switch (c.judgement) {
    case 'significant':
      return `significant (${pn})`;
    case 'within-noise':
      return `${noiseMark ? '~ ' : ''}within the noise (${pn})`;
    case 'too-few-runs':
      return `too few runs to judge (${c.reason ?? n})`;
    case 'not-tested':
      return `no verdict (${c.reason ?? 'not tested'})`;
    default:
      return 'not measured on both sides';
  }
}

function icon(c: Pick<Change, 'direction' | 'judgement'>): string {
  if (c.direction === 'improvement') return '🟢';
  if (c.direction === 'regression') return '🔴';
  return c.judgement === 'within-noise' ? '⚪' : '❔';
}

function changeLine(c: Change): string {
  const what = c.subject ? `${mdCode(c.subject)} ${mdText(c.label)}` : `**${mdText(c.label)}**`;
  const move =
    c.judgement === 'significant' && c.ratio !== null
      ? `${c.direction === 'improvement' ? 'improved' : 'regressed'}: ${formatRatio(c.ratio)} (${formatPercent(c.deltaPercent)})`
      : `${formatRatio(c.ratio)} (${formatPercent(c.deltaPercent)})`;
  return `- ${icon(c)} ${what} ${move}, ${formatFigure(c.base, c.unit)} → ${formatFigure(c.target, c.unit)}: ${verdictWords(c)}`;
}

function vsCell(v: VerdictCell | undefined): string {
  if (!v || v.ratio === null) return '–';
  switch (v.judgement) {
    case 'significant':
      return `**${formatRatio(v.ratio)}** (${formatP(v.p)}, n=${v.n})`;
    case 'within-noise':
      return `~ ${formatRatio(v.ratio)} (${formatP(v.p)}, n=${v.n})`;
    case 'too-few-runs':
      return `${formatRatio(v.ratio)} (${v.n === '1+1' || v.n === null ? '1 run' : `n=${v.n}`}: no verdict)`;
    default:
      return `${formatRatio(v.ratio)} (no verdict)`;
  }
}

function withCi(v: number | null, ci: number | null | undefined, unit: string): string {
  const f = formatFigure(v, unit);
  return ci !== null && ci !== undefined && v !== null ? `${f} ±${Math.round(ci * 100)} %` : f;
}

function stageTableMd(r: Report): string {
  const rows = r.stages.map((s) => [
    s.role ?? '',
    mdText(s.name),
    String(s.loadTests),
    withCi(s.rps, s.ci?.rps, 'req/s'),
    vsCell(s.vsPrevious?.rps),
    withCi(s.latencyMs.p50, s.ci?.p50, 'ms'),
    withCi(s.latencyMs.p99, s.ci?.p99, 'ms'),
    vsCell(s.vsPrevious?.p99),
  ]);
  return mdTable(['', 'stage', 'runs', 'QPS', 'QPS vs previous', 'P50', 'P99', 'P99 vs previous'], rows, [
    'l',
    'l',
    'r',
    'r',
    'r',
    'r',
    'r',
    'r',
  ]);
}

function topMd(r: Report, limit: number): string {
  const t = r.topFunctions!;
  const unit = t.unit;
  const rows = t.rows
    .slice(0, limit)
    .map((x) => [
      mdCode(x.name),
      formatFigure(x.base.flat, unit),
      formatFigure(x.target.flat, unit),
      formatFigure(x.deltaFlat, unit).replace(/^(?!−)/, x.deltaFlat > 0 ? '+' : ''),
      formatFigure(x.deltaCum, unit).replace(/^(?!−)/, x.deltaCum > 0 ? '+' : ''),
      x.status === 'new' || x.status === 'removed'
        ? x.status
        : x.verdict === 'significant'
          ? `significant (${formatP(x.p)})`
          : x.verdict === 'within-noise'
            ? `~ (${formatP(x.p)})`
            : '',
    ]);
  return mdTable(['function', 'base flat', 'target flat', 'Δ flat', 'Δ cum', 'verdict (cum)'], rows, [
    'l',
    'r',
    'r',
    'r',
    'r',
    'l',
  ]);
}

function gcMd(r: Report): string {
  return mdTable(
    ['stage', 'cycles', 'forced', 'STW pause total', 'P99 pause', 'max pause', 'max heap'],
    r.gc.map((g) => [
      `${g.role}: ${mdText(g.stage)}`,
      String(g.summary.cycles),
      String(g.summary.forcedCycles),
      `${g.summary.stwPauseMs.total.toFixed(2)} ms`,
      `${g.summary.stwPauseMs.p99.toFixed(3)} ms`,
      `${g.summary.stwPauseMs.max.toFixed(3)} ms`,
      `${g.summary.maxHeapMb} MB`,
    ]),
    ['l', 'r', 'r', 'r', 'r', 'r', 'r'],
  );
}

function benchMd(r: Report, limit: number): string {
  return mdTable(
    ['benchmark', 'unit', 'base', 'target', 'Δ', 'verdict'],
    r.benchmarks
      .slice(0, limit)
      .map((b) => [
        mdCode(b.subject ?? ''),
        mdText(b.unit),
        withCi(b.base, b.ciBase, b.unit),
        withCi(b.target, b.ciTarget, b.unit),
        b.judgement === 'significant' ? formatPercent(b.deltaPercent) : '~',
        `${icon(b)} ${verdictWords(b)}`,
      ]),
    ['l', 'l', 'r', 'r', 'r', 'l'],
  );
}

function details(summary: string, body: string): string {
  return `<details><summary>${summary}</summary>\n\n${body}\n\n</details>`;
}

/**
 * The report as Markdown for a job summary or a PR comment: the verdict and the significant changes
 * first, then the stage table and the diff image, the rest folded. Shortens the folded tables until
 * the whole fits MARKDOWN_LIMIT.
 */
export function renderMarkdown(r: Report, opts: { top?: number; imageNote?: string } = {}): string {
  let limit = opts.top ?? 20;
  let md = markdownWith(r, limit, opts.imageNote);
  while (md.length > MARKDOWN_LIMIT && limit > 0) {
    limit = Math.floor(limit / 2);
    md = markdownWith(r, limit, opts.imageNote);
  }
  return md;
}

function markdownWith(r: Report, limit: number, imageNote?: string): string {
  const out: string[] = [];
  const title = `${mdText(r.base.name)} → ${mdText(r.target.name)}`;
  out.push(`## stagediff: ${title}`);
  out.push(
    `**${mdText(r.comparison.title)}**${r.comparison.url ? ` · [open in stagediff](${encodeURI(r.comparison.url)})` : ''}`,
  );
  const s = r.summary;
  const parts = [
    `${s.improvements} significant improvement${s.improvements === 1 ? '' : 's'}`,
    `${s.regressions} significant regression${s.regressions === 1 ? '' : 's'}`,
    `${s.withinNoise} within the noise`,
  ];
  if (s.tooFewRuns) parts.push(`${s.tooFewRuns} with too few runs to judge`);
  if (s.notTested) parts.push(`${s.notTested} without a verdict`);
  out.push(`${s.regressions > 0 ? '🔴' : s.improvements > 0 ? '🟢' : '⚪'} ${parts.join(' · ')}`);

  out.push('### What changed');
  const sig = [...r.changes, ...r.benchmarks].filter((c) => c.judgement === 'significant');
  const rest = r.changes.filter((c) => c.judgement !== 'significant' && c.judgement !== 'missing');
  if (sig.length === 0) out.push('No significant change.');
  else out.push(sig.map(changeLine).join('\n'));
  if (rest.length) out.push(`Not judged as changes:\n${rest.map(changeLine).join('\n')}`);
  for (const n of r.notes) out.push(`> ${n}`);

  out.push('### Stages');
  out.push(stageTableMd(r));

  if (r.topFunctions) {
    const t = r.topFunctions;
    const what = `${mdText(t.sampleType)}${t.mode === 'per-request' ? ' per request' : ` (${mdText(t.mode)})`}`;
    out.push(`### Diff flamegraph: ${what}`);
    if (r.images.diffSvg) {
      const img = `![diff flamegraph of ${mdText(r.base.name)} → ${mdText(r.target.name)}](${encodeURI(r.images.diffSvg)})`;
      out.push(r.comparison.url ? `[${img}](${encodeURI(r.comparison.url)})` : img);
    } else if (imageNote) out.push(mdText(imageNote));
    for (const w of t.warnings) out.push(`> ${mdText(w)}`);
    if (limit > 0 && t.rows.length > 0)
      out.push(
        details(
          `Top functions by Δ flat ${mdText(t.sampleType)}${t.mode === 'per-request' ? ' per request' : ''} (${Math.min(limit, t.rows.length)} of ${t.rowsTotal})`,
          topMd(r, limit),
        ),
      );
  }
  if (r.gc.length > 0) out.push(details('GC (from GODEBUG=gctrace=1)', gcMd(r)));
  if (r.benchmarks.length > 0 && limit > 0)
    out.push(
      details(
        `Benchmarks: benchstat (${Math.min(limit, r.benchmarks.length)} of ${r.benchmarks.length})`,
        benchMd(r, limit),
      ),
    );
  out.push(
    '<sub>Verdicts: Mann–Whitney U test at α = 0.05 over the runs of each stage, as benchstat computes them; ~ means within the noise. Made by <code>stagediff report</code>.</sub>',
  );
  return `${out.join('\n\n')}\n`;
}
