import { fullNamesField, treeNames } from '../analysis/short-names.ts';
import type { Artifact, ComparisonTree, StageWithArtifacts, Store } from '../store/index.ts';
import type { ModuleFiles } from './module-sources.ts';
import type { Parsed } from '../ingest/detect.ts';
import { type LoadTestRun, loadTestArtifactSummary } from '../model/loadtest.ts';
import { type StoredSummary, kinded } from '../model/artifact-summary.ts';
import type { BenchmarkDiff, BenchmarkRun } from '../model/benchmark.ts';
import type { GcTrace } from '../model/gctrace.ts';
import type { Profile, ProfileKind } from '../model/profile.ts';
import type { RuntimeStage } from '../api/runtime.ts';
import type { MetricSeries, MetricsModel } from '../model/metrics.ts';
import { metricsRuntimeSettings } from '../ingest/metrics/index.ts';
import type { PerRequest } from '../api/changes.ts';
import { isRequestCounterName } from '../api/labels.ts';
import type {
  Benchmarks,
  DiffModeParam,
  DiffNode,
  DiffRow,
  Diff as DiffView,
  Flamegraph,
  GcStages,
  Sandwich,
  Search,
  SearchQuery,
  ShareSpread,
  Timeline,
  Top,
  VerdictBrief,
} from '../api/views.ts';
import { flatCum, percentageBase, sortByFlat, stackTotals, total } from '../analysis/flat-cum.ts';
import { unionKeys } from '../analysis/frame-keys.ts';
import { searchStacks } from '../analysis/search.ts';
import { compileGoRegexp } from '../analysis/go-regexp.ts';
import { filterRegexp } from './view-queries.ts';
import { CallPathNotFound, callTree } from '../analysis/call-tree.ts';
import { type DiffMode, type DiffNode as PlainDiffNode, diffProfiles } from '../analysis/diff.ts';
import { toFolded } from '../analysis/folded.ts';
import { type FrameFilters, filterProfile } from '../analysis/filter.ts';
import { type Granularity, granularityKeys, keysOf } from '../analysis/granularity.ts';
import { sandwich } from '../analysis/sandwich.ts';
import { describeSampleType, sinceProcessStart } from '../analysis/sample-types.ts';
import { BENCHSTAT_ALPHA, compareBenchmarks } from '../analysis/benchstat.ts';
import {
  estimate,
  judged,
  judgedFamily,
  minimumUTestP,
  runsNeeded,
  type Verdict,
  verdict,
  verdictByCounts,
} from '../analysis/significance.ts';
import { ServiceError } from './errors.ts';
import type { ModelCache } from './models.ts';
import { captureFileOf, describeDivisor, perRequest, profileRequests } from './requests.ts';
import {
  type ProfileChoice,
  StageProfiles,
  type StageProfile,
  findStage,
  profileSummary,
  profilesOfKind,
  type StoredProfileSummary,
  TRACE_PROFILES,
} from './stage-profiles.ts';
import { headlineFormat, stageRunSet } from './stage-runs.ts';
import type { Recorded, RecordedTrajectory } from './view-unit.ts';
import { maxOf, minOf } from '../analysis/extent.ts';
import { SOURCE_VIEW_LIMITS, type SourceViewLimits } from '../config.ts';

/** The summary kept in the store for any parsed artifact. */
export function artifactSummary(parsed: Parsed): StoredSummary {
  switch (parsed.kind) {
    case 'profile':
      return storedSummary(parsed.profile);
    case 'loadtest':
      return loadTestArtifactSummary(parsed.runs);
    case 'benchmark':
      return {
        config: parsed.benchmark.config,
        benchmarks: parsed.benchmark.benchmarks.length,
        names: [...new Set(parsed.benchmark.benchmarks.map((b) => b.name))].slice(0, 50),
      };
    case 'gctrace':
      return parsed.gctrace.summary;
    case 'metrics': {
      const m = parsed.metrics;
      return {
        source: m.source,
        start: m.start,
        scrapes: m.times.length,
        failedScrapes: m.failedScrapes,
        windowSeconds: m.windowSeconds,
        series: m.series.length,
        highlights: m.highlights,
        runtimeSettings: metricsRuntimeSettings(m.series),
      };
    }
    case 'schedtrace':
      return { ...parsed.schedtrace.summary, gc: parsed.schedtrace.gc?.summary ?? null };
    case 'trace': {
      // the figures without the timeline and the long lists (the parsed model has them)
      const { timeline: _timeline, entryFunctions, ...rest } = parsed.trace.summary;
      // Each derived profile's summary, so the stage's kinds and per-request divisors need no parsing.
      // The trace's start (Go 1.25+ records the wall clock) places its window against a load test's.
      const startNanos = rest.startTime ? Date.parse(rest.startTime) * 1e6 : 0;
      const profiles = Object.fromEntries(
        TRACE_PROFILES.map((n) => [n, { ...storedSummary(parsed.trace.profiles[n]), timeNanos: startNanos }]),
      );
      return {
        ...rest,
        entryFunctions: { functions: entryFunctions.functions.slice(0, 10), omitted: entryFunctions.omitted },
        profiles,
        requests: parsed.trace.requests ?? null,
      };
    }
  }
}

