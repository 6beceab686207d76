import {
  CHANGE_POINT_MIN_STAGES,
  changePointSentence,
  stageChangePoints,
  straddledChangePoints,
} from './stage-change-points.ts';
import {
  type BenchmarkChanges,
  CHANGE_POINT_DEFAULT_WINDOW,
  type Change,
  type ChangePointMark,
  type Estimate,
  FIGURE_KEYS,
  type FigureKey,
  type FigureVerdicts,
  type FunctionChanges,
  type PerRequest,
  type RuntimeChanges,
  type StageChanges,
  type StageFigures,
  type StageRow,
  type StageTable,
  type Verdict,
} from '../api/changes.ts';
import { changeHeadline, functionSentence } from '../api/words.ts';
import { formatMs } from '../api/format.ts';
import { geomeanRow } from '../api/benchstat-format.ts';
import type { ComparisonTree, StageWithArtifacts } from '../store/index.ts';
import type { ProfileKind } from '../model/profile.ts';
import type { LoadTestSummary } from '../model/loadtest.ts';
import { BENCHSTAT_ALPHA, compareBenchmarks } from '../analysis/benchstat.ts';
import { estimate, runsNeeded, verdict } from '../analysis/significance.ts';
import { type ChangeTreeNode, changeOrigins } from '../analysis/change-origins.ts';
import { type AnalysisService, benchmarkVerdicts } from './analysis.ts';
import { ServiceError } from './errors.ts';
import { FIGURES } from '../api/labels.ts';
import { DEFAULT_GRANULARITY, type RuntimeMetric, type TraceMetric } from '../api/options.ts';
import { noVerdictReason } from '../api/words.ts';
import { findStage, hasProfiles, profilesOfKind, summaryOf } from './stage-profiles.ts';
import type { RuntimeStage, StageRuntime } from '../api/runtime.ts';
import type { TraceArtifactSummary } from '../api/resources.ts';
import type { MetricsHighlights } from '../model/metrics.ts';
import { NAMED_REQUEST_PARTS, type TraceRequestFigures } from '../model/trace-requests.ts';
import { tailChange } from './changes-tail.ts';
import { REQUEST_PART_WORDS } from '../api/request-parts.ts';
import { type StageRunSet, headlineFormat, loadFigureValues, stageRunSet } from './stage-runs.ts';
import type { PairConditions } from '../api/conditions.ts';
import { pairConditions, stageConditions } from './conditions.ts';
import { appendAll } from '../analysis/extent.ts';
import { codeChange, type FunctionDiff } from './code-change.ts';
import { modeNotes } from './mode-notes.ts';

/**
 * The change engine: every judgement of a stage, and of a pair of stages, is made here and only here.
 * The stage table, GET …/changes, `stagediff report` and `stagediff check` (which reads a capture folder
 * through an in-process server) all format what it returns.
 */

/**
 * Profiles above this many samples (both stages together) are not ranked for "what changed" unless the
 * request asks (functions=on): a page view must not start heavy work nobody asked for.
 */
export const AUTO_FUNCTIONS_MAX_SAMPLES = 2_000_000;

/** Smallest change "what changed" names: this fraction of the base stage's total (per request or not). */
const ORIGIN_MIN_FRACTION = 0.01;

/** One value per run of every figure of a stage, and what the per-request figures were divided by. */
interface StageValues {
  set: StageRunSet;
  values: Record<FigureKey, number[]>;
  perRequest: { cpu: PerRequest; allocs: PerRequest };
}

/**
 * The execution-trace figures the engine judges, one value per trace (a run). Scheduling waits are
 * read as measured; the others are totals over the trace, divided by its requests (or by its span in
 * seconds when a trace of either stage has no requests), so traces of different lengths compare.
 * A total summed over every goroutine, not over a request's own time, says so in its label ("all
 * goroutines"); the network total leaves out the keep-alive waits of idle server connections.
 */
