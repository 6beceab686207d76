import type { ChangePointMark, FigureKey, StageRow } from '../api/changes.ts';
import { FIGURES } from '../api/labels.ts';
import { type ChangePointOptions, changePoints } from '../analysis/change-points.ts';

/** The figures a series of stages is searched for change points in (the QPS, P99, CPU/request). */
export const CHANGE_POINT_FIGURES: readonly FigureKey[] = ['rps', 'p99', 'cpuPerRequest'];

/**
 * Below this many stages with a figure, no change point is looked for: the t-test between two short
 * segments cannot reach the default p ≤ 0.001, and a pair of stages is the stage table's own job.
 */
export const CHANGE_POINT_MIN_STAGES = 6;

/**
 * The change points of each figure over a comparison's stages, in stage order: the series is the
 * stages' medians (stages without the figure are left out of it, not counted as zero).
 */
export function stageChangePoints(
  rows: readonly Pick<StageRow, 'stageId' | 'name' | 'figures'>[],
  opts: ChangePointOptions = {},
): ChangePointMark[] {
  const out: ChangePointMark[] = [];
  for (const figure of CHANGE_POINT_FIGURES) {
    const at: number[] = [];
    const series: number[] = [];
    rows.forEach((r, i) => {
      const e = r.figures[figure];
      if (e && Number.isFinite(e.median)) {
        at.push(i);
        series.push(e.median);
      }
    });
    if (series.length < CHANGE_POINT_MIN_STAGES) continue;
    const better = FIGURES[figure].better;
    for (const cp of changePoints(series, opts)) {
      const row = rows[at[cp.index]!]!;
      const prev = rows[at[cp.index - 1]!]!;
      const up = cp.meanAfter > cp.meanBefore;
      out.push({
        figure,
        stageId: row.stageId,
        stageName: row.name,
        previousStageId: prev.stageId,
        previousStageName: prev.name,
        pValue: cp.pValue,
        meanBefore: cp.meanBefore,
        meanAfter: cp.meanAfter,
        changePercent: cp.forwardChangePercent,
        direction: up === (better === 'higher') ? 'better' : 'worse',
      });
    }
  }
  return out;
}

/**
 * The marks a pair of stages straddles: those whose shift lies between the two (the mark's first stage
 * after the change is after the earlier of the pair and not after the later), in either order of the pair.
 */
export function straddledChangePoints(
  marks: readonly ChangePointMark[],
  stageIds: readonly string[],
  baseId: string,
  targetId: string,
): ChangePointMark[] {
  const b = stageIds.indexOf(baseId);
  const t = stageIds.indexOf(targetId);
  if (b < 0 || t < 0) return [];
  const lo = Math.min(b, t);
  const hi = Math.max(b, t);
  return marks.filter((m) => {
    const at = stageIds.indexOf(m.stageId);
    return at > lo && at <= hi;
  });
}

/** In words, for the pair's sentences: "Change point: QPS shifts for the worse between A and B (−25.0 %, p=1.2e-5)." */
export function changePointSentence(m: ChangePointMark): string {
  const sign = m.changePercent >= 0 ? '+' : '−';
  const pct = `${sign}${Math.abs(m.changePercent).toFixed(1)} %`;
  return `Change point: ${FIGURES[m.figure].label} shifts for the ${m.direction} between ${m.previousStageName} and ${m.stageName} (${pct} in the mean of the stages around it, p=${m.pValue.toPrecision(2)}).`;
}