/**
 * The runtime-metric series the runtime timeline draws, by the names client_golang, runtime/metrics (as
 * Prometheus names) and expvar give them: goroutines, heap, GC cycles, GC CPU and pauses, scheduling latency.
 */
const TIMELINE_METRICS = new Set([
  'go_goroutines',
  'go_sched_goroutines_goroutines',
  'go_memstats_heap_alloc_bytes',
  'go_memory_classes_heap_objects_bytes',
  'go_gc_cycles_total_gc_cycles_total',
  'go_cpu_classes_gc_total_cpu_seconds_total',
  'go_sched_pauses_total_gc_seconds',
  'go_sched_latencies_seconds',
  'memstats.HeapAlloc',
  'memstats.NumGC',
  'memstats.PauseTotalNs',
]);

/** Label sets (routes, codes) of the service's request counters sent with a metrics window, at most. */
const MAX_REQUEST_SERIES = 64;

/** The timeline of a trace read without one (the change engine's rows need only the figures). */
const NO_TIMELINE: RuntimeStage['traces'][number]['timeline'] = {
  bucketNanos: 0,
  buckets: [],
  gcSpans: [],
  stwSpans: [],
  truncated: false,
};

/** Whether a series has a value from scrape i (a failed scrape has none in any series). */
function seriesHasScrape(x: MetricSeries, i: number): boolean {
  switch (x.type) {
    case 'gauge':
    case 'untyped':
    case 'counter':
      return x.values[i] !== null && x.values[i] !== undefined;
    default:
      return false;
  }
}

/** The summary stored with a profile: its description and each sample type's total. */
function storedSummary(p: Profile): StoredProfileSummary {
  // Own properties even for a type named `__proto__` (an assignment would set the prototype instead).
  const totals: Record<string, number> = Object.fromEntries(
    p.sampleTypes.map((t, i) => [t.type, percentageBase(p, i)]),
  );
  return profileSummary(p, totals);
}

function shareSpread(shares: number[]): ShareSpread | null {
  const e = estimate(shares);
  if (!e) return null;
  return { n: e.n, min: minOf(shares), max: maxOf(shares), median: e.median, lo: e.lo, hi: e.hi };
}

/** Functions (by their largest cum) whose change a diff tests against the noise. */
export const NOISE_MAX_FUNCTIONS = 2000;

/**
 * The floor of a diff's tested family: a function is tested only when its cum, over the profiles of
 * both stages pooled, spreads by at least this fraction of a profile's median total (see noiseTest).
 */
export const NOISE_TEST_FLOOR = 0.01;

/** One function's flat and cum verdicts across the stages' profiles. */
export interface FunctionNoise {
  flat: VerdictBrief;
  cum: VerdictBrief;
}

/** How the profiles of a diff were compared one by one (api/views.ts DiffNoise). */
export interface NoiseTest {
  noise: NonNullable<DiffView['noise']>;
  functions: Map<string, FunctionNoise>;
  /** The full cum verdict per tested function (for the change engine's sentences). */
  cum: Map<string, Verdict>;
  /** The stage total's verdict, tested alone (the root frame's). */
  total: VerdictBrief;
}

/** A diff tree with each node's function verdict (iterative: trees can be deep). */
function withVerdicts(
  root: PlainDiffNode,
  functions: Map<string, FunctionNoise> | null,
  rootVerdict: VerdictBrief | null = null,
): DiffNode {
  const copy = (n: PlainDiffNode): DiffNode => ({
    name: n.name,
    value: n.value,
    delta: n.delta,
    base: n.base,
    target: n.target,
    ...(functions ? { verdict: functions.get(n.name)?.cum ?? null } : {}),
    children: [],
  });
  const out = copy(root);
  // The whole profile's root (no call path chosen) is the stage total, tested alone.
  if (functions && rootVerdict) out.verdict = rootVerdict;
  const stack: [PlainDiffNode, DiffNode][] = [[root, out]];
  while (stack.length > 0) {
    const [src, dst] = stack.pop()!;
    for (const c of src.children) {
      const cc = copy(c);
      dst.children.push(cc);
      stack.push([c, cc]);
    }
  }
  return out;
}

export interface ViewQuery extends ProfileChoice {
  stage: string;
  filters: FrameFilters;
  /** What rows and nodes stand for (the query's, filled in: functions unless said). */
  granularity: Granularity;
}

/**
 * What a tree view asks of its tree: the call path to root it at (frame keys, outermost first;
 * absent or empty: the whole tree), the fraction of the root's value below which subtrees are left
 * out, and the most nodes it may hold (minFraction is raised to stay within; absent: no cap).
 */
export interface TreeQuery {
  root?: readonly string[];
  minFraction: number;
  maxNodes?: number;
}

export interface DiffQuery extends ProfileChoice, TreeQuery {
  base: string;
  target: string;
  mode: DiffModeParam;
  filters: FrameFilters;
  granularity: Granularity;
}

/** Runs a tree's computation, a root path through no sample refused as not found, naming the path. */
function atCallPath<T>(run: () => T, where: string): T {
  try {
    return run();
  } catch (e) {
    if (!(e instanceof CallPathNotFound)) throw e;
    throw new ServiceError('not-found', `no sample of ${where} passes through the call path ${e.path.join(' → ')}`, {
      param: 'root',
    });
  }
}

