import type { Change, Verdict } from '../api/changes.ts';
import type { Report } from '../api/report.ts';
import { formatChange, formatMs, formatRatio, formatSignedValue, formatValue } from '../api/format.ts';
import { ciText } from '../api/benchstat-format.ts';
import { changeStyle, formatPN, noVerdictReason, verdictWords } from '../api/words.ts';
import { codeChangeSummary, codeFunctionLine } from '../api/code-change-words.ts';
import { endpointUrl } from '../api/routes.ts';
import { FIGURES } from '../api/labels.ts';
import { mdCode, mdDetails, mdTable, mdText } from '../render/markdown.ts';
import type { PairData } from '../client/pair.ts';

export type { Report };

/**
 * `stagediff report`: one base → target pair of a comparison, for a pull request (Markdown) or a tool
 * (JSON, schema in api/report.ts). Every figure and verdict is the change engine's; this file only
 * arranges and words them (api/format.ts, api/words.ts).
 */
export function buildReport(
  d: PairData,
  links: { share: string | null; image: (path: string) => string | null },
): Report {
  const c = d.changes;
  // A figure missing on a side is not reported; neither are errors where no run had any.
  const changes = c.figures.filter(
    (x) => x.verdict.status !== 'missing' && !(x.metric === 'error-rate' && !x.base?.median && !x.target?.median),
  );
  const counted = [...changes, ...(c.benchmarks?.rows ?? [])];
  const count = (f: (x: Change) => boolean) => counted.filter(f).length;
  const notes: string[] = [];
  if (changes.some((x) => x.verdict.status === 'too-few-runs' || x.verdict.status === 'single-run'))
    notes.push(
      `Some figures come from too few runs to tell a change from noise: capture each stage with \`--runs ${c.runsNeeded}\` (or more) to get verdicts.`,
    );
  if (c.functions.status === 'too-large' && c.functions.message) notes.push(c.functions.message);
  const imageQuery = d.diffQuery
    ? Object.fromEntries(Object.entries(d.diffQuery).filter(([k]) => k !== 'limit'))
    : null;
  const image = (name: 'diffSvg' | 'diffPng') =>
    imageQuery ? links.image(endpointUrl(name, { id: d.comparison.id }, imageQuery as never)) : null;
  return {
    schema: 'stagediff-report/5',
    comparison: { id: d.comparison.id, title: d.comparison.title, url: links.share },
    base: c.base,
    target: c.target,
    summary: {
      improvements: count((x) => x.direction === 'improvement'),
      regressions: count((x) => x.direction === 'regression'),
      noChange: count((x) => x.verdict.status === 'no-change'),
      tooFewRuns: count((x) => x.verdict.status === 'too-few-runs'),
      singleRun: count((x) => x.verdict.status === 'single-run'),
      notComparable: count((x) => x.verdict.status === 'not-comparable'),
    },
    conditions: c.conditions,
    changes,
    sentences: c.sentences,
    functions: c.functions,
    perRequest: c.perRequest,
    stages: d.table.rows.map((r) => ({
      id: r.stageId,
      name: r.name,
      role: r.stageId === c.base.id ? 'base' : r.stageId === c.target.id ? 'target' : null,
      summary: r.summary,
      loadTests: r.loadTests,
      figures: r.figures,
      vsPrevious: r.vsPrevious,
      conditions: r.conditions.summary,
    })),
    changePoints: d.table.changePoints,
    topFunctions: d.diff
      ? {
          kind: d.diff.kind,
          sampleType: d.diff.sampleType,
          mode: d.diff.mode,
          unit: d.diff.unit,
          rowsTotal: d.diff.rowsTotal,
          warnings: d.diff.warnings,
          rows: d.diff.top,
        }
      : null,
    gc: c.gc,
    ...(c.runtime ? { runtime: c.runtime } : {}),
    ...(c.tail ? { tail: c.tail } : {}),
    ...(c.code ? { code: c.code } : {}),
    benchmarks: c.benchmarks,
    images: { diffSvg: image('diffSvg'), diffPng: image('diffPng') },
    notes,
  };
}

