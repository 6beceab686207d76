import { choose } from '../analysis/benchstat.ts';
import { type Verdict, verdict } from '../analysis/significance.ts';
import type { ComparisonSource } from './comparison-source.ts';

/*
 * "The change of metric M between stages A and B, with its verdict": the one place `report` and
 * `check` read verdicts from. Verdicts are the server's: its stage table's tests (against the first
 * and the previous stage) and benchstat's comparison of go test -bench output. For a pair the stage
 * table does not test, and for CPU per request in total, the same test (significance.ts's `verdict`)
 * runs here on the per-run figures the API lists, chosen the way the server chooses them.
 */

/** A verdict as the server's stage table gives it (per figure, against the previous and the first stage). */
export interface ServerVerdict {
  status: 'significant' | 'no-change' | 'need-more-runs' | 'single-run' | 'missing';
  significant: boolean;
  ratio: number | null;
  p: number | null;
  nBase: number;
  nTarget: number;
}

type Figure = 'rps' | 'p50' | 'p95' | 'p99';
type Verdicts = Record<Figure, ServerVerdict>;

interface RunEstimate {
  n: number;
  median: number;
  ci: number | null;
}

/** A stage-table row as GET /api/comparisons/:id returns it (fields of older servers optional). */
export interface StageRow {
  stageId: string;
  name: string;
  note: string;
  rps: number | null;
  requests: number | null;
  errors: number | null;
  latencyMs: { p50: number | null; p95: number | null; p99: number | null };
  loadTests: number;
  aggregated?: boolean;
  summary?: 'single-run' | 'median' | 'aggregate' | 'none';
  estimates?: Record<Figure, RunEstimate | null> | null;
  significance?: { vsPrevious: Verdicts | null; vsBaseline: Verdicts | null };
  /** The runs behind the figures, in upload order. */
  runs?: { rps: number | null; latencyMs: { p50: number | null; p95: number | null; p99: number | null } }[];
  source?: { format: string | null };
}

export interface ComparisonView {
  id: string;
  title: string;
  description: string;
  url: string;
  stages: {
    id: string;
    name: string;
    note: string;
    artifacts: { kind: string; format: string; filename: string; summary: unknown }[];
  }[];
  stageTable: StageRow[];
}

/**
 * How a change reads:
 * - `significant`: the server's test found it (p ≤ α);
 * - `within-noise`: tested and not significant (benchstat's "~");
 * - `too-few-runs`: a side has too few runs for the test to ever reach α (one run: no noise estimate);
 * - `not-tested`: the server gives no verdict for this pair of stages or this figure;
 * - `missing`: a side lacks the figure.
 */
export type Judgement = 'significant' | 'within-noise' | 'too-few-runs' | 'not-tested' | 'missing';

/** One figure compared between the base and the target stage. Values in `unit`; ratio = target / base. */
export interface Change {
  /** `rps`, `p50`, `p95`, `p99`, `cpu-per-request`, or `bench:UNIT` (with `subject` naming the benchmark). */
  metric: string;
  label: string;
  subject: string | null;
  unit: string;
  better: 'higher' | 'lower';
  base: number | null;
  target: number | null;
  ratio: number | null;
  deltaPercent: number | null;
  /** Relative half-width of each side's 95 % interval (0.05 = ±5 %), null when not estimated. */
  ciBase: number | null;
  ciTarget: number | null;
  judgement: Judgement;
  p: number | null;
  nBase: number;
  nTarget: number;
  /** Why there is no verdict, in words (for `too-few-runs` and `not-tested`). */
  reason: string | null;
  /** Only for significant changes: whether the change goes the good way. */
  direction: 'improvement' | 'regression' | null;
}

const FIGURES: { metric: Figure; label: string; unit: string; better: 'higher' | 'lower' }[] = [
  { metric: 'rps', label: 'QPS', unit: 'req/s', better: 'higher' },
  { metric: 'p50', label: 'P50', unit: 'ms', better: 'lower' },
  { metric: 'p95', label: 'P95', unit: 'ms', better: 'lower' },
  { metric: 'p99', label: 'P99', unit: 'ms', better: 'lower' },
];

function figure(row: StageRow, k: Figure): number | null {
  return k === 'rps' ? row.rps : row.latencyMs[k];
}

/**
 * The per-run values the server's test compares for a row: each run's figure for repeated runs
 * (`median` rows); a row of one run, or an aggregate of runs with different settings, stands alone.
 */