const RUNTIME_FIGURES: {
  metric: TraceMetric;
  label: string;
  unit: string;
  total: boolean;
  value: (s: TraceArtifactSummary) => number | null;
}[] = [
  {
    metric: 'sched-wait-mean',
    label: 'Scheduling wait (mean)',
    unit: 'nanoseconds',
    total: false,
    value: (s) => (s.schedWait.count > 0 ? s.schedWait.meanNanos : null),
  },
  {
    metric: 'sched-wait-p99',
    label: 'Scheduling wait (P99)',
    unit: 'nanoseconds',
    total: false,
    value: (s) => (s.schedWait.count > 0 ? s.schedWait.p99Nanos : null),
  },
  { metric: 'gc-stw', label: 'GC stop-the-world', unit: 'nanoseconds', total: true, value: (s) => s.gc.stw.totalNanos },
  {
    metric: 'blocked-channel',
    label: 'Blocked on channels (all goroutines)',
    unit: 'nanoseconds',
    total: true,
    value: (s) => s.blocked.channel.totalNanos,
  },
  {
    metric: 'blocked-select',
    label: 'Blocked in select (all goroutines)',
    unit: 'nanoseconds',
    total: true,
    value: (s) => s.blocked.select.totalNanos,
  },
  {
    metric: 'blocked-sync',
    label: 'Blocked on sync (all goroutines)',
    unit: 'nanoseconds',
    total: true,
    value: (s) => s.blocked.sync.totalNanos,
  },
  {
    metric: 'blocked-network',
    label: 'Blocked on the network (all goroutines, keep-alive waits excluded)',
    unit: 'nanoseconds',
    total: true,
    // A connection goroutine waiting for the client's next request is idle, not slow: left out. A
    // record made before that wait was counted has no value.
    value: (s) => {
      const idle = s.requests?.keepAliveWaitNanos;
      return idle === undefined || idle === null ? null : Math.max(0, s.blocked.network.totalNanos - idle);
    },
  },
  {
    metric: 'syscall',
    label: 'In syscalls (all goroutines)',
    unit: 'nanoseconds',
    total: true,
    value: (s) => s.syscall.totalNanos,
  },
  {
    metric: 'goroutines-created',
    label: 'Goroutines created',
    unit: 'count',
    total: true,
    value: (s) => s.goroutines.created,
  },
];

/**
 * The request figures of execution traces (model/trace-requests.ts), one value per trace: the latency
 * percentiles of the traced requests and the mean parts of their slowest 1 % (as measured, per request).
 * A trace without requests gives no value.
 */
const REQUEST_FIGURES: { metric: string; label: string; value: (r: TraceRequestFigures) => number }[] = [
  { metric: 'request-p50', label: 'Traced request latency P50', value: (r) => r.duration.p50Nanos },
  { metric: 'request-p90', label: 'Traced request latency P90', value: (r) => r.duration.p90Nanos },
  { metric: 'request-p99', label: 'Traced request latency P99', value: (r) => r.duration.p99Nanos },
  ...NAMED_REQUEST_PARTS.map((part) => ({
    metric: `request-tail-${part}`,
    label: `Slowest 1 % of traced requests, ${REQUEST_PART_WORDS[part]}`,
    value: (r: TraceRequestFigures) => r.tail[part],
  })),
];

/**
 * The runtime-metrics figures the engine judges, one value per metrics window (a run): window deltas
 * normalised like the trace totals, and the window's scheduling-latency p99 as measured.
 */
const METRICS_FIGURES: {
  metric: RuntimeMetric;
  label: string;
  unit: string;
  total: boolean;
  value: (h: MetricsHighlights) => number | null;
}[] = [
  {
    metric: 'gc-cpu',
    label: 'GC CPU (runtime metrics)',
    unit: 'nanoseconds',
    total: true,
    value: (h) => (h.gcCpuSeconds === null ? null : h.gcCpuSeconds * 1e9),
  },
  {
    metric: 'allocated-bytes',
    label: 'Allocated (runtime metrics)',
    unit: 'bytes',
    total: true,
    value: (h) => h.allocatedBytes,
  },
  {
    metric: 'sched-latency-p99',
    label: 'Scheduling latency P99 (runtime metrics)',
    unit: 'nanoseconds',
    total: false,
    value: (h) => (h.schedLatencyP99Seconds === null ? null : h.schedLatencyP99Seconds * 1e9),
  },
];

/** Converts a per-request CPU figure to nanoseconds; null for units that are not time. */
const TIME_UNITS: Record<string, number> = {
  nanoseconds: 1,
  ns: 1,
  microseconds: 1e3,
  us: 1e3,
  milliseconds: 1e6,
  seconds: 1e9,
};

export class ChangeEngine {
  /*
   * The exact U test costs up to ~40 ms for 50 runs against 50 (benchstat's exact limit), and a stage
   * table tests every stage twice per figure: verdicts are kept by their inputs. Bounded, least
   * recently used first out.
   */
  private readonly memo = new Map<string, Verdict>();

  constructor(private readonly analysis: AnalysisService) {}

  private verdict(base: readonly number[], target: readonly number[]): Verdict {
    const key = `${base.join(',')}|${target.join(',')}`;
    const hit = this.memo.get(key);
    if (hit) {
      this.memo.delete(key);
      this.memo.set(key, hit);
      return hit;
    }
    const v = verdict(base, target);
    this.memo.set(key, v);
    if (this.memo.size > 4096) this.memo.delete(this.memo.keys().next().value!);
    return v;
  }

  /** Per-request values of a stage's profiles of one kind: each profile's total of `type` over its requests. */
  private async perRequestValues(
    tree: ComparisonTree,
    st: StageWithArtifacts,
    kind: ProfileKind,
    type: string,
    scale: (unit: string) => number | null,
  ): Promise<{ values: number[]; perRequest: PerRequest }> {
    const profiles = profilesOfKind(st, kind);
    const pr = await this.analysis.perRequest(tree, st, profiles);
    const values: number[] = [];
    profiles.forEach((a, i) => {
      const s = summaryOf(a);
      const unit = s.sampleTypes.find((t) => t.type === type)?.unit;
      const k = unit === undefined ? null : scale(unit);
      const requests = pr.profiles[i]?.requests ?? null;
      const v = s.totals?.[type];
      if (k !== null && requests !== null && requests > 0 && typeof v === 'number') values.push((v * k) / requests);
    });
    return { values, perRequest: pr };
  }

