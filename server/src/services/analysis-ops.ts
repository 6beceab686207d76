import fastJsonStringify from 'fast-json-stringify';
import type { ComparisonTree } from '../store/index.ts';
import { compareNames } from '../analysis/names.ts';
import { type Query, SCHEMAS } from '../api/endpoints.ts';
import { DIFF_DEFAULT_ROWS } from '../api/views.ts';
import type { AnalysisService } from './analysis.ts';
import { ChangeEngine } from './changes.ts';
import { ServiceError } from './errors.ts';
import { type ImageOp, renderImageOp } from './images.ts';
import { diffPprof, stagePprof } from './profile-download.ts';
import { sourceView } from './source-view.ts';
import { Unkept } from './view-cache.ts';
import { choice, compileFilters, diffQuery, granularityOf, treeQuery } from './view-queries.ts';
import { fullNamesField, treeNames } from '../analysis/short-names.ts';

/**
 * The analysis endpoints, as plain data so a request can cross to a worker: the endpoint's name and
 * its query exactly as the contract declares it (defaults filled in by validation).
 */
export type AnalysisOp =
  | { op: 'stageTable' }
  | { op: 'timeline' }
  | { op: 'gc' }
  | { op: 'changes'; query: Query<'changes'> }
  | { op: 'flamegraph'; query: Query<'flamegraph'> }
  | { op: 'diff'; query: Query<'diff'> }
  | { op: 'source'; query: Query<'source'> }
  | { op: 'top'; query: Query<'top'> }
  | { op: 'trajectory'; query: Query<'trajectory'> }
  | { op: 'sandwich'; query: Query<'sandwich'> }
  | { op: 'search'; query: Query<'search'> }
  | { op: 'folded'; query: Query<'folded'> }
  | { op: 'benchmarks'; query: Query<'benchmarks'> }
  | { op: 'runtime'; query: Query<'runtime'> }
  | { op: 'stageProfile'; stageId: string; query: Query<'stageProfile'> }
  | { op: 'diffProfile'; query: Query<'diffProfile'> }
  | ImageOp;

export type AnalysisOpName = AnalysisOp['op'];

/*
 * Each view's answer is serialised with its response schema (fast-json-stringify, as the routes'
 * own replies are): the bytes cached and sent are exactly what the contract declares.
 */
const serializers = new Map<string, (v: unknown) => string>();
function serialise(op: keyof typeof SCHEMAS, value: unknown): string {
  let s = serializers.get(op);
  if (!s) {
    s = fastJsonStringify(SCHEMAS[op].response as object) as (v: unknown) => string;
    serializers.set(op, s);
  }
  return s(value);
}

/**
 * Runs one operation; the result is the answer's text (JSON, folded stacks, an SVG, or a PNG or a
 * pprof file in base64), wrapped in Unkept when it must not be cached.
 */
export async function runOp(svc: AnalysisService, tree: ComparisonTree, a: AnalysisOp): Promise<string | Unkept> {
  switch (a.op) {
    case 'stageProfile':
      return (await stagePprof(svc.stages, tree, a.stageId, choice(a.query))).toString('base64');
    case 'diffProfile':
      return (
        await diffPprof(svc.stages, tree, { base: a.query.base, target: a.query.target, ...choice(a.query) })
      ).toString('base64');
    case 'stageTable':
      return serialise(a.op, await new ChangeEngine(svc).stageTable(tree));
    case 'changes':
      return serialise(
        a.op,
        await new ChangeEngine(svc).changes(tree, {
          base: a.query.base,
          target: a.query.target,
          ...(a.query.kind ? { kind: a.query.kind } : {}),
          functions: a.query.functions ?? 'auto',
        }),
      );
    case 'flamegraph':
      return serialise(a.op, await svc.flamegraph(tree, { ...viewQuery(a.query), ...treeQuery(a.query) }));
    case 'diff': {
      const q = a.query;
      const r = await svc.diffResult(tree, diffQuery(q));
      const d = r.view;
      // Rows come ranked by |Δflat| (pprof's -top order); `sort=cum` ranks by |Δcum| instead.
      const rows =
        q.sort === 'cum'
          ? [...d.top].sort((x, y) => Math.abs(y.deltaCum) - Math.abs(x.deltaCum) || compareNames(x.name, y.name))
          : d.top;
      const top = rows.slice(0, q.limit ?? DIFF_DEFAULT_ROWS);
      // the rows' and the drawn tree's (the diff flame graph's hover)
      const named = [...top, ...[...treeNames(d.tree)].map((name) => ({ name }))];
      const names = fullNamesField(d.granularity, [r.base.profile, r.target.profile], named);
      return serialise(a.op, { ...d, rowsTotal: rows.length, top, ...names });
    }
    case 'source': {
      const { view, keep } = await sourceView(svc, tree, a.query);
      const text = serialise(a.op, view);
      return keep ? text : new Unkept(text);
    }
    case 'top':
      return serialise(a.op, await svc.top(tree, viewQuery(a.query)));
    case 'trajectory':
      return serialise(
        a.op,
        await svc.trajectory(tree, { ...choice(a.query), n: a.query.n ?? 10, granularity: granularityOf(a.query) }),
      );
    case 'sandwich':
      return serialise(a.op, await svc.sandwich(tree, { ...viewQuery(a.query), fn: a.query.fn }));
    case 'search':
      return serialise(a.op, await svc.search(tree, a.query, compileFilters(a.query), granularityOf(a.query)));
    case 'timeline':
      return serialise(a.op, await svc.timeline(tree));
    case 'folded':
      return svc.folded(tree, viewQuery(a.query));
    case 'benchmarks':
      return serialise(a.op, await svc.benchmarks(tree, a.query.base, a.query.target));
    case 'gc':
      return serialise(a.op, await svc.gc(tree));
    case 'runtime':
      return serialise(a.op, await new ChangeEngine(svc).runtime(tree, { base: a.query.base, target: a.query.target }));
    case 'flamegraphSvg':
    case 'flamegraphPng':
    case 'diffSvg':
    case 'diffPng':
      return renderImageOp(svc, tree, a);
    default:
      throw new ServiceError('invalid-request', 'unknown analysis operation');
  }
}

function viewQuery(q: Query<'top'>) {
  return { stage: q.stage, ...choice(q), filters: compileFilters(q), granularity: granularityOf(q) };
}