/** A resolved diff before its JSON shape: the view, plus what the change engine reads of it. */
export interface DiffResult {
  view: Omit<DiffView, 'top' | 'rowsTotal'> & { top: DiffRow[] };
  base: StageProfile;
  target: StageProfile;
  noise: NoiseTest | null;
}

/**
 * The analysis views of a comparison, each a function of the stored files and the request. Heavy work
 * runs in the analysis workers (see analysis-pool.ts); nothing here knows about HTTP.
 */
/** What the source view needs to take files from the module proxy. */
export interface ModuleSourcing {
  files: ModuleFiles;
  /** SOURCE_GO_VERSION: the Go release of the standard library when a stage's metrics do not say. */
  goVersion: string | undefined;
  /** SOURCE_GO_PLATFORM: which build of the toolchain module to fetch. */
  platform: string;
}

export class AnalysisService {
  readonly stages: StageProfiles;
  /**
   * Module files from the Go module proxy for the source view (SOURCE_GOPROXY); null when it is off.
   * In the server the proxy client itself, in an analysis worker its channel to the server's.
   */
  modules: ModuleSourcing | null = null;
  /** The source view's bounds (SOURCE_VIEW_*). */
  sourceView: SourceViewLimits = SOURCE_VIEW_LIMITS;

  constructor(
    readonly store: Store,
    readonly models: ModelCache,
  ) {
    this.stages = new StageProfiles(models);
  }

  async flamegraph(tree: ComparisonTree, q: ViewQuery & TreeQuery): Promise<Recorded<Flamegraph>> {
    const sp = await this.stages.stageProfile(tree, q.stage, q, q.filters);
    const root = q.root ?? [];
    const { granularity } = q;
    const { tree: t, trim } = atCallPath(
      () =>
        callTree(sp.profile, sp.sampleIndex, q.minFraction, {
          root,
          keys: granularityKeys(sp.profile, granularity),
          ...(q.maxNodes !== undefined ? { maxNodes: q.maxNodes } : {}),
        }),
      `stage "${sp.stage.name}"`,
    );
    return {
      stageId: sp.stage.id,
      kind: sp.kind,
      granularity,
      sampleType: sp.sampleType,
      unit: sp.unit,
      total: percentageBase(sp.profile, sp.sampleIndex),
      sampleTypes: sp.profile.sampleTypes.map((x) => describeSampleType(x, sp.kind, sp.profile.durationNanos)),
      profiles: sp.artifacts.map((a) => a.id),
      root: [...root],
      tree: t,
      trim,
      ...fullNamesField(
        granularity,
        [sp.profile],
        [...treeNames(t)].map((name) => ({ name })),
      ),
    };
  }

  async top(tree: ComparisonTree, q: ViewQuery): Promise<Top> {
    const sp = await this.stages.stageProfile(tree, q.stage, q, q.filters);
    const { granularity } = q;
    const keys = granularityKeys(sp.profile, granularity);
    const rows = sortByFlat(flatCum(sp.profile, sp.sampleIndex, undefined, keys));
    return {
      stageId: sp.stage.id,
      kind: sp.kind,
      granularity,
      sampleType: sp.sampleType,
      unit: sp.unit,
      total: percentageBase(sp.profile, sp.sampleIndex),
      rows,
      ...fullNamesField(granularity, [sp.profile], rows),
    };
  }

  async folded(tree: ComparisonTree, q: ViewQuery): Promise<string> {
    const sp = await this.stages.stageProfile(tree, q.stage, q, q.filters);
    return toFolded(sp.profile, sp.sampleIndex, granularityKeys(sp.profile, q.granularity));
  }

  async sandwich(tree: ComparisonTree, q: ViewQuery & { fn: string }): Promise<Recorded<Sandwich>> {
    const sp = await this.stages.stageProfile(tree, q.stage, q, q.filters);
    const s = sandwich(sp.profile, sp.sampleIndex, q.fn, granularityKeys(sp.profile, q.granularity));
    return {
      ...s,
      stageId: sp.stage.id,
      profiles: sp.artifacts.map((a) => a.id),
      kind: sp.kind,
      sampleType: sp.sampleType,
      unit: sp.unit,
      total: percentageBase(sp.profile, sp.sampleIndex),
    };
  }