  private async stageValues(
    tree: ComparisonTree,
    st: StageWithArtifacts,
    headline: string | null,
  ): Promise<StageValues> {
    const set = stageRunSet(st, headline);
    const load = loadFigureValues(set);
    const cpu = await this.perRequestValues(tree, st, 'cpu', 'cpu', (u) => TIME_UNITS[u] ?? null);
    const allocs = await this.perRequestValues(tree, st, 'allocs', 'alloc_space', (u) => (u === 'bytes' ? 1 : null));
    return {
      set,
      values: { ...load, cpuPerRequest: cpu.values, allocPerRequest: allocs.values },
      perRequest: { cpu: cpu.perRequest, allocs: allocs.perRequest },
    };
  }

  private figures(v: StageValues): StageFigures {
    const out = {} as StageFigures;
    for (const k of FIGURE_KEYS) out[k] = estimate(v.values[k]);
    return out;
  }

  /**
   * Every figure's verdict; a pair whose load-test runs differ in tool or settings gets `not-comparable`
   * on the load-test figures (no ratio, no test), the per-request figures keep theirs.
   */
  private compare(base: StageValues, target: StageValues, conditions: PairConditions | null): FigureVerdicts {
    const out = {} as FigureVerdicts;
    // A stage imported from a continuous profiler counts the requests clients sent (a Prometheus
    // counter): its req/s is the traffic of the window, not what the service could do, so it is shown,
    // never judged better or worse; its per-request figures are.
    const served = base.set.format === 'prometheus' || target.set.format === 'prometheus';
    for (const k of FIGURE_KEYS)
      out[k] =
        conditions && !conditions.loadComparable && LOAD_FIGURES.has(k)
          ? notComparable(base.values[k].length, target.values[k].length, conditions.loadReason ?? '')
          : served && k === 'rps'
            ? servedLoad(base.values[k].length, target.values[k].length)
            : this.verdict(base.values[k], target.values[k]);
    return out;
  }

  /** The stage table: every stage's figures, and each stage against the previous one and the first. */
  async stageTable(tree: ComparisonTree, opts: { window?: number } = {}): Promise<StageTable> {
    const headline = headlineFormat(tree);
    const values: StageValues[] = [];
    for (const st of tree.stages) values.push(await this.stageValues(tree, st, headline));
    const conditions = tree.stages.map((st, i) => stageConditions(st, values[i]!.set));
    const side = (i: number) => ({ name: tree.stages[i]!.name, conditions: conditions[i]! });
    const pairs = tree.stages.map((_, i) => ({
      previous: i === 0 ? null : pairConditions(side(i - 1), side(i)),
      baseline: i === 0 ? null : pairConditions(side(0), side(i)),
    }));
    const rows: StageRow[] = tree.stages.map((st, i) => {
      const v = values[i]!;
      const sums = v.set.used.map((r) => r.summary);
      const sum = (pick: (s: LoadTestSummary) => number | null) =>
        sums.some((s) => pick(s) !== null) ? sums.reduce((a, s) => a + (pick(s) ?? 0), 0) : null;
      return {
        stageId: st.id,
        name: st.name,
        note: st.note,
        summary: v.set.summary,
        loadTests: v.set.used.length,
        requests: sum((s) => s.requests),
        errors: sum((s) => s.errors),
        figures: this.figures(v),
        runs: v.set.runs,
        source: {
          format: v.set.format,
          artifactIds: [...new Set(v.set.used.map((r) => r.artifact.id))],
          otherRuns: v.set.otherRuns,
          headline: v.set.headline,
        },
        vsPrevious: i === 0 ? null : this.compare(values[i - 1]!, v, pairs[i]!.previous),
        vsBaseline: i === 0 ? null : this.compare(values[0]!, v, pairs[i]!.baseline),
        conditions: conditions[i]!,
        conditionsVsPrevious: pairs[i]!.previous?.warning ?? null,
        conditionsVsBaseline: pairs[i]!.baseline?.warning ?? null,
      };
    });
    return {
      alpha: BENCHSTAT_ALPHA,
      runsNeeded: runsNeeded(BENCHSTAT_ALPHA),
      rows,
      changePoints: stageChangePoints(rows, { windowLen: opts.window ?? CHANGE_POINT_DEFAULT_WINDOW }),
    };
  }

