import type { ComparisonTree } from '../store/index.ts';
import type { DiffMode } from '../analysis/diff.ts';
import type { FrameFilters } from '../analysis/filter.ts';
import { ApiError, filterRegexp } from '../routes/errors.ts';
import type { AnalysisService } from './analysis.ts';
import { compareNames } from '../analysis/names.ts';
import { renderImageOp } from './images.ts';

/** Filter regular expressions as sent by a client (Go syntax; compiled where the work happens). */
export interface FilterArgs {
  focus?: string;
  ignore?: string;
  hide?: string;
  show?: string;
}

/** pprof's filter parameters, in the order pprof applies them. */
export const FILTER_NAMES = ['focus', 'ignore', 'hide', 'show'] as const;

/** The analysis operations, as plain data so they can cross a worker boundary. */
export type AnalysisOp =
  | { op: 'flamegraph'; stage: string; sampleType?: string; minFraction: number; filters: FilterArgs }
  | {
      op: 'diff';
      base: string;
      target: string;
      sampleType?: string;
      mode: DiffMode;
      minFraction: number;
      limit: number;
      sort: 'flat' | 'cum';
      filters: FilterArgs;
    }
  | { op: 'top'; stage: string; sampleType?: string; filters: FilterArgs }
  | { op: 'trajectory'; sampleType?: string; n: number }
  | { op: 'sandwich'; stage: string; sampleType?: string; fn: string; filters: FilterArgs }
  | { op: 'timeline' }
  | { op: 'folded'; stage: string; sampleType?: string; filters: FilterArgs }
  | { op: 'benchmarks'; base: string; target: string }
  | { op: 'gc' }
  | {
      op: 'flamegraph-image';
      format: ImageFormat;
      width: number;
      stage: string;
      sampleType?: string;
      minFraction: number;
      filters: FilterArgs;
    }
  | {
      op: 'diff-image';
      format: ImageFormat;
      width: number;
      noise: number;
      base: string;
      target: string;
      sampleType?: string;
      mode: DiffMode;
      minFraction: number;
      filters: FilterArgs;
    };

/** Standalone images of the flamegraph views: SVG text, or PNG bytes carried as base64 text. */
export type ImageFormat = 'svg' | 'png';

/** Compiles the filters a client sent; a bad expression is a 400 naming its parameter. */
export function compileFilters(q: FilterArgs): FrameFilters {
  const f: FrameFilters = {};
  for (const name of FILTER_NAMES) {
    const re = filterRegexp(name, q[name]);
    if (re) f[name] = re;
  }
  return f;
}

/** Runs one operation; the result is JSON text (folded stacks: plain text). */
export async function runOp(svc: AnalysisService, tree: ComparisonTree, a: AnalysisOp): Promise<string> {
  switch (a.op) {
    case 'flamegraph':
      return JSON.stringify(
        await svc.flamegraph(tree, a.stage, a.sampleType, a.minFraction, compileFilters(a.filters)),
      );
    case 'diff': {
      const d = await svc.diff(tree, a.base, a.target, a.sampleType, a.mode, a.minFraction, compileFilters(a.filters));
      // Rows come ranked by |Δflat| (pprof's -top order); `sort=cum` ranks by |Δcum| instead.
      const rows =
        a.sort === 'cum'
          ? [...d.top].sort((x, y) => Math.abs(y.deltaCum) - Math.abs(x.deltaCum) || compareNames(x.name, y.name))
          : d.top;
      return JSON.stringify({ ...d, rowsTotal: rows.length, top: rows.slice(0, a.limit) });
    }
    case 'top':
      return JSON.stringify(await svc.top(tree, a.stage, a.sampleType, compileFilters(a.filters)));
    case 'trajectory':
      return JSON.stringify(await svc.trajectory(tree, a.sampleType, a.n));
    case 'sandwich':
      return JSON.stringify(await svc.sandwich(tree, a.stage, a.sampleType, a.fn, compileFilters(a.filters)));
    case 'timeline':
      return JSON.stringify(await svc.timeline(tree));
    case 'folded':
      return svc.folded(tree, a.stage, a.sampleType, compileFilters(a.filters));
    case 'benchmarks':
      return JSON.stringify(await svc.benchmarks(tree, a.base, a.target));
    case 'gc':
      return JSON.stringify(await svc.gc(tree));
    case 'flamegraph-image':
    case 'diff-image':
      return renderImageOp(svc, tree, a);
    default:
      throw new ApiError(400, 'invalid-request', 'unknown analysis operation');
  }
}