// ---- Markdown ----

/** GitHub refuses comments over 65,536 characters; the report stays below this, folds included. */
export const MARKDOWN_LIMIT = 60_000;

function icon(c: Pick<Change, 'direction' | 'verdict'>): string {
  if (c.direction === 'improvement') return '🟢';
  if (c.direction === 'regression') return '🔴';
  return c.verdict.status === 'no-change' ? '⚪' : '❔';
}

/** A change's move: "×2.05" for QPS, "−35 %" for the rest. */
function move(c: Change): string {
  const r = c.verdict.ratio;
  return changeStyle(c) === 'ratio' ? formatRatio(r) : formatChange(r);
}

function changeLine(c: Change): string {
  if (c.verdict.status === 'not-comparable')
    return `- ❔ **${mdText(c.label)}** ${formatValue(c.base?.median ?? null, c.unit)} → ${formatValue(c.target?.median ?? null, c.unit)}: ${mdText(noVerdictReason(c.verdict))}`;
  const what = c.subject ? `${mdCode(c.subject)} ${mdText(c.label)}` : `**${mdText(c.label)}**`;
  const verb = c.direction === 'improvement' ? 'improved' : c.direction === 'regression' ? 'regressed' : null;
  const figures = `${formatValue(c.base?.median ?? null, c.unit)} → ${formatValue(c.target?.median ?? null, c.unit)}`;
  return `- ${icon(c)} ${what} ${verb ? `${verb}: ` : ''}${move(c)}, ${figures}: ${verdictWords(c.verdict)}`;
}

/** A stage-table cell of a change: bold when significant, "~" within the noise, unjudged otherwise. */
function vsCell(v: Verdict | undefined, style: 'ratio' | 'percent'): string {
  if (v?.status === 'not-comparable') return 'not comparable';
  if (!v || v.ratio === null || v.status === 'missing') return '–';
  const m = style === 'ratio' ? formatRatio(v.ratio) : formatChange(v.ratio);
  switch (v.status) {
    case 'significant':
      return `**${m}** (${formatPN(v)})`;
    case 'no-change':
      return `~ ${m} (${formatPN(v)})`;
    default:
      return `${m} (${noVerdictReason(v)})`;
  }
}

function withCi(e: { median: number; ci: number | null; n: number } | null, unit: string): string {
  if (!e) return '–';
  const f = formatValue(e.median, unit);
  return e.n > 1 ? `${f} ${ciText(e.ci)}` : f;
}

