import type { DiffRow } from '../../../server/src/api/views.ts';

/*
 * The order of the hot-path table (a plain module: the server's tests rank the demo's rows with it).
 */

/** How the hot paths are ranked: as "what changed" ranks, by Δ flat, by Δ cum (most saved first), by |Δ cum|. */
export type HotPathSort = 'changes' | 'flat' | 'cum' | 'abs';

/** What a row needs to be ranked: the contract's diff row, in part. */
export type RankedRow = Pick<DiffRow, 'name' | 'deltaFlat' | 'deltaCum'>;

/**
 * The rows in the chosen order: `changes` puts the functions "what changed" names first, in its order
 * (per-request change, the subtree rule), then the rest by |Δ cum|; `flat`/`cum` by the signed change,
 * the largest saving first; `abs` by |Δ cum|. Ties keep the server's order.
 */
export function sortHotPaths<R extends RankedRow>(
  rows: readonly R[],
  sort: HotPathSort,
  origins: readonly string[] | null,
): R[] {
  const rank = new Map((origins ?? []).map((n, i) => [n, i]));
  const abs = (r: R) => Math.abs(r.deltaCum);
  const order: Record<HotPathSort, (a: R, b: R) => number> = {
    changes: (a, b) =>
      (rank.get(a.name) ?? Number.POSITIVE_INFINITY) - (rank.get(b.name) ?? Number.POSITIVE_INFINITY) ||
      abs(b) - abs(a),
    flat: (a, b) => a.deltaFlat - b.deltaFlat,
    cum: (a, b) => a.deltaCum - b.deltaCum,
    abs: (a, b) => abs(b) - abs(a),
  };
  const keyed = rows.map((r, i) => ({ r, i }));
  keyed.sort((x, y) => order[sort](x.r, y.r) || x.i - y.i);
  return keyed.map((x) => x.r);
}
