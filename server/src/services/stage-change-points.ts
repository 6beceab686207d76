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
export function stageChangePoints(rows: readonly StageRow[], opts: ChangePointOptions = {}): ChangePointMark[] {
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
