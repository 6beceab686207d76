/**
 * The source view: one function's lines in two stages. The figures are the diff's at line granularity
 * (each `fn file:line` row, in the diff's mode, with its verdict); each stage's file comes from its own
 * stored sources, matched by module-relative suffix, and the two versions are aligned by a line diff.
 */
import type { Query } from '../api/endpoints.ts';
import type { DiffRow, SourceRow, SourceView } from '../api/views.ts';
import { SourceIndex } from '../sources/match.ts';
import { alignLines, splitLines } from '../sources/line-diff.ts';
import type { ComparisonTree, StageWithArtifacts } from '../store/index.ts';
import type { AnalysisService } from './analysis.ts';
import { loadStageSources } from './sources.ts';
import { findStage } from './stage-profiles.ts';
import { choice, compileFilters } from './view-queries.ts';

/** Lines shown around the function's sampled lines. */
const CONTEXT = 3;
/** How far above its first sampled line the function's `func` line is looked for. */
const FUNC_LOOKBACK = 300;

interface Place {
  file: string;
  line: number;
  row: DiffRow;
}

/** The function's rows, by file and line, out of a diff at line granularity. */
function functionPlaces(rows: readonly DiffRow[], fn: string): Place[] {
  const out: Place[] = [];
  for (const row of rows) {
    if (!row.name.startsWith(`${fn} `)) continue;
    const m = /^(.*):(\d+)$/.exec(row.name.slice(fn.length + 1));
    if (m) out.push({ file: m[1]!, line: Number(m[2]), row });
  }
  return out.sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : a.line - b.line));
}

/** The file a side's samples of the function fall in most (by cum), or null when none do. */
function mainFile(places: Place[], side: 'base' | 'target'): string | null {
  const byFile = new Map<string, number>();
  for (const p of places) {
    const v = Math.abs(p.row[side].cum) + Math.abs(p.row[side].flat);
    if (v > 0) byFile.set(p.file, (byFile.get(p.file) ?? 0) + v);
  }
  let best: string | null = null;
  for (const [f, v] of byFile)
    if (best === null || v > byFile.get(best)! || (v === byFile.get(best)! && f < best)) best = f;
  return best;
}

interface Side {
  stage: StageWithArtifacts;
  file: string | null;
  path: string | null;
  lines: string[] | null;
  hasSources: boolean;
  revision: string;
  dirty: boolean | null;
  /** line → figures, in `file`. */
  figures: Map<number, { flat: number; cum: number; row: DiffRow }>;
}

async function side(
  svc: AnalysisService,
  tree: ComparisonTree,
  stage: StageWithArtifacts,
  places: Place[],
  which: 'base' | 'target',
): Promise<Side> {
  const file = mainFile(places, which);
  const figures = new Map<number, { flat: number; cum: number; row: DiffRow }>();
  for (const p of places)
    if (p.file === file) figures.set(p.line, { flat: p.row[which].flat, cum: p.row[which].cum, row: p.row });
  const loaded = await loadStageSources(svc.store, tree.comparison.id, stage.id);
  let path: string | null = null;
  let lines: string[] | null = null;
  if (loaded && file !== null) {
    path = new SourceIndex(loaded.files.keys()).match(file);
    if (path !== null) lines = splitLines(loaded.files.get(path)!.toString('utf8'));
  }
  return {
    stage,
    file,
    path,
    lines,
    hasSources: loaded !== null,
    revision: loaded?.sources.revision ?? '',
    dirty: loaded?.sources.dirty ?? null,
    figures,
  };
}

/** The lines of a side worth showing: its sampled lines with context, from the function's `func` line. */
function window(s: Side): [number, number] | null {
  if (!s.lines || s.figures.size === 0) return null;
  const sampled = [...s.figures.keys()].filter((l) => l >= 1 && l <= s.lines!.length);
  if (sampled.length === 0) return null;
  let lo = Math.min(...sampled);
  const hi = Math.min(s.lines.length, Math.max(...sampled) + CONTEXT);
  for (let l = lo; l >= Math.max(1, lo - FUNC_LOOKBACK); l--)
    if (/^func\b/.test(s.lines[l - 1]!)) {
      lo = l;
      break;
    }
  return [Math.max(1, lo - (lo === Math.min(...sampled) ? CONTEXT : 0)), hi];
}