  /**
   * Frames of a stage's whole call tree (or the diff's two trees) whose name matches `q.q` (a Go
   * regular expression, case-insensitive, bounded as the filters are), trimmed or not.
   */
  async search(tree: ComparisonTree, q: SearchQuery, filters: FrameFilters, granularity: Granularity): Promise<Search> {
    const pair = q.base !== undefined || q.target !== undefined;
    if (pair === (q.stage !== undefined))
      throw new ServiceError('invalid-request', 'search one stage (stage) or a diff (base and target), not both', {
        param: q.stage !== undefined ? 'stage' : 'base',
      });
    if (pair && (q.base === undefined || q.target === undefined))
      throw new ServiceError('invalid-request', 'a diff search needs both base and target', {
        param: q.base === undefined ? 'base' : 'target',
      });
    // Checked as written (so a refusal quotes the term), then matched case-insensitively, as the page does.
    if (!filterRegexp('q', q.q)) throw new ServiceError('invalid-request', 'q is empty', { param: 'q' });
    const re = compileGoRegexp(`(?i)${q.q}`);
    const first = await this.stages.stageProfile(
      tree,
      (pair ? q.base : q.stage) as string,
      q,
      filters,
      pair ? 'base' : 'stage',
    );
    const profiles = [first];
    if (pair)
      profiles.push(
        await this.stages.stageProfile(
          tree,
          q.target as string,
          { kind: first.kind, sampleType: first.sampleType },
          filters,
          'target',
        ),
      );
    const keyed = profiles.map((sp) => granularityKeys(sp.profile, granularity));
    const shared =
      keyed.length === 2
        ? unionKeys(keyed[0]!, keyed[1]!)
        : { keys: keyed[0]!.keys, base: keyed[0]!.frameKey, target: keyed[0]!.frameKey };
    const sides = profiles.map((sp, i) => ({
      stackOffsets: sp.profile.stackOffsets,
      stackFrames: sp.profile.stackFrames,
      frameKey: i === 0 ? shared.base : shared.target,
      stackValues: stackTotals(sp.profile, sp.sampleIndex),
    }));
    const r = searchStacks(sides, shared.keys, (label) => re.test(label), q.limit);
    const both = profiles.length === 2;
    return {
      q: q.q,
      kind: first.kind,
      granularity,
      sampleType: first.sampleType,
      unit: first.unit,
      stages: profiles.map((sp) => sp.stage.id),
      totals: profiles.map((sp) => percentageBase(sp.profile, sp.sampleIndex)),
      matched: both ? [r.matchedA, r.matchedB] : [r.matchedA],
      frames: r.frames,
      names: r.names,
      hits: r.hits.map((h) => ({ path: h.path, values: both ? [h.valueA, h.valueB] : [h.valueA] })),
    };
  }

  /** The stage's load-test runs in upload order, a file of several runs giving each (runInFile 1-based). */
  async loadTests(
    st: StageWithArtifacts,
  ): Promise<{ artifact: Artifact; run: LoadTestRun; runInFile: number | null }[]> {
    const out: { artifact: Artifact; run: LoadTestRun; runInFile: number | null }[] = [];
    for (const a of st.artifacts.filter((x) => x.kind === 'loadtest')) {
      const parsed = await this.models.get(a);
      if (parsed.kind !== 'loadtest') continue;
      for (const [i, run] of parsed.runs.entries())
        out.push({ artifact: a, run, runInFile: parsed.runs.length > 1 ? i + 1 : null });
    }
    return out;
  }

  /** The requests each of a stage's profiles divides by (requests.ts), for the given profiles. */
  async perRequest(tree: ComparisonTree, st: StageWithArtifacts, profiles: Artifact[]): Promise<PerRequest> {
    const set = stageRunSet(st, headlineFormat(tree));
    // Only load tests with absolute times can have a timeline covering a profile's window.
    const timed = st.artifacts.some((a) => {
      const k = kinded(a);
      return k.kind === 'loadtest' && k.summary.meta?.startedAt != null;
    });
    const loadTests = timed ? await this.loadTests(st) : [];
    return perRequest(profileRequests(st, profiles, loadTests, set));
  }

  /** A stage's divisor for its profiles of one kind. */
  async kindPerRequest(tree: ComparisonTree, st: StageWithArtifacts, kind: ProfileKind): Promise<PerRequest> {
    return this.perRequest(tree, st, profilesOfKind(st, kind));
  }