  /** Everything the engine judges about base → target (stage ids or names). */
  async changes(
    tree: ComparisonTree,
    q: { base: string; target: string; kind?: ProfileKind; functions: 'auto' | 'on' | 'off'; window?: number },
  ): Promise<StageChanges> {
    const base = findStage(tree, q.base, 'base');
    const target = findStage(tree, q.target, 'target');
    if (base.id === target.id)
      throw new ServiceError('invalid-request', `base and target are the same stage ("${base.name}")`, {
        param: 'target',
      });
    const headline = headlineFormat(tree);
    const bv = await this.stageValues(tree, base, headline);
    const tv = await this.stageValues(tree, target, headline);
    const bf = this.figures(bv);
    const tf = this.figures(tv);
    const conditions = pairConditions(
      { name: base.name, conditions: stageConditions(base, bv.set) },
      { name: target.name, conditions: stageConditions(target, tv.set) },
    );
    const verdicts = this.compare(bv, tv, conditions);
    const changePoints = await this.straddled(tree, headline, base.id, target.id, q.window);
    const figures = FIGURE_KEYS.map((k) =>
      figureChange(k, bf[k], tf[k], verdicts[k], LOAD_FIGURES.has(k) ? null : conditions.warning),
    );
    const fd: { diff: FunctionDiff | null } = { diff: null };
    const functions = await this.functionChanges(tree, base, target, q, fd);
    const code = q.functions === 'off' ? null : await codeChange(this.analysis, tree, base, target, functions, fd.diff);
    const benchmarks = await this.benchmarkChanges(base, target);
    const gc = await this.gcChange(base, target);
    const pr = hasRuntime(base) || hasRuntime(target) ? await this.pairRuntime(tree, base, target, bf, tf) : null;
    const runtime0 = pr?.changes ?? null;
    const warning = conditions.warning;
    const runtime =
      runtime0 && warning ? { ...runtime0, figures: runtime0.figures.map((c) => ({ ...c, warning })) } : runtime0;
    const tail =
      pr && runtime
        ? tailChange(pr.base, pr.target, runtime.figures, (f, bv, tv) =>
            this.judged({ ...f, unit: 'nanoseconds' }, bv, tv),
          )
        : null;
    const kind = functions.kind ?? 'cpu';
    const perRequest =
      kind === 'allocs'
        ? { base: bv.perRequest.allocs, target: tv.perRequest.allocs }
        : { base: bv.perRequest.cpu, target: tv.perRequest.cpu };
    return {
      base: { id: base.id, name: base.name, note: base.note },
      target: { id: target.id, name: target.name, note: target.note },
      alpha: BENCHSTAT_ALPHA,
      runsNeeded: runsNeeded(BENCHSTAT_ALPHA),
      figures,
      perRequest,
      modeNotes: modeNotes([
        { side: 'base', stage: base, divisor: perRequest.base },
        { side: 'target', stage: target, divisor: perRequest.target },
      ]),
      functions,
      benchmarks,
      gc,
      ...(runtime ? { runtime } : {}),
      ...(code ? { code } : {}),
      ...(tail ? { tail } : {}),
      ...(changePoints.length > 0 ? { changePoints } : {}),
      conditions,
      sentences: [
        ...conditionSentences(conditions),
        ...changePoints.map(changePointSentence),
        ...sentences(figures, functions, benchmarks, gc),
        ...(tail ? [tail.sentence] : []),
        // Runtime rows are many: only their significant changes are news here (GET …/runtime words them all).
        ...(runtime ? runtime.figures.filter((c) => c.verdict.status === 'significant').flatMap(changeHeadline) : []),
      ],
    };
  }

  /**
   * The stage table's change points (over every stage's figures, as there) that lie between base and target;
   * none below the stages a search needs, without computing any other stage's figures.
   */
  private async straddled(
    tree: ComparisonTree,
    headline: string | null,
    baseId: string,
    targetId: string,
    window: number | undefined,
  ): Promise<ChangePointMark[]> {
    if (tree.stages.length < CHANGE_POINT_MIN_STAGES) return [];
    const rows: Pick<StageRow, 'stageId' | 'name' | 'figures'>[] = [];
    for (const st of tree.stages)
      rows.push({ stageId: st.id, name: st.name, figures: this.figures(await this.stageValues(tree, st, headline)) });
    const marks = stageChangePoints(rows, { windowLen: window ?? CHANGE_POINT_DEFAULT_WINDOW });
    return straddledChangePoints(
      marks,
      tree.stages.map((st) => st.id),
      baseId,
      targetId,
    );
  }