function perRun(row: StageRow, k: Figure): (number | null)[] {
  if (row.summary === 'median' && row.runs) return row.runs.map((r) => (k === 'rps' ? r.rps : r.latencyMs[k]));
  const v = figure(row, k);
  return v === null ? [] : [v];
}

function judge(v: ServerVerdict | Verdict): { judgement: Judgement; reason: string | null } {
  switch (v.status) {
    case 'significant':
      return { judgement: 'significant', reason: null };
    case 'no-change':
      return { judgement: 'within-noise', reason: null };
    case 'need-more-runs':
      return {
        judgement: 'too-few-runs',
        reason: `${v.nBase}+${v.nTarget} runs: too few for the test to reach significance (need ≥ 4 per stage)`,
      };
    case 'single-run':
      return { judgement: 'too-few-runs', reason: '1 run: no noise estimate' };
    default:
      return { judgement: 'missing', reason: null };
  }
}

function finish(c: Omit<Change, 'deltaPercent' | 'direction' | 'ratio'> & { ratio?: number | null }): Change {
  const ratio = c.ratio ?? (c.base !== null && c.target !== null && c.base !== 0 ? c.target / c.base : null);
  const deltaPercent = ratio === null ? null : (ratio - 1) * 100;
  const direction =
    c.judgement === 'significant' && ratio !== null && ratio !== 1
      ? ratio > 1 === (c.better === 'higher')
        ? 'improvement'
        : 'regression'
      : null;
  return { ...c, ratio, deltaPercent, direction };
}

/**
 * The server's verdicts for base → target: the target row's tests against the first stage or the
 * previous one, whichever the base is. Other pairs get `not-tested`.
 */
export function loadTestChanges(table: StageRow[], baseId: string, targetId: string): Change[] {
  const bi = table.findIndex((r) => r.stageId === baseId);
  const ti = table.findIndex((r) => r.stageId === targetId);
  const base = table[bi];
  const target = table[ti];
  if (!base || !target) return [];
  const sig = target.significance;
  const verdicts = !sig ? undefined : bi === 0 ? sig.vsBaseline : bi === ti - 1 ? sig.vsPrevious : undefined;
  return FIGURES.map((f) => {
    const b = figure(base, f.metric);
    const t = figure(target, f.metric);
    const common = {
      metric: f.metric,
      label: f.label,
      subject: null,
      unit: f.unit,
      better: f.better,
      base: b,
      target: t,
      ciBase: base.estimates?.[f.metric]?.ci ?? null,
      ciTarget: target.estimates?.[f.metric]?.ci ?? null,
    };
    if (b === null || t === null)
      return finish({
        ...common,
        judgement: 'missing',
        p: null,
        nBase: base.loadTests,
        nTarget: target.loadTests,
        reason: null,
      });
    const v = verdicts?.[f.metric] ?? (sig ? verdict(perRun(base, f.metric), perRun(target, f.metric)) : undefined);
    if (v) return finish({ ...common, ratio: v.ratio, ...judge(v), p: v.p, nBase: v.nBase, nTarget: v.nTarget });
    // No verdict from the server for this pair. With one run on a side nothing could be significant.
    const single = base.loadTests <= 1 || target.loadTests <= 1;
    return finish({
      ...common,
      judgement: single ? 'too-few-runs' : 'not-tested',
      reason: single
        ? '1 run: no noise estimate'
        : sig
          ? `the server tests each stage against the first and the previous stage only, not ${base.name} → ${target.name}`
          : 'this server gives no verdicts',
      p: null,
      nBase: base.loadTests,
      nTarget: target.loadTests,
    });
  });
}

/** GET …/diff in the mode the report uses (the fields read here). */
export interface DiffView {
  mode: string;
  unit: string;
  sampleType: string;
  baseTotal: number;
  targetTotal: number;
  scale: { base: number; target: number };
  warnings: string[];
  perRequest: { method: string } | null;
  noise?: { nBase: number; nTarget: number } | null;
  rowsTotal: number;
  top: {
    name: string;
    base: { flat: number; cum: number };
    target: { flat: number; cum: number };
    deltaFlat: number;
    deltaCum: number;
    status: string;
    noise?: {
      flat: { status: ServerVerdict['status']; p: number | null };
      cum: { status: ServerVerdict['status']; p: number | null };
    } | null;
  }[];
}