  /**
   * Per function, the benchstat test of its flat and cum between the stages' profiles, one value per
   * profile normalised alike on both sides: per request when every profile has its requests, else per
   * second, else as recorded. Only the NOISE_MAX_FUNCTIONS functions with the largest cum in any one
   * profile are tested (an exact U test of 25+25 runs with ties takes milliseconds; a profile can hold
   * 10^5 functions).
   */
  async noiseTest(
    tree: ComparisonTree,
    base: StageProfile,
    target: StageProfile,
    filters: FrameFilters,
    granularity: Granularity,
  ): Promise<NoiseTest> {
    const side = async (sp: StageProfile) => {
      const requests = await this.perRequest(tree, sp.stage, sp.artifacts);
      const perProfile: Map<string, { flat: number; cum: number }>[] = [];
      const perSecond: (number | null)[] = [];
      const totals: number[] = [];
      for (const a of sp.artifacts) {
        const p = filterProfile(await this.stages.profile(a), filters);
        const idx = p.sampleTypes.findIndex((t) => t.type === sp.sampleType);
        const rows = idx < 0 ? [] : flatCum(p, idx, undefined, granularityKeys(p, granularity));
        perProfile.push(new Map(rows.map((r) => [r.name, { flat: r.flat, cum: r.cum }])));
        perSecond.push(p.durationNanos > 0 ? p.durationNanos / 1e9 : null);
        totals.push(idx < 0 ? 0 : total(p, idx));
      }
      return { perProfile, perRequest: requests.profiles.map((r) => r.requests), perSecond, totals };
    };
    const b = await side(base);
    const t = await side(target);
    const usable = (xs: (number | null)[]) => xs.every((d) => d !== null && d > 0);
    const normalisation = usable([...b.perRequest, ...t.perRequest])
      ? 'per-request'
      : usable([...b.perSecond, ...t.perSecond])
        ? 'per-second'
        : 'raw';
    const divisors = (s: typeof b) =>
      s.perProfile.map((_, i) =>
        normalisation === 'per-request' ? s.perRequest[i]! : normalisation === 'per-second' ? s.perSecond[i]! : 1,
      );
    const bd = divisors(b);
    const td = divisors(t);
    const weight = new Map<string, number>();
    for (const [s, d] of [
      [b, bd],
      [t, td],
    ] as const)
      s.perProfile.forEach((m, i) => {
        for (const [k, v] of m) weight.set(k, Math.max(weight.get(k) ?? 0, Math.abs(v.cum) / d[i]!));
      });
    const names = [...weight]
      .sort((x, y) => y[1] - x[1] || (x[0] < y[0] ? -1 : 1))
      .slice(0, NOISE_MAX_FUNCTIONS)
      .map(([k]) => k);
    const nBase = b.perProfile.length;
    const nTarget = t.perProfile.length;
    const byCounts = verdictByCounts(nBase, nTarget);
    // The family tested: functions whose cum, over the profiles of both stages pooled, spreads by at least
    // NOISE_TEST_FLOOR of a profile's median total and is non-zero in at least as many profiles as the
    // smaller stage has (fewer could not separate the stages). Which functions pass does not depend on
    // which stage a profile came from, so under "nothing changed" their U tests stay exact and
    // Benjamini–Hochberg's bound on false discoveries holds over the family (independent filtering);
    // functions that never move that much are not tested and cannot be called changes.
    const values = (s: typeof b, d: number[], name: string, k: 'flat' | 'cum') =>
      s.perProfile.map((m, i) => (m.get(name)?.[k] ?? 0) / d[i]!);
    const pooledTotals = [...b.totals.map((x, i) => x / bd[i]!), ...t.totals.map((x, i) => x / td[i]!)];
    const floorValue = NOISE_TEST_FLOOR * Math.abs(estimate(pooledTotals)?.median ?? 0);
    const family: { name: string; cum: Verdict; flat: Verdict }[] = [];
    const untested: string[] = [];
    for (const name of names) {
      const bc = values(b, bd, name, 'cum');
      const tc = values(t, td, name, 'cum');
      let lo = Number.POSITIVE_INFINITY;
      let hi = Number.NEGATIVE_INFINITY;
      let nonZero = 0;
      for (const xs of [bc, tc])
        for (const x of xs) {
          lo = Math.min(lo, x);
          hi = Math.max(hi, x);
          if (x !== 0) nonZero++;
        }
      if (hi - lo >= floorValue && hi - lo > 0 && nonZero >= Math.min(nBase, nTarget))
        family.push({
          name,
          cum: verdict(bc, tc),
          flat: verdict(values(b, bd, name, 'flat'), values(t, td, name, 'flat')),
        });
      else untested.push(name);
    }
    const fromFamily = (k: 'flat' | 'cum') =>
      judgedFamily(
        family.map((f) => ({ p: f[k].p ?? 1, nBase: f[k].nBase, nTarget: f[k].nTarget, ratio: f[k].ratio })),
      );
    const cumJudged = fromFamily('cum');
    const flatJudged = fromFamily('flat');
    const functions = new Map<string, FunctionNoise>();
    const cum = new Map<string, Verdict>();
    const brief = (v: Verdict): VerdictBrief => ({ status: v.status, p: v.p, q: v.q ?? null });
    family.forEach((f, i) => {
      const vc = { ...cumJudged[i]!, ratio: f.cum.ratio };
      cum.set(f.name, vc);
      functions.set(f.name, { flat: brief({ ...flatJudged[i]!, ratio: f.flat.ratio }), cum: brief(vc) });
    });
    // Below the floor: within the noise by the family's rule, untested (no p) where the runs allow a test.
    for (const name of untested) {
      const v = verdict(values(b, bd, name, 'cum'), values(t, td, name, 'cum'));
      const vc: Verdict =
        v.status === 'significant' || v.status === 'no-change' ? { ...v, status: 'no-change', p: null, q: null } : v;
      cum.set(name, vc);
      functions.set(name, { flat: brief(vc), cum: brief(vc) });
    }
    // The stage's total is one figure tested alone (benchstat's rule), as the stage table tests it.
    const totalVerdict = verdict(
      b.totals.map((x, i) => x / bd[i]!),
      t.totals.map((x, i) => x / td[i]!),
    );
    const unit =
      normalisation === 'per-request'
        ? `${base.unit}/request`
        : normalisation === 'per-second'
          ? `${base.unit}/s`
          : base.unit;
    return {
      noise: {
        status: byCounts === 'single-run' || byCounts === 'too-few-runs' ? byCounts : 'tested',
        tested: family.length,
        candidates: names.length,
        floor: NOISE_TEST_FLOOR,
        normalisation,
        unit,
        nBase,
        nTarget,
        alpha: BENCHSTAT_ALPHA,
        minP: minimumUTestP(nBase, nTarget),
        runsNeeded: runsNeeded(BENCHSTAT_ALPHA),
      },
      functions,
      cum,
      total: brief(totalVerdict),
    };
  }