  private async functionChanges(
    tree: ComparisonTree,
    base: StageWithArtifacts,
    target: StageWithArtifacts,
    q: { kind?: ProfileKind; functions: 'auto' | 'on' | 'off' },
    out: { diff: FunctionDiff | null } = { diff: null },
  ): Promise<FunctionChanges> {
    const empty = (
      status: FunctionChanges['status'],
      message: string | null,
      kind: ProfileKind | null = null,
    ): FunctionChanges => ({
      status,
      message,
      kind,
      sampleType: null,
      normalisation: 'absolute',
      unit: '',
      baseTotal: 0,
      targetTotal: 0,
      changes: [],
    });
    if (q.functions === 'off') return empty('no-profiles', 'not asked for (functions=off)');
    if (!hasProfiles(base) || !hasProfiles(target))
      return empty('no-profiles', `${hasProfiles(base) ? target.name : base.name} has no profile`);
    let kind = q.kind;
    if (!kind) {
      const common = (['cpu', 'allocs', 'wall'] as ProfileKind[]).find(
        (k) => profilesOfKind(base, k).length > 0 && profilesOfKind(target, k).length > 0,
      );
      if (!common) return empty('no-profiles', 'the two stages have no profile of a common kind (CPU, allocations)');
      kind = common;
    }
    if (profilesOfKind(base, kind).length === 0 || profilesOfKind(target, kind).length === 0)
      return empty('no-profiles', `a stage has no ${kind} profile`, kind);
    const samples = [...profilesOfKind(base, kind), ...profilesOfKind(target, kind)].reduce(
      (n, a) => n + (summaryOf(a).numSamples ?? 0),
      0,
    );
    if (q.functions === 'auto' && samples > AUTO_FUNCTIONS_MAX_SAMPLES)
      return empty(
        'too-large',
        `the profiles hold ${samples.toLocaleString('en-US')} samples, more than ${AUTO_FUNCTIONS_MAX_SAMPLES.toLocaleString('en-US')} ranked on every page view: ask for them (functions=on)`,
        kind,
      );
    const d = await this.analysis.diffResult(tree, {
      base: base.id,
      target: target.id,
      kind,
      // Per request whenever both stages have requests; per second otherwise; absolute as a last resort.
      mode: 'auto',
      minFraction: ORIGIN_MIN_FRACTION / 4,
      filters: {},
      granularity: DEFAULT_GRANULARITY,
    });
    let view = d.view;
    let normalisation: FunctionChanges['normalisation'] = view.mode === 'per-request' ? 'per-request' : 'absolute';
    if (view.mode !== 'per-request') {
      // Stages whose profiles are not each matched to a run: per request by the stage's rps if both
      // have it, else per second of profile, so a longer profile is not read as more cost.
      try {
        view = (
          await this.analysis.diffResult(tree, {
            base: base.id,
            target: target.id,
            kind,
            mode: 'per-request',
            minFraction: ORIGIN_MIN_FRACTION / 4,
            filters: {},
            granularity: DEFAULT_GRANULARITY,
          })
        ).view;
        normalisation = 'per-request';
      } catch (e) {
        if (!(e instanceof ServiceError && e.code === 'no-requests')) throw e;
      }
    }
    const perSecond =
      normalisation === 'absolute' && d.base.profile.durationNanos > 0 && d.target.profile.durationNanos > 0;
    const sb = perSecond ? 1e9 / d.base.profile.durationNanos : 1;
    const st = perSecond ? 1e9 / d.target.profile.durationNanos : 1;
    if (perSecond) normalisation = 'per-second';
    const scaled = (n: (typeof view)['tree']): ChangeTreeNode => ({
      name: n.name,
      base: n.base * sb,
      target: n.target * st,
      children: n.children.map(scaled),
    });
    const tree0 = perSecond ? scaled(view.tree) : view.tree;
    out.diff = { rows: view.top, noise: d.noise, scaleBase: sb, scaleTarget: st };
    const baseTotal = view.baseTotal * sb;
    const targetTotal = view.targetTotal * st;
    const minDelta = ORIGIN_MIN_FRACTION * Math.abs(baseTotal || targetTotal);
    // A call path that appeared or vanished while its function's cost, all paths together, did not move
    // as much is work that moved between callers: only the function's own change counts.
    const functionDelta = new Map(view.top.map((r) => [r.name, r.target.cum * st - r.base.cum * sb]));
    const effective = (o: { name: string; delta: number }) => {
      const df = functionDelta.get(o.name) ?? o.delta;
      return Math.sign(df) === Math.sign(o.delta) ? Math.sign(o.delta) * Math.min(Math.abs(o.delta), Math.abs(df)) : 0;
    };
    const origins = changeOrigins(tree0, { minDelta, limit: 32 })
      .filter((o) => Math.abs(effective(o)) >= minDelta)
      .sort((a, b) => Math.abs(effective(b)) - Math.abs(effective(a)))
      .slice(0, 8);
    const unit =
      normalisation === 'per-request'
        ? `${d.base.unit}/request`
        : normalisation === 'per-second'
          ? `${d.base.unit}/s`
          : d.base.unit;
    return {
      status: 'ok',
      message: null,
      kind,
      sampleType: view.sampleType,
      normalisation,
      unit,
      baseTotal,
      targetTotal,
      changes: origins.map((o) => ({
        ...o,
        ofBaseTotal: baseTotal !== 0 ? Math.abs(o.delta) / Math.abs(baseTotal) : 0,
        verdict: d.noise?.cum.get(o.name) ?? verdict([], []),
      })),
    };
  }

