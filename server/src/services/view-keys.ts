import type { AnalysisOp } from './analysis-ops.ts';
import { FILTERS } from '../api/options.ts';
import { filterArgs } from './view-queries.ts';
import { ServiceError } from './errors.ts';

/** Steps of the diff image's noise floor: the slider of the diff view moves by these. */
export const NOISE_STEP = 0.0005;
/** Steps of an image's width, pixels. */
export const WIDTH_STEP = 100;

/** A view as it is computed and cached: parameters normalised, its cache key, and what it costs its client. */
export interface CanonicalView {
  op: AnalysisOp;
  /** The same for every request that asks for the same answer (parameter order, spelling, defaults, steps). */
  key: string;
  /** Charged to the client's per-minute budget: 1 for a JSON or text view, more for a wide image. */
  cost: number;
}

const IMAGE_OPS = new Set(['flamegraphSvg', 'flamegraphPng', 'diffSvg', 'diffPng']);

/** A number on a grid of `step`, without the float noise of the division (0.0015, not 0.0015000000000000002). */
function onGrid(v: number, step: number): number {
  return Number((Math.round(v / step) * step).toFixed(10));
}

/**
 * Normalises a view's query (as validation left it: coerced, defaults filled in) so near-identical URLs
 * share one answer: each filter is one expression (repeats joined with "|", empty ones dropped), the
 * noise floor and the width fall on the steps the UI offers, parameters an image ignores are dropped,
 * and the key lists the parameters in a fixed order. A width over `maxWidth` is refused naming it.
 */
export function canonicalView(op: AnalysisOp, maxWidth: number): CanonicalView {
  if (!('query' in op)) return { op, key: op.op, cost: 1 };
  const q: Record<string, unknown> = { ...op.query };
  for (const name of FILTERS) delete q[name];
  Object.assign(q, filterArgs(op.query as Parameters<typeof filterArgs>[0]));
  let cost = 1;
  if (IMAGE_OPS.has(op.op)) {
    delete q.limit;
    delete q.sort;
    const width = Number(q.width ?? 1200);
    if (width > maxWidth)
      throw new ServiceError(
        'invalid-request',
        `width must be at most ${maxWidth} pixels on this server (IMAGE_MAX_WIDTH), got ${width}`,
        { param: 'width' },
      );
    q.width = Math.min(maxWidth, Math.max(WIDTH_STEP * 3, onGrid(width, WIDTH_STEP)));
    if (q.noise !== undefined) q.noise = onGrid(Number(q.noise), NOISE_STEP);
    // Rendering grows with the width, and rasterising costs about as much again.
    cost = Math.ceil((q.width as number) / 1000) * (op.op.endsWith('Png') ? 2 : 1);
  }
  for (const k of Object.keys(q)) if (q[k] === undefined || q[k] === '') delete q[k];
  // A list (a call path's frames) is one parameter per value, in order: frame names may hold commas.
  // What the operation names besides its query (a stage's profile names its stage) is part of the key.
  const { query: _query, op: name, ...named } = op as AnalysisOp & { query: unknown };
  const prefix = [name, ...Object.values(named).map((v) => encodeURIComponent(String(v)))].join('/');
  const key = `${prefix}?${Object.keys(q)
    .sort()
    .flatMap((k) => {
      const v = q[k];
      return (Array.isArray(v) ? v : [v]).map((x) => `${encodeURIComponent(k)}=${encodeURIComponent(String(x))}`);
    })
    .join('&')}`;
  return { op: { ...op, query: q } as AnalysisOp, key, cost };
}