/** A stage's CPU profiles as the API lists them: total CPU time (ns) and duration (ns) each, in upload order. */
interface CpuProfileFigures {
  totals: number[];
  durations: number[];
}

function cpuProfiles(st: ComparisonView['stages'][number]): CpuProfileFigures {
  const totals: number[] = [];
  const durations: number[] = [];
  for (const a of st.artifacts) {
    const s = a.summary as { totals?: Record<string, number>; durationNanos?: number } | null;
    if (a.kind !== 'profile' || s?.totals?.cpu === undefined) continue;
    totals.push(s.totals.cpu);
    durations.push(s.durationNanos ?? 0);
  }
  return { totals, durations };
}

/**
 * Each CPU profile's time per request: its total over the requests its run served while it was taken
 * (that run's req/s × the profile's duration). Profiles pair with the stage's runs in upload order,
 * as the server pairs them for its per-function tests, so it needs one run per profile.
 */
function cpuPerRequestRuns(p: CpuProfileFigures, row: StageRow | undefined): number[] | null {
  const runs = row?.runs ?? [];
  if (p.totals.length < 2 || runs.length !== p.totals.length) return null;
  const out: number[] = [];
  for (let i = 0; i < p.totals.length; i++) {
    const requests = (runs[i]!.rps ?? 0) * (p.durations[i]! / 1e9);
    if (!(requests > 0)) return null;
    out.push(p.totals[i]! / requests);
  }
  return out;
}

/** CPU time per request: the figures of the per-request CPU diff, the verdict over the stages' profiles. */
export function cpuPerRequestChange(
  diff: DiffView,
  sides: { base: CpuProfileFigures; target: CpuProfileFigures; baseRow?: StageRow; targetRow?: StageRow },
): Change {
  const nBase = sides.base.totals.length;
  const nTarget = sides.target.totals.length;
  const common = {
    metric: 'cpu-per-request',
    label: 'CPU per request',
    subject: null,
    unit: diff.unit,
    better: 'lower' as const,
    // Totals of a per-request diff are already per request.
    base: diff.baseTotal,
    target: diff.targetTotal,
    ciBase: null,
    ciTarget: null,
  };
  if (nBase <= 1 || nTarget <= 1)
    return finish({
      ...common,
      judgement: 'too-few-runs',
      reason: '1 CPU profile: no noise estimate',
      p: null,
      nBase,
      nTarget,
    });
  const b = cpuPerRequestRuns(sides.base, sides.baseRow);
  const t = cpuPerRequestRuns(sides.target, sides.targetRow);
  if (!b || !t)
    return finish({
      ...common,
      judgement: 'not-tested',
      reason: 'the CPU profiles cannot be paired with load-test runs (one run per profile)',
      p: null,
      nBase,
      nTarget,
    });
  const v = verdict(b, t);
  return finish({ ...common, ...judge(v), p: v.p, nBase: v.nBase, nTarget: v.nTarget });
}

/** GET …/benchmarks (benchstat's comparison of the stages' go test -bench outputs). */
export interface BenchmarkView {
  alpha: number;
  rows: {
    pkg: string;
    name: string;
    unit: string;
    base: { median: number; ci: number | null };
    target: { median: number; ci: number | null };
    deltaPercent: number | null;
    p: number;
    nBase: number;
    nTarget: number;
    significant: boolean;
  }[];
}

/** Units where more is better (throughput); everything else (sec/op, B/op, allocs/op, …) is a cost. */
function higherIsBetter(unit: string): boolean {
  return /\/s$/.test(unit);
}

/** benchstat's verdict per benchmark and unit, as changes (`bench:UNIT`, subject = benchmark name). */
export function benchmarkChanges(b: BenchmarkView): Change[] {
  return b.rows.map((r) => {
    // benchstat's "need >= N samples": even the most extreme ordering of the runs could not reach α.
    const tooFew = !r.significant && 2 / choose(r.nBase + r.nTarget, r.nBase) > b.alpha;
    return finish({
      metric: `bench:${r.unit}`,
      label: r.unit,
      subject: r.pkg ? `${r.pkg}.${r.name}` : r.name,
      unit: r.unit,
      better: higherIsBetter(r.unit) ? 'higher' : 'lower',
      base: r.base.median,
      target: r.target.median,
      ...(r.deltaPercent !== null ? { ratio: 1 + r.deltaPercent / 100 } : {}),
      ciBase: r.base.ci,
      ciTarget: r.target.ci,
      judgement: r.significant ? 'significant' : tooFew ? 'too-few-runs' : 'within-noise',
      reason: tooFew ? `${r.nBase}+${r.nTarget} runs: too few for benchstat to detect a difference` : null,
      p: r.p,
      nBase: r.nBase,
      nTarget: r.nTarget,
    });
  });
}

