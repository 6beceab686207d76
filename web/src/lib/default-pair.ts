import type { StageTable } from './api.ts';

/**
 * The stage whose change against the previous stage is the largest significant one of the stage table
 * (by the size of its ratio either way, |ln ratio|, over every figure the engine judged): the pair the
 * page opens on when the address names none. Null when no change is significant (the page then opens on
 * the last two stages).
 */
export function largestChangeTarget(table: Pick<StageTable, 'rows'> | null): string | null {
  if (!table) return null;
  let best: { stageId: string; size: number } | null = null;
  for (const row of table.rows) {
    if (!row.vsPrevious) continue;
    for (const v of Object.values(row.vsPrevious)) {
      if (v.status !== 'significant' || v.ratio === null || !(v.ratio > 0)) continue;
      const size = Math.abs(Math.log(v.ratio));
      if (!best || size > best.size) best = { stageId: row.stageId, size };
    }
  }
  return best?.stageId ?? null;
}