  private async benchmarkChanges(
    base: StageWithArtifacts,
    target: StageWithArtifacts,
  ): Promise<BenchmarkChanges | null> {
    const b = await this.analysis.benchmarkRun(base);
    const t = await this.analysis.benchmarkRun(target);
    if (!b || !t) return null;
    const diff = benchmarkVerdicts(compareBenchmarks(b, t));
    const rows: Change[] = diff.rows.map((r) => {
      const better = /\/s$/.test(r.unit) ? 'higher' : 'lower';
      const side = (median: number, ci: number | null, n: number): Estimate => ({
        n,
        values: [],
        median,
        lo: null,
        hi: null,
        ci,
      });
      return withDirection({
        metric: `bench:${r.unit}`,
        label: r.unit,
        subject: r.pkg ? `${r.pkg}.${r.name}` : r.name,
        unit: r.unit,
        better,
        base: side(r.base.median, r.base.ci, r.nBase),
        target: side(r.target.median, r.target.ci, r.nTarget),
        verdict: r.verdict,
        deltaPercent: r.deltaPercent,
        direction: null,
        reason: reasonFor(r.verdict),
      });
    });
    // One geomean per package and unit, as benchstat has one table (and one geomean row) for each:
    // benchmarks of different packages are not pooled.
    const groups = new Map<string, typeof diff.rows>();
    for (const r of diff.rows) {
      const k = `${r.pkg}\u0000${r.unit}`;
      const g = groups.get(k);
      if (g) g.push(r);
      else groups.set(k, [r]);
    }
    const units = [...groups.values()].map((rs) => {
      const { pkg, unit } = rs[0]!;
      const g = rs.length === 1 ? rs[0]!.deltaPercent : (geomeanRow(rs)?.deltaPercent ?? null);
      return {
        pkg,
        unit,
        benchmarks: rs.length,
        significant: rs.filter((r) => r.verdict.status === 'significant').length,
        geomeanDeltaPercent: g,
        better: (/\/s$/.test(unit) ? 'higher' : 'lower') as 'higher' | 'lower',
      };
    });
    return { comparable: diff.rows.length > 0, reason: diff.reason, units, rows };
  }

  /**
   * What the runtime did in base and target (stage ids or names): each stage's traces, metrics and
   * scheduler traces, and the verdicts on the trace figures (RUNTIME_FIGURES) across the traces.
   */
  async runtime(tree: ComparisonTree, q: { base: string; target: string }): Promise<StageRuntime> {
    const base = findStage(tree, q.base, 'base');
    const target = findStage(tree, q.target, 'target');
    if (base.id === target.id)
      throw new ServiceError('invalid-request', `base and target are the same stage ("${base.name}")`, {
        param: 'target',
      });
    const b = await this.analysis.runtimeStage(tree, base);
    const t = await this.analysis.runtimeStage(tree, target);
    const allocs = await this.allocsMedians(tree, base, target);
    const r = this.runtimeChanges(b, t, allocs);
    return {
      alpha: BENCHSTAT_ALPHA,
      runsNeeded: runsNeeded(BENCHSTAT_ALPHA),
      normalisation: r.normalisation,
      base: b,
      target: t,
      figures: r.figures,
      allocsCrossCheck: r.allocsCrossCheck,
      sentences: runtimeSentences(r.figures),
    };
  }

  /**
   * The stages' traces (their stored summaries, no timeline) and the runtime rows of a pair, for views
   * that read the rows beside the traces' own figures (GET …/requests).
   */
  async runtimeRows(
    tree: ComparisonTree,
    base: StageWithArtifacts,
    target: StageWithArtifacts,
  ): Promise<{ base: RuntimeStage; target: RuntimeStage; figures: Change[] }> {
    const b = await this.analysis.runtimeStage(tree, base, { timelines: false });
    const t = await this.analysis.runtimeStage(tree, target, { timelines: false });
    return { base: b, target: t, figures: this.runtimeChanges(b, t, { base: null, target: null }).figures };
  }

  /** The runtime rows of a pair whose stages' figures are already known (GET …/changes). */
  private async pairRuntime(
    tree: ComparisonTree,
    base: StageWithArtifacts,
    target: StageWithArtifacts,
    bf: StageFigures,
    tf: StageFigures,
  ): Promise<{ changes: RuntimeChanges; base: RuntimeStage; target: RuntimeStage }> {
    // The figures only: no trace is parsed for its timeline here.
    const b = await this.analysis.runtimeStage(tree, base, { timelines: false });
    const t = await this.analysis.runtimeStage(tree, target, { timelines: false });
    const changes = this.runtimeChanges(b, t, {
      base: bf.allocPerRequest?.median ?? null,
      target: tf.allocPerRequest?.median ?? null,
    });
    return { changes, base: b, target: t };
  }

  /** A figure measured as is (not normalised), one value per window on each side, judged. */
  private judged(
    f: { metric: string; label: string; subject: string | null; unit: string },
    bv: number[],
    tv: number[],
  ): Change {
    const v = this.verdict(bv, tv);
    return withDirection({
      metric: f.metric,
      label: f.label,
      subject: f.subject,
      unit: f.unit,
      better: 'lower',
      base: estimate(bv),
      target: estimate(tv),
      verdict: v,
      deltaPercent: v.ratio === null ? null : (v.ratio - 1) * 100,
      direction: null,
      reason: reasonFor(v),
    });
  }