  /** The diff of two stages (see the diff endpoint), with what the change engine reads of it. */
  async diffResult(tree: ComparisonTree, q: DiffQuery): Promise<DiffResult> {
    const base = await this.stages.stageProfile(tree, q.base, q, q.filters, 'base');
    const target = await this.stages.stageProfile(
      tree,
      q.target,
      { kind: base.kind, sampleType: base.sampleType },
      q.filters,
      'target',
    );
    let mode: DiffMode;
    let modeReason: string | null = null;
    let perReq: { base: PerRequest; target: PerRequest } | null = null;
    if (q.mode === 'per-request' || q.mode === 'auto') {
      perReq = {
        base: await this.perRequest(tree, base.stage, base.artifacts),
        target: await this.perRequest(tree, target.stage, target.artifacts),
      };
    }
    if (q.mode === 'auto') {
      const measured = perReq!.base.measured && perReq!.target.measured;
      mode = measured ? 'per-request' : 'absolute';
      modeReason = measured
        ? 'every profile of both stages has its own load run: per request'
        : 'not every profile of both stages has its own load run: absolute (as go tool pprof -diff_base)';
      if (!measured) perReq = null;
    } else mode = q.mode;
    if (mode === 'per-request') {
      const missing = (['base', 'target'] as const).find((k) => perReq![k].requests === null);
      if (missing) {
        const st = missing === 'base' ? base.stage : target.stage;
        throw new ServiceError(
          'no-requests',
          `per-request needs a load test in stage "${st.name}" and ${missing === 'base' ? 'its' : 'its'} profiles to have a window (snapshots have none: use share)`,
          { param: 'mode' },
        );
      }
    }
    const root = q.root ?? [];
    const { granularity } = q;
    const d = atCallPath(
      () =>
        diffProfiles(base.profile, target.profile, {
          sampleType: base.sampleType,
          mode,
          minFraction: q.minFraction,
          root,
          keys: keysOf(granularity),
          ...(q.maxNodes !== undefined ? { maxNodes: q.maxNodes } : {}),
          ...(perReq && mode === 'per-request'
            ? { baseRequests: perReq.base.requests!, targetRequests: perReq.target.requests! }
            : {}),
          ...(base.unfilteredTotal !== null || target.unfilteredTotal !== null
            ? {
                scaleTotals: {
                  base: base.unfilteredTotal ?? total(base.profile, base.sampleIndex),
                  target: target.unfilteredTotal ?? total(target.profile, target.sampleIndex),
                },
              }
            : {}),
        }),
      `stage "${base.stage.name}" or "${target.stage.name}"`,
    );
    const noise = await this.noiseTest(tree, base, target, q.filters, granularity);
    const warnings: string[] = [];
    if (
      sinceProcessStart(base.kind, base.sampleType, base.profile.durationNanos) &&
      (mode === 'absolute' || mode === 'normalize')
    )
      warnings.push(
        `${base.sampleType} of a ${base.kind === 'heap' ? 'heap snapshot' : `${base.kind} profile without a window`} accumulates since the process started: absolute values also compare the two processes' uptimes and loads. Prefer "share", or record a window (allocs?seconds=N) for "per-request".`,
      );
    if (
      base.kind === 'cpu' &&
      mode === 'absolute' &&
      base.profile.durationNanos > 0 &&
      target.profile.durationNanos > 0
    ) {
      const r = target.profile.durationNanos / base.profile.durationNanos;
      if (r < 0.9 || r > 1.1)
        warnings.push(
          `The profiles cover different durations (${(base.profile.durationNanos / 1e9).toFixed(1)} s vs ${(target.profile.durationNanos / 1e9).toFixed(1)} s): absolute CPU time is not comparable; use "share" or "per-request".`,
        );
    }
    return {
      view: {
        mode,
        modeReason,
        kind: base.kind,
        granularity,
        unit: d.unit,
        sampleType: d.sampleType,
        baseTotal: d.baseTotal,
        targetTotal: d.targetTotal,
        scale: d.scale,
        warnings,
        perRequest:
          perReq && mode === 'per-request'
            ? {
                baseRequests: perReq.base.requests!,
                targetRequests: perReq.target.requests!,
                method: sameOrBoth(describeDivisor(perReq.base), describeDivisor(perReq.target)),
                measured: perReq.base.measured && perReq.target.measured,
              }
            : null,
        noise: noise.noise,
        root: [...root],
        tree: withVerdicts(d.tree, noise.functions, root.length === 0 ? noise.total : null),
        trim: d.trim,
        top: d.rows.map((r) => {
          const verdict = noise.functions.get(r.name) ?? null;
          // Removed or new only when the test says so: an empty side within the noise is a change like any other.
          const status =
            noise.noise.status === 'tested' &&
            (r.status === 'removed' || r.status === 'new') &&
            verdict?.cum.status !== 'significant'
              ? 'changed'
              : r.status;
          return { ...r, status, verdict };
        }),
      },
      base,
      target,
      noise,
    };
  }