function figuresAt(s: Side, line: number): { line: number; flat: number; cum: number } {
  const f = s.figures.get(line);
  return { line, flat: f?.flat ?? 0, cum: f?.cum ?? 0 };
}

function verdictOf(row: DiffRow | undefined): SourceRow['verdict'] {
  return row?.verdict ?? null;
}

export async function sourceView(svc: AnalysisService, tree: ComparisonTree, q: Query<'source'>): Promise<SourceView> {
  const d = (
    await svc.diffResult(tree, {
      base: q.base,
      target: q.target,
      ...choice(q),
      mode: q.mode ?? 'auto',
      root: [],
      minFraction: 0,
      maxNodes: 1,
      filters: compileFilters(q),
      granularity: 'lines',
    })
  ).view;
  const places = functionPlaces(d.top, q.fn);
  const base = await side(svc, tree, findStage(tree, q.base, 'base'), places, 'base');
  const target = await side(svc, tree, findStage(tree, q.target, 'target'), places, 'target');
  const rows: SourceRow[] = [];
  const wb = window(base);
  const wt = window(target);
  const aligned = base.lines !== null && target.lines !== null && (wb !== null || wt !== null);
  if (aligned) {
    const all = alignLines(base.lines!, target.lines!);
    const inB = (l: number) => wb !== null && l >= wb[0] && l <= wb[1];
    const inT = (l: number) => wt !== null && l >= wt[0] && l <= wt[1];
    let first = -1;
    let last = -1;
    all.forEach((r, i) => {
      const hit = (r.kind !== 'added' && inB(r.a + 1)) || (r.kind !== 'removed' && inT(r.b + 1));
      if (hit) {
        if (first < 0) first = i;
        last = i;
      }
    });
    const sameKey = base.file === target.file;
    for (const r of first < 0 ? [] : all.slice(first, last + 1)) {
      const b = r.kind !== 'added' ? figuresAt(base, r.a + 1) : null;
      const t = r.kind !== 'removed' ? figuresAt(target, r.b + 1) : null;
      const verdict =
        r.kind === 'same' && sameKey && r.a === r.b
          ? verdictOf(target.figures.get(r.b + 1)?.row ?? base.figures.get(r.a + 1)?.row)
          : null;
      rows.push({
        change: r.kind,
        file: null,
        base: b,
        target: t,
        baseText: r.kind !== 'added' ? base.lines![r.a]! : null,
        targetText: r.kind !== 'removed' ? target.lines![r.b]! : null,
        deltaFlat: (t?.flat ?? 0) - (b?.flat ?? 0),
        deltaCum: (t?.cum ?? 0) - (b?.cum ?? 0),
        verdict,
      });
    }
  } else {
    const textOf = (s: Side, file: string, line: number): string | null =>
      s.lines && s.file === file && line >= 1 && line <= s.lines.length ? s.lines[line - 1]! : null;
    for (const p of places)
      rows.push({
        change: 'unaligned',
        file: p.file,
        base: { line: p.line, flat: p.row.base.flat, cum: p.row.base.cum },
        target: { line: p.line, flat: p.row.target.flat, cum: p.row.target.cum },
        baseText: textOf(base, p.file, p.line),
        targetText: textOf(target, p.file, p.line),
        deltaFlat: p.row.deltaFlat,
        deltaCum: p.row.deltaCum,
        verdict: verdictOf(p.row),
      });
  }
  const out = (s: Side) => ({
    stageId: s.stage.id,
    stageName: s.stage.name,
    file: s.file,
    path: s.path,
    hasSources: s.hasSources,
    revision: s.revision,
    dirty: s.dirty,
  });
  return {
    fn: q.fn,
    mode: d.mode,
    modeReason: d.modeReason,
    kind: d.kind,
    unit: d.unit,
    sampleType: d.sampleType,
    perRequest: d.perRequest,
    noise: d.noise,
    base: out(base),
    target: out(target),
    aligned,
    rows,
  };
}
