import fastJsonStringify from 'fast-json-stringify';
import type { ComparisonTree } from '../store/index.ts';
import { compareNames } from '../analysis/names.ts';
import type { TSchema } from 'typebox';
import { type EndpointName, type Params, type Query, SCHEMAS, type Schemas } from '../api/endpoints.ts';
import type { AnalysisService } from './analysis.ts';
import { ChangeEngine } from './changes.ts';
import { ServiceError } from './errors.ts';
import { renderImageOp } from './images.ts';
import { diffPprof, stagePprof } from './profile-download.ts';
import { sourceView } from './source-view.ts';
import { requestsView } from './requests-view.ts';
import { Costly, Unkept } from './view-cache.ts';
import { flamegraphInUnit, sandwichInUnit, trajectoryInUnit } from './view-unit.ts';
import { choice, compileFilters, diffQuery, treeQuery } from './view-queries.ts';
import { fullNamesField, treeNames } from '../analysis/short-names.ts';

/**
 * What an analysis operation carries: its endpoint's name, its query exactly as the contract declares it
 * (defaults filled in by validation) when the endpoint has one, and the stage a stage's download names.
 * Plain data, so a request can cross to a worker.
 */
export type OpOf<N extends EndpointName> = { op: N } & (Schemas[N] extends { querystring: TSchema }
  ? { query: Query<N> }
  : unknown) &
  ('stageId' extends keyof Params<N> ? { stageId: string } : unknown);

/** Computes one view: its answer's text (JSON, folded stacks, an SVG, or a PNG or pprof file in base64). */
type ViewHandler<N extends EndpointName> = (
  svc: AnalysisService,
  tree: ComparisonTree,
  a: OpOf<N>,
) => Promise<string | Unkept | Costly>;

/** The table below, keyed by the endpoints' names: each entry typed by its own name's contract. */
function viewTable<N extends EndpointName>(views: { [K in N]: ViewHandler<K> }): { [K in N]: ViewHandler<K> } {
  return views;
}

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
 * The analysis views, each declared once: the endpoint's name (api/routes.ts, api/endpoints.ts) and the
 * handler computing its answer. The operation type, the routes (routes/analysis.ts) and the workers'
 * dispatch are derived from this table; a view added to the contract and not here has no route (the
 * routes test compares the two).
 */
export const VIEWS = viewTable({
  stageTable: async (svc, tree, a) =>
    serialise('stageTable', await new ChangeEngine(svc).stageTable(tree, { window: a.query.window })),
  changes: async (svc, tree, a) =>
    serialise(
      'changes',
      await new ChangeEngine(svc).changes(tree, {
        base: a.query.base,
        target: a.query.target,
        ...(a.query.kind ? { kind: a.query.kind } : {}),
        functions: a.query.functions,
        window: a.query.window,
      }),
    ),
  flamegraph: async (svc, tree, a) =>
    serialise(
      'flamegraph',
      await flamegraphInUnit(
        svc,
        tree,
        await svc.flamegraph(tree, { ...viewQuery(a.query), ...treeQuery(a.query) }),
        a.query.mode ?? 'auto',
      ),
    ),
  diff: async (svc, tree, a) => {
    const q = a.query;
    const r = await svc.diffResult(tree, diffQuery(q));
    const d = r.view;
    // Rows come ranked by |Δflat| (pprof's -top order); `sort=cum` ranks by |Δcum| instead.
    const rows =
      q.sort === 'cum'
        ? [...d.top].sort((x, y) => Math.abs(y.deltaCum) - Math.abs(x.deltaCum) || compareNames(x.name, y.name))
        : d.top;
    const top = rows.slice(0, q.limit);
    // the rows' and the drawn tree's (the diff flame graph's hover)
    const named = [...top, ...[...treeNames(d.tree)].map((name) => ({ name }))];
    const names = fullNamesField(d.granularity, [r.base.profile, r.target.profile], named);
    return serialise('diff', { ...d, rowsTotal: rows.length, top, ...names });
  },
  source: async (svc, tree, a) => {
    const { view, keep, cost } = await sourceView(svc, tree, a.query);
    const text = serialise('source', view);
    return new Costly(keep ? text : new Unkept(text), cost - 1);
  },
  top: async (svc, tree, a) => serialise('top', await svc.top(tree, viewQuery(a.query))),
  trajectory: async (svc, tree, a) =>
    serialise(
      'trajectory',
      await trajectoryInUnit(
        svc,
        tree,
        await svc.trajectory(tree, { ...choice(a.query), n: a.query.n, granularity: a.query.granularity }),
        a.query.mode ?? 'auto',
        a.query.granularity,
      ),
    ),
  sandwich: async (svc, tree, a) =>
    serialise(
      'sandwich',
      await sandwichInUnit(
        svc,
        tree,
        await svc.sandwich(tree, { ...viewQuery(a.query), fn: a.query.fn }),
        a.query.mode ?? 'auto',
      ),
    ),
  search: async (svc, tree, a) =>
    serialise('search', await svc.search(tree, a.query, compileFilters(a.query), a.query.granularity)),
  timeline: async (svc, tree) => serialise('timeline', await svc.timeline(tree)),
  folded: async (svc, tree, a) => svc.folded(tree, viewQuery(a.query)),
  benchmarks: async (svc, tree, a) => serialise('benchmarks', await svc.benchmarks(tree, a.query.base, a.query.target)),
  gc: async (svc, tree) => serialise('gc', await svc.gc(tree)),
  runtime: async (svc, tree, a) =>
    serialise('runtime', await new ChangeEngine(svc).runtime(tree, { base: a.query.base, target: a.query.target })),
  requests: async (svc, tree, a) =>
    serialise('requests', await requestsView(svc, tree, { base: a.query.base, target: a.query.target })),
  flamegraphSvg: renderImageOp,
  flamegraphPng: renderImageOp,
  diffSvg: renderImageOp,
  diffPng: renderImageOp,
  stageProfile: async (svc, tree, a) =>
    (await stagePprof(svc.stages, tree, a.stageId, choice(a.query))).toString('base64'),
  diffProfile: async (svc, tree, a) =>
    (await diffPprof(svc.stages, tree, { base: a.query.base, target: a.query.target, ...choice(a.query) })).toString(
      'base64',
    ),
});

/** The analysis operations' names: the views of the table above. */
export type AnalysisOpName = keyof typeof VIEWS;
/** One analysis operation, as a request becomes (routes/analysis.ts) and a worker runs it. */
export type AnalysisOp = { [N in AnalysisOpName]: OpOf<N> }[AnalysisOpName];
/** Every view's name, in the table's order. */
export const VIEW_NAMES = Object.keys(VIEWS) as AnalysisOpName[];

/**
 * Runs one operation; the result is the answer's text (JSON, folded stacks, an SVG, or a PNG or a
 * pprof file in base64), wrapped in Unkept when it must not be cached, in Costly when it cost more than
 * its admission said (the source view, by the size of its files).
 */
export async function runOp(
  svc: AnalysisService,
  tree: ComparisonTree,
  a: AnalysisOp,
): Promise<string | Unkept | Costly> {
  // (An operation crosses to a worker as data: a name outside the table is refused, not looked up.)
  if (!Object.hasOwn(VIEWS, a.op)) throw new ServiceError('invalid-request', 'unknown analysis operation');
  return (VIEWS[a.op] as ViewHandler<AnalysisOpName>)(svc, tree, a as OpOf<AnalysisOpName>);
}

function viewQuery(q: Query<'top'>) {
  return { stage: q.stage, ...choice(q), filters: compileFilters(q), granularity: q.granularity };
}