  /** The top functions' cost at every stage: the part of the story no single diff shows. */
  async trajectory(
    tree: ComparisonTree,
    q: ProfileChoice & { n: number; granularity: Granularity },
  ): Promise<RecordedTrajectory> {
    const g = q.granularity;
    type StagePoints = {
      rows: Map<string, { flat: number; cum: number }>;
      total: number;
      /** With several profiles: each profile's per-function figures and total. */
      runs: { rows: Map<string, { flat: number; cum: number }>; total: number }[] | null;
    };
    const perStage: (StagePoints | null)[] = [];
    let unit = '';
    let kind: ProfileKind | null = q.kind ?? null;
    let sampleType: string | null = q.sampleType ?? null;
    for (const st of tree.stages) {
      let sp: StageProfile;
      try {
        sp = await this.stages.stageProfile(tree, st.id, {
          ...(kind ? { kind } : {}),
          ...(sampleType ? { sampleType } : {}),
        });
      } catch (e) {
        if (e instanceof ServiceError && (e.code === 'no-profile' || e.code === 'not-found')) {
          perStage.push(null);
          continue;
        }
        throw e;
      }
      kind = sp.kind;
      sampleType = sp.sampleType;
      unit = sp.unit;
      let runs: StagePoints['runs'] = null;
      if (sp.artifacts.length > 1) {
        runs = [];
        for (const a of sp.artifacts) {
          const p = await this.stages.profile(a);
          const idx = p.sampleTypes.findIndex((t) => t.type === sp.sampleType);
          const rows = new Map(
            flatCum(p, idx, undefined, granularityKeys(p, g)).map((r) => [r.name, { flat: r.flat, cum: r.cum }]),
          );
          runs.push({ rows, total: [...rows.values()].reduce((x, r) => x + r.flat, 0) });
        }
      }
      perStage.push({
        rows: new Map(
          flatCum(sp.profile, sp.sampleIndex, undefined, granularityKeys(sp.profile, g)).map((r) => [
            r.name,
            { flat: r.flat, cum: r.cum },
          ]),
        ),
        total: percentageBase(sp.profile, sp.sampleIndex),
        runs,
      });
    }
    // Rank functions by their largest share of flat time at any stage.
    const best = new Map<string, number>();
    for (const s of perStage) {
      if (!s || s.total === 0) continue;
      for (const [name, v] of s.rows)
        best.set(name, Math.max(best.get(name) ?? 0, Math.abs(v.flat) / Math.abs(s.total)));
    }
    const names = [...best]
      .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
      .slice(0, q.n)
      .map(([k]) => k);
    return {
      kind,
      sampleType,
      unit,
      stages: tree.stages.map((s) => ({ stageId: s.id, name: s.name })),
      functions: names.map((name) => ({
        name,
        points: perStage.map((s, i) =>
          s
            ? {
                stageId: tree.stages[i]!.id,
                flat: s.rows.get(name)?.flat ?? 0,
                cum: s.rows.get(name)?.cum ?? 0,
                total: s.total,
                spread: s.runs ? shareSpread(s.runs.map((r) => (r.rows.get(name)?.cum ?? 0) / r.total || 0)) : null,
              }
            : null,
        ),
      })),
    };
  }

  async timeline(tree: ComparisonTree): Promise<Timeline> {
    const stages = [];
    for (const st of tree.stages) {
      const runs = await this.loadTests(st);
      stages.push({
        stageId: st.id,
        name: st.name,
        runs: runs.map(({ artifact, run, runInFile }) => ({
          artifactId: artifact.id,
          filename: artifact.filename,
          runInFile,
          format: run.format,
          summary: run.summary,
          timeline: run.timeline,
          latencyDistribution: run.latencyDistribution,
        })),
      });
    }
    return { stages };
  }

  /** A stage's `go test -bench` outputs as one run (their results concatenated), or null. */
  async benchmarkRun(st: StageWithArtifacts): Promise<BenchmarkRun | null> {
    const runs: BenchmarkRun[] = [];
    for (const a of st.artifacts.filter((x) => x.kind === 'benchmark')) {
      const p = await this.models.get(a);
      if (p.kind === 'benchmark') runs.push(p.benchmark);
    }
    return runs.length === 0 ? null : { ...runs[0]!, benchmarks: runs.flatMap((r) => r.benchmarks) };
  }

  async benchmarks(tree: ComparisonTree, baseRef: string, targetRef: string) {
    const load = async (ref: string, param: string): Promise<BenchmarkRun> => {
      const st = findStage(tree, ref, param);
      const run = await this.benchmarkRun(st);
      if (!run) throw new ServiceError('no-benchmark', `stage "${st.name}" has no go test -bench output`, { param });
      return run;
    };
    return benchmarkVerdicts(compareBenchmarks(await load(baseRef, 'base'), await load(targetRef, 'target')));
  }

  async gcTraces(st: StageWithArtifacts): Promise<{ artifactId: string; filename: string; trace: GcTrace }[]> {
    const traces: { artifactId: string; filename: string; trace: GcTrace }[] = [];
    for (const a of st.artifacts.filter((x) => x.kind === 'gctrace')) {
      const p = await this.models.get(a);
      if (p.kind === 'gctrace') traces.push({ artifactId: a.id, filename: a.filename, trace: p.gctrace });
    }
    return traces;
  }