  /** The allocs profiles' alloc_space per request, median of each stage (null without a figure). */
  private async allocsMedians(
    tree: ComparisonTree,
    base: StageWithArtifacts,
    target: StageWithArtifacts,
  ): Promise<{ base: number | null; target: number | null }> {
    const headline = headlineFormat(tree);
    const m = async (st: StageWithArtifacts) =>
      estimate((await this.stageValues(tree, st, headline)).values.allocPerRequest)?.median ?? null;
    return { base: await m(base), target: await m(target) };
  }

  /**
   * The runtime rows of a pair (api/changes.ts RuntimeChanges): one value per window. Totals are per
   * request when every window of both stages has its own run (timeline or paired-run), else per second.
   */
  private runtimeChanges(
    b: RuntimeStage,
    t: RuntimeStage,
    allocs: { base: number | null; target: number | null },
  ): RuntimeChanges {
    const windows = [...b.traces, ...t.traces, ...b.metrics, ...t.metrics];
    const perRequest =
      windows.length > 0 &&
      windows.every(
        (x) => x.requests !== null && x.requests > 0 && (x.divisor === 'timeline' || x.divisor === 'paired-run'),
      );
    const per = (total: number, requests: number | null, seconds: number): number | null => {
      const by = perRequest ? (requests ?? 0) : seconds;
      return by > 0 ? total / by : null;
    };
    const traceValues = (side: RuntimeStage, f: (typeof RUNTIME_FIGURES)[number]) =>
      side.traces.flatMap((x) => {
        const s = x.summary;
        const v = f.value(s);
        if (v === null) return [];
        const n = f.total ? per(v, x.requests, s.spanNanos / 1e9) : v;
        return n === null ? [] : [n];
      });
    const metricValues = (side: RuntimeStage, f: (typeof METRICS_FIGURES)[number]) =>
      side.metrics.flatMap((x) => {
        const v = f.value(x.highlights);
        if (v === null) return [];
        const n = f.total ? per(v, x.requests, x.windowSeconds) : v;
        return n === null ? [] : [n];
      });
    const row = (f: { metric: string; label: string; unit: string; total: boolean }, bv: number[], tv: number[]) =>
      this.judged(
        {
          metric: f.metric,
          label: f.label,
          subject: null,
          unit: f.total ? `${f.unit}/${perRequest ? 'request' : 's'}` : f.unit,
        },
        bv,
        tv,
      );
    const figures: Change[] = [];
    if (b.traces.length + t.traces.length > 0)
      for (const f of RUNTIME_FIGURES) figures.push(row(f, traceValues(b, f), traceValues(t, f)));
    const requestValues = (side: RuntimeStage, f: (typeof REQUEST_FIGURES)[number]) =>
      side.traces.flatMap((x) => {
        const r = (x.summary as TraceArtifactSummary).requests;
        return r && r.status === 'ok' && r.duration.count > 0 ? [f.value(r)] : [];
      });
    for (const f of REQUEST_FIGURES) {
      const bv = requestValues(b, f);
      const tv = requestValues(t, f);
      // a part no request of either side spent time in is not a row (nothing to judge)
      if (bv.length + tv.length > 0 && (bv.some((v) => v !== 0) || tv.some((v) => v !== 0)))
        figures.push(row({ ...f, unit: 'nanoseconds', total: false }, bv, tv));
    }
    for (const f of METRICS_FIGURES) {
      const bv = metricValues(b, f);
      const tv = metricValues(t, f);
      if (bv.length + tv.length > 0) figures.push(row(f, bv, tv));
    }
    const allocated = figures.find((c) => c.metric === 'allocated-bytes');
    const cross = (m: Estimate | null | undefined, profile: number | null) =>
      perRequest && m && profile !== null && profile > 0 ? m.median / profile : null;
    return {
      normalisation: perRequest ? 'per-request' : 'per-second',
      windows: {
        base: { traces: b.traces.length, metrics: b.metrics.length },
        target: { traces: t.traces.length, metrics: t.metrics.length },
      },
      figures,
      allocsCrossCheck: { base: cross(allocated?.base, allocs.base), target: cross(allocated?.target, allocs.target) },
    };
  }

  private async gcChange(base: StageWithArtifacts, target: StageWithArtifacts): Promise<StageChanges['gc']> {
    const first = async (st: StageWithArtifacts) => {
      const t = (await this.analysis.gcTraces(st))[0]?.trace;
      return t
        ? { cycles: t.summary.cycles, stwP99Ms: t.summary.stwPauseMs.p99, maxHeapMb: t.summary.maxHeapMb }
        : null;
    };
    const b = await first(base);
    const t = await first(target);
    return b || t ? { base: b, target: t } : null;
  }
}

/** Whether a stage has what the runtime rows read: an execution trace or a runtime-metrics series. */
function hasRuntime(st: StageWithArtifacts): boolean {
  return st.artifacts.some((a) => a.kind === 'trace' || a.kind === 'metrics');
}