function stageTableMd(r: Report): string {
  const rows = r.stages.map((s) => [
    s.role ?? '',
    mdText(s.name),
    String(s.loadTests),
    withCi(s.figures.rps, 'req/s'),
    vsCell(s.vsPrevious?.rps, 'ratio'),
    withCi(s.figures.p50, 'ms'),
    withCi(s.figures.p99, 'ms'),
    vsCell(s.vsPrevious?.p99, 'percent'),
    withCi(s.figures.cpuPerRequest, 'nanoseconds/request'),
    vsCell(s.vsPrevious?.cpuPerRequest, 'percent'),
  ]);
  return mdTable(
    ['', 'stage', 'runs', 'QPS', 'QPS vs previous', 'P50', 'P99', 'P99 vs previous', 'CPU/req', 'CPU/req vs previous'],
    rows,
    ['l', 'l', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r'],
  );
}

function topMd(r: Report, limit: number): string {
  const t = r.topFunctions!;
  const unit = t.unit;
  const rows = t.rows.slice(0, limit).map((x) => {
    const v = x.verdict?.cum;
    return [
      mdCode(x.name),
      formatValue(x.base.flat, unit),
      formatValue(x.target.flat, unit),
      formatSignedValue(x.deltaFlat, unit),
      formatSignedValue(x.deltaCum, unit),
      x.status === 'new' || x.status === 'removed'
        ? x.status
        : v?.status === 'significant'
          ? `significant (${formatPN({ p: v.p, nBase: r.perRequest.base.profiles.length, nTarget: r.perRequest.target.profiles.length })})`
          : v?.status === 'no-change'
            ? '~'
            : '',
    ];
  });
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
  const g = r.gc!;
  const row = (role: string, s: NonNullable<typeof g.base> | null) =>
    s ? [role, String(s.cycles), formatMs(s.stwP99Ms), `${s.maxHeapMb} MB`] : [role, '–', '–', '–'];
  return mdTable(
    ['stage', 'cycles', 'P99 STW pause', 'max heap'],
    [row(`base: ${mdText(r.base.name)}`, g.base), row(`target: ${mdText(r.target.name)}`, g.target)],
    ['l', 'r', 'r', 'r'],
  );
}

function benchMd(r: Report, limit: number): string {
  const b = r.benchmarks!;
  return mdTable(
    ['benchmark', 'unit', 'base', 'target', 'Δ', 'verdict'],
    b.rows
      .slice(0, limit)
      .map((x) => [
        mdCode(x.subject ?? ''),
        mdText(x.unit),
        withCi(x.base, x.unit),
        withCi(x.target, x.unit),
        x.verdict.status === 'significant' ? formatChange(x.verdict.ratio) : '~',
        `${icon(x)} ${verdictWords(x.verdict)}`,
      ]),
    ['l', 'l', 'r', 'r', 'r', 'l'],
  );
}

/** The code change: the summary, then each changed function and each indirect one, folded. */
function codeChangeMd(c: NonNullable<Report['code']>, limit: number): string {
  const lines = [
    '### The code change',
    codeChangeSummary(c)
      .map((x) => mdText(x, 1000))
      .join(' '),
  ];
  const rows = (fs: typeof c.changed) =>
    fs
      .slice(0, Math.max(limit, 1))
      .map((f) => `- ${mdCode(f.name)} ${mdText(codeFunctionLine({ ...f, name: '' }, c.unit).trimStart())}`)
      .join('\n');
  if (c.changed.length > 0)
    lines.push(mdDetails([`Functions edited, added, removed (${c.changed.length})`], rows(c.changed)));
  const other = c.indirect.length > 0 ? c.indirect : c.closest;
  if (other.length > 0)
    lines.push(
      mdDetails(
        [
          c.indirect.length > 0
            ? `Cost moved, code unchanged (${c.indirect.length})`
            : 'Nearest to a change, code unchanged',
        ],
        rows(other),
      ),
    );
  return lines.join('\n\n');
}

/** The runtime rows: how they are normalised, the allocs cross-check, then every row folded. */
function runtimeMd(rt: NonNullable<Report['runtime']>): string {
  const w = rt.windows;
  const side = (x: typeof w.base) =>
    `${x.traces} trace${x.traces === 1 ? '' : 's'}, ${x.metrics} metrics window${x.metrics === 1 ? '' : 's'}`;
  const lines = [
    '### Runtime',
    `Execution traces and runtime metrics, one value a window (base: ${side(w.base)}; target: ${side(w.target)}); totals ${rt.normalisation === 'per-request' ? 'per request (every window has its own load run)' : 'per second of window (a window lacks its own load run)'}.`,
  ];
  const cross = [
    ['base', rt.allocsCrossCheck.base],
    ['target', rt.allocsCrossCheck.target],
  ].filter(([, v]) => v !== null) as [string, number][];
  if (cross.length > 0)
    lines.push(
      `Allocated bytes per request, runtime metrics ÷ allocs profile: ${cross.map(([k, v]) => `${k} ${formatRatio(v)}`).join(', ')}.`,
    );
  return `${lines.join('\n\n')}\n\n${mdDetails(['Every runtime figure'], rt.figures.map(changeLine).join('\n') || 'none measured')}`;
}

/**
 * The report as Markdown for a job summary or a PR comment: the verdict and what changed first, then the
 * stage table and the diff image, the rest folded. Shortens the folded tables until the whole fits
 * MARKDOWN_LIMIT.
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
  out.push(`## stagediff: ${mdText(r.base.name)} → ${mdText(r.target.name)}`);
  out.push(
    `**${mdText(r.comparison.title)}**${r.comparison.url ? ` · [open in stagediff](${encodeURI(r.comparison.url)})` : ''}`,
  );
  const s = r.summary;
  const parts = [
    `${s.improvements} significant improvement${s.improvements === 1 ? '' : 's'}`,
    `${s.regressions} significant regression${s.regressions === 1 ? '' : 's'}`,
    `${s.noChange} within the noise`,
  ];
  if (s.tooFewRuns) parts.push(`${s.tooFewRuns} with too few runs to test`);
  if (s.singleRun) parts.push(`${s.singleRun} from a single run`);
  if (s.notComparable) parts.push(`${s.notComparable} not comparable (different load)`);
  out.push(`${s.regressions > 0 ? '🔴' : s.improvements > 0 ? '🟢' : '⚪'} ${parts.join(' · ')}`);
  if (r.conditions.warning) out.push(`> ⚠️ ${mdText(r.conditions.warning)}`);

  out.push('### What changed');
  if (r.sentences.length === 0) out.push('No figures to compare.');
  // The tail's sentence names several parts and a goroutine: kept whole, up to 1,200 characters.
  else out.push(r.sentences.map((x) => `- ${mdText(x, x === r.tail?.sentence ? 1200 : 300)}`).join('\n'));
  const benchSig = (r.benchmarks?.rows ?? []).filter((c) => c.verdict.status === 'significant');
  out.push(
    mdDetails(
      ['Every figure'],
      [...r.changes, ...benchSig.slice(0, Math.max(limit, 1))].map(changeLine).join('\n') ||
        'none measured on both sides',
    ),
  );
  for (const n of r.notes) out.push(`> ${mdText(n)}`);

  if (r.code) out.push(codeChangeMd(r.code, limit));

  if (r.runtime) out.push(runtimeMd(r.runtime));

  out.push('### Stages');
  out.push(stageTableMd(r));
  if (r.changePoints.length > 0) {
    out.push('#### Change points');
    out.push(
      r.changePoints
        .map((p) => {
          const f = FIGURES[p.figure];
          return `- ${p.direction === 'worse' ? '🔴' : '🟢'} **${mdText(f.label)}** shifts between ${mdText(p.previousStageName)} and ${mdText(p.stageName)}: ${formatValue(p.meanBefore, f.unit)} → ${formatValue(p.meanAfter, f.unit)} (${formatChange(p.meanAfter / p.meanBefore)}, p=${p.pValue.toPrecision(2)}, E-Divisive over the stages' medians)`;
        })
        .join('\n'),
    );
  }

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
        mdDetails(
          [
            'Top functions by Δ flat ',
            { code: t.sampleType },
            `${t.mode === 'per-request' ? ' per request' : ''} (${Math.min(limit, t.rows.length)} of ${t.rowsTotal})`,
          ],
          topMd(r, limit),
        ),
      );
  }
  if (r.gc) out.push(mdDetails(['GC (from GODEBUG=gctrace=1)'], gcMd(r)));
  if (r.benchmarks) {
    if (!r.benchmarks.comparable && r.benchmarks.reason) out.push(`> ${mdText(r.benchmarks.reason)}`);
    else if (limit > 0)
      out.push(
        mdDetails(
          [`Benchmarks: benchstat (${Math.min(limit, r.benchmarks.rows.length)} of ${r.benchmarks.rows.length})`],
          benchMd(r, limit),
        ),
      );
  }
  out.push(
    '<sub>Verdicts: Mann–Whitney U test at α = 0.05 over the runs of each stage, as benchstat computes them; ~ means within the noise. Made by <code>stagediff report</code>.</sub>',
  );
  return `${out.join('\n\n')}\n`;
}