  /**
   * A stage's runtime files: its execution traces (summary, timeline, and the requests served during
   * each, by the per-request rule), the timeline's series of its runtime-metric files, and its
   * scheduler traces' summaries.
   */
  /**
   * What the runtime did in a stage: its traces (with their timelines when `timelines`; without, the
   * figures come from the summary stored at upload and no trace is parsed — what the change engine's
   * rows need), its metrics windows and scheduler traces, each window with its requests.
   */
  async runtimeStage(
    tree: ComparisonTree,
    st: StageWithArtifacts,
    opts: { timelines: boolean } = { timelines: true },
  ): Promise<RuntimeStage> {
    // The traces as their sched profile: the same window (the trace's span) and run pairing as any profile.
    const asProfiles = profilesOfKind(st, 'trace-sched').filter((a) => a.kind === 'trace');
    const requests = asProfiles.length > 0 ? (await this.perRequest(tree, st, asProfiles)).profiles : [];
    const traces: RuntimeStage['traces'] = [];
    for (const [i, a] of asProfiles.entries()) {
      let summary: RuntimeStage['traces'][number]['summary'];
      let timeline: RuntimeStage['traces'][number]['timeline'] = NO_TIMELINE;
      if (opts.timelines) {
        const parsed = await this.models.get(a);
        if (parsed.kind !== 'trace') continue;
        ({ timeline, ...summary } = parsed.trace.summary);
        summary = { ...summary, requests: parsed.trace.requests ?? null };
      } else {
        // The trace artifact's own summary (profilesOfKind gave it the derived profile's).
        const stored = st.artifacts.find((x) => x.id === a.id);
        const k = stored && kinded(stored);
        if (k?.kind !== 'trace') continue;
        summary = k.summary;
      }
      const fetched = captureFileOf(st, a)?.fetchedFrom ?? null;
      traces.push({
        artifactId: a.id,
        filename: a.filename,
        summary,
        timeline,
        requests: requests[i]?.requests ?? null,
        divisor: requests[i]?.method ?? null,
        wallClock: summary.startTime
          ? { start: summary.startTime, source: 'trace-clock' }
          : fetched
            ? { start: fetched, source: 'capture' }
            : { start: null, source: 'none' },
      });
    }
    const metrics: RuntimeStage['metrics'] = [];
    const windows: { a: Artifact; m: MetricsModel; startMs: number }[] = [];
    for (const a of st.artifacts.filter((x) => x.kind === 'metrics')) {
      const parsed = await this.models.get(a);
      if (parsed.kind !== 'metrics') continue;
      const m = parsed.metrics;
      // The window's deltas run from the first successful scrape to the last.
      const first = m.times.find((_, i) => m.series.some((x) => seriesHasScrape(x, i))) ?? 0;
      windows.push({ a, m, startMs: Date.parse(m.start) + first * 1000 });
    }
    // The metrics windows counted like profiles: the per-request divisor reads a window's start and length.
    const counted =
      windows.length > 0
        ? (
            await this.perRequest(
              tree,
              st,
              windows.map(({ a, m, startMs }) => ({
                ...a,
                summary: { durationNanos: m.windowSeconds * 1e9, timeNanos: startMs * 1e6 },
              })),
            )
          ).profiles
        : [];
    windows.forEach(({ a, m, startMs }, i) => {
      metrics.push({
        artifactId: a.id,
        filename: a.filename,
        start: m.start,
        times: m.times,
        series: [
          ...m.series.filter((x) => TIMELINE_METRICS.has(x.name) && Object.keys(x.labels).length === 0),
          ...m.series.filter((x) => x.type === 'counter' && isRequestCounterName(x.name)).slice(0, MAX_REQUEST_SERIES),
        ],
        windowStart: new Date(startMs).toISOString(),
        windowSeconds: m.windowSeconds,
        highlights: m.highlights,
        requests: counted[i]?.requests ?? null,
        divisor: counted[i]?.method ?? null,
      });
    });
    const schedtraces = st.artifacts.flatMap((a) => {
      const k = kinded(a);
      return k.kind === 'schedtrace' ? [{ artifactId: a.id, filename: a.filename, summary: k.summary }] : [];
    });
    return { stageId: st.id, name: st.name, traces, metrics, schedtraces };
  }

  async gc(tree: ComparisonTree): Promise<GcStages> {
    const stages = [];
    for (const st of tree.stages) stages.push({ stageId: st.id, name: st.name, traces: await this.gcTraces(st) });
    return { stages };
  }
}

/** benchstat's comparison with each row's verdict in the change engine's words. */
export function benchmarkVerdicts(d: BenchmarkDiff): Benchmarks {
  return {
    ...d,
    rows: d.rows.map((r) => ({
      ...r,
      verdict: judged(
        {
          p: r.p,
          nBase: r.nBase,
          nTarget: r.nTarget,
          ratio: r.base.median !== 0 ? r.target.median / r.base.median : null,
        },
        d.alpha,
      ),
    })),
  };
}

function sameOrBoth(a: string, b: string): string {
  return a === b ? a : `base: ${a}; target: ${b}`;
}