/** The runtime rows in words, significant changes first. */
function runtimeSentences(figures: Change[]): string[] {
  const significant = figures.filter((c) => c.verdict.status === 'significant');
  const rest = figures.filter((c) => c.verdict.status !== 'significant');
  return [...significant, ...rest].flatMap((c) => changeHeadline(c));
}

/** Why a figure has no verdict, in the words every reader uses (null when it has one). */
export function reasonFor(v: Verdict): string | null {
  return noVerdictReason(v) || null;
}

function withDirection(c: Change): Change {
  const ratio = c.verdict.ratio;
  const direction =
    c.verdict.status === 'significant' && ratio !== null && ratio !== 1
      ? ratio > 1 === (c.better === 'higher')
        ? 'improvement'
        : 'regression'
      : null;
  return { ...c, direction };
}

/** The load-test figures: judged only between runs of one tool and settings. */
const LOAD_FIGURES: ReadonlySet<FigureKey> = new Set<FigureKey>(['rps', 'p50', 'p95', 'p99', 'errorRate']);

/** The verdict of a figure whose sides were measured under different load: no ratio, no test. */
function notComparable(nBase: number, nTarget: number, reason: string): Verdict {
  return {
    status: 'not-comparable',
    ratio: null,
    p: null,
    nBase,
    nTarget,
    alpha: BENCHSTAT_ALPHA,
    minP: null,
    runsNeeded: runsNeeded(BENCHSTAT_ALPHA),
    reason: `different load: ${reason}`,
  };
}

/** The req/s of served traffic (a requests counter, not a load test): shown, not judged. */
function servedLoad(nBase: number, nTarget: number): Verdict {
  return {
    ...notComparable(nBase, nTarget, ''),
    reason: "served traffic: the requests clients sent, counted by Prometheus, not a load test's throughput",
  };
}

/** What "what changed" says first when the pair's conditions differ. */
function conditionSentences(c: PairConditions): string[] {
  const out: string[] = [];
  if (!c.loadComparable && c.loadReason)
    out.push(`Load-test figures not comparable, the load differs (${c.loadReason}): no QPS or latency verdict`);
  const rest = c.differences.filter((d) => d.key !== 'load');
  if (rest.length > 0)
    out.push(
      `Measured under different conditions (${rest.map((d) => d.text).join('; ')}): the per-request figures are compared, with that caveat`,
    );
  return out;
}

function figureChange(
  k: FigureKey,
  base: Estimate | null,
  target: Estimate | null,
  v: Verdict,
  warning: string | null,
): Change {
  const f = FIGURES[k];
  return withDirection({
    metric: f.metric,
    label: f.label,
    subject: null,
    unit: f.unit,
    better: f.better,
    base,
    target,
    verdict: v,
    deltaPercent: v.ratio === null ? null : (v.ratio - 1) * 100,
    direction: null,
    reason: reasonFor(v),
    ...(warning ? { warning } : {}),
  });
}

/**
 * "What changed", most telling first: the functions where the change starts, then QPS and latency, CPU
 * and memory per request, errors, benchmarks and GC. Only significant changes are worded as changes; the
 * others say why they are not (within the noise, too few runs, one run).
 */
function sentences(
  figures: Change[],
  functions: FunctionChanges,
  benchmarks: BenchmarkChanges | null,
  gc: StageChanges['gc'],
): string[] {
  const out: string[] = [];
  // A function inside the noise is not a change; one that cannot be tested (too few runs) still is news.
  const named = functions.changes.filter((f) => f.verdict.status !== 'no-change' && f.verdict.status !== 'missing');
  for (const f of named.slice(0, 3)) out.push(functionSentence(f, functions));
  const by = (m: string) => figures.find((c) => c.metric === m)!;
  for (const c of [by('rps'), by('p99'), by('cpu-per-request'), by('alloc-per-request')])
    appendAll(out, changeHeadline(c));
  const errors = by('error-rate');
  if (errors.verdict.status === 'significant') appendAll(out, changeHeadline(errors));
  if (benchmarks) {
    if (!benchmarks.comparable && benchmarks.reason) out.push(`go test -bench: ${benchmarks.reason}`);
    const packages = new Set(benchmarks.units.map((u) => u.pkg)).size;
    for (const u of benchmarks.units)
      if (u.significant > 0)
        out.push(
          `go test -bench ${packages > 1 && u.pkg ? `${u.pkg} ` : ''}${u.unit} ${u.geomeanDeltaPercent === null ? '?' : `${u.geomeanDeltaPercent < 0 ? '−' : '+'}${Math.abs(u.geomeanDeltaPercent).toFixed(2)} %`} geomean, ${u.significant} of ${u.benchmarks} significant`,
        );
  }
  if (gc?.base && gc.target) out.push(`GC STW p99 ${formatMs(gc.base.stwP99Ms)} → ${formatMs(gc.target.stwP99Ms)}`);
  return out;
}