/** Resolves STAGE (a name or an id) in a comparison; defaults pick the first and the last stage. */
export function resolveStage(c: ComparisonView, which: 'base' | 'target', given: string | undefined) {
  if (c.stages.length === 0) throw new Error(`comparison ${c.id} has no stages`);
  if (given === undefined) return which === 'base' ? c.stages[0]! : c.stages[c.stages.length - 1]!;
  const hit = c.stages.find((s) => s.id === given) ?? c.stages.find((s) => s.name === given);
  if (!hit) throw new Error(`--${which} ${given}: no such stage (stages: ${c.stages.map((s) => s.name).join(', ')})`);
  return hit;
}

/** Everything report and check read from the source for one base → target pair. */
export interface PairData {
  comparison: ComparisonView;
  base: ComparisonView['stages'][number];
  target: ComparisonView['stages'][number];
  loadTests: Change[];
  cpuPerRequest: Change | null;
  diff: DiffView | null;
  diffQuery: string | null;
  benchmarks: BenchmarkView | null;
  benchmarkChanges: Change[];
  gc: {
    stages: { stageId: string; name: string; traces: { filename: string; trace: { summary: GcSummary } }[] }[];
  } | null;
}

export interface GcSummary {
  cycles: number;
  forcedCycles: number;
  stwPauseMs: { total: number; p50: number; p99: number; max: number };
  maxHeapMb: number;
}

export async function readPair(
  src: ComparisonSource,
  opts: { base?: string; target?: string; sampleType?: string; top: number },
): Promise<PairData> {
  const id = encodeURIComponent(src.comparisonId);
  const comparison = await src.get<ComparisonView>(`/api/comparisons/${id}`);
  const base = resolveStage(comparison, 'base', opts.base);
  const target = resolveStage(comparison, 'target', opts.target);
  if (base.id === target.id) throw new Error(`--base and --target are the same stage (${base.name})`);
  const hasLoad = (s: typeof base) => s.artifacts.some((a) => a.kind === 'loadtest');
  const mode = hasLoad(base) && hasLoad(target) ? 'per-request' : 'absolute';
  const q = new URLSearchParams({ base: base.id, target: target.id, mode });
  if (opts.sampleType) q.set('sampleType', opts.sampleType);
  const diffQuery = q.toString();
  const diff = await src.getOptional<DiffView>(
    `/api/comparisons/${id}/diff?${diffQuery}&limit=${opts.top}&minFraction=0.0001`,
  );
  // CPU per request from the CPU profiles, whatever sample type the report's table shows.
  const cpuQ = new URLSearchParams({ base: base.id, target: target.id, mode: 'per-request', sampleType: 'cpu' });
  const cpuDiff =
    mode === 'per-request'
      ? diff?.sampleType === 'cpu' && diff.mode === 'per-request'
        ? diff
        : await src.getOptional<DiffView>(`/api/comparisons/${id}/diff?${cpuQ}&limit=1`)
      : null;
  const benchmarks = await src.getOptional<BenchmarkView>(
    `/api/comparisons/${id}/benchmarks?base=${encodeURIComponent(base.id)}&target=${encodeURIComponent(target.id)}`,
  );
  const gc = await src.getOptional<PairData['gc']>(`/api/comparisons/${id}/gc`);
  return {
    comparison,
    base,
    target,
    loadTests: loadTestChanges(comparison.stageTable, base.id, target.id),
    cpuPerRequest: cpuDiff
      ? cpuPerRequestChange(cpuDiff, {
          base: cpuProfiles(base),
          target: cpuProfiles(target),
          baseRow: comparison.stageTable.find((r) => r.stageId === base.id),
          targetRow: comparison.stageTable.find((r) => r.stageId === target.id),
        })
      : null,
    diff,
    diffQuery: diff ? diffQuery : null,
    benchmarks,
    benchmarkChanges: benchmarks ? benchmarkChanges(benchmarks) : [],
    gc,
  };
}
