import type { Artifact, ComparisonTree, StageWithArtifacts, Store } from '../store/index.ts';
import type { Parsed } from '../ingest/detect.ts';
import type { Profile } from '../model/profile.ts';
import type { LoadTestRun } from '../model/loadtest.ts';
import type { BenchmarkRun } from '../model/benchmark.ts';
import type { GcTrace } from '../model/gctrace.ts';
import { mergeProfiles } from '../analysis/merge.ts';
import { flatCum, percentageBase, sortByFlat, total } from '../analysis/flat-cum.ts';
import { callTree } from '../analysis/call-tree.ts';
import { type DiffMode, type DiffNode, diffProfiles } from '../analysis/diff.ts';
import { toFolded } from '../analysis/folded.ts';
import { type FrameFilters, filterProfile } from '../analysis/filter.ts';
import { sandwich } from '../analysis/sandwich.ts';
import { describeProfile, isCumulativeSinceStart } from '../analysis/sample-types.ts';
import { BENCHSTAT_ALPHA, compareBenchmarks } from '../analysis/benchstat.ts';
import { estimate, type RunEstimate, runsNeeded, type Verdict, verdict } from '../analysis/significance.ts';
import { ApiError } from '../routes/errors.ts';
import type { ModelCache } from './models.ts';

type Latency3 = { p50: number | null; p95: number | null; p99: number | null };
type Ratios = { rps: number | null; p50: number | null; p95: number | null; p99: number | null };

/** One load-test run behind a stage row, with its own figures (req/s, ms). */
export interface StageRun {
  artifactId: string;
  filename: string;
  rps: number | null;
  requests: number | null;
  errors: number | null;
  latencyMs: Latency3;
}

/** Median and 95 % interval across a stage's runs, per figure (null where no run has the figure). */
export interface StageEstimates {
  rps: RunEstimate | null;
  p50: RunEstimate | null;
  p95: RunEstimate | null;
  p99: RunEstimate | null;
}

/** benchstat-style verdicts of one stage against another, per figure. */
export interface StageVerdicts {
  rps: Verdict;
  p50: Verdict;
  p95: Verdict;
  p99: Verdict;
}

/**
 * How a row's figures summarise its runs:
 * - `single-run`: one run, its figures as the tool printed them (no noise estimate);
 * - `median`: several runs of the same tool and settings: each figure is the median across runs, with
 *   benchstat's 95 % interval in `estimates`, and verdicts against other stages;
 * - `aggregate`: several runs with different settings: requests/duration and request-weighted latency
 *   (no noise estimate: the runs measure different things);
 * - `none`: the stage has no load test.
 */
export type StageSummaryKind = 'single-run' | 'median' | 'aggregate' | 'none';

export interface StageRow {
  stageId: string;
  name: string;
  note: string;
  rps: number | null;
  requests: number | null;
  errors: number | null;
  latencyMs: Latency3;
  vsPrevious: Ratios | null;
  vsBaseline: Ratios | null;
  /** Load tests behind the figures. */
  loadTests: number;
  /** True for `aggregate` rows (request-weighted figures of runs with different settings). */
  aggregated: boolean;
  summary: StageSummaryKind;
  /** The runs behind the figures, each with its own figures, in upload order. */
  runs: StageRun[];
  /** Median and 95 % interval across `runs` (`median` rows; null otherwise). */
  estimates: StageEstimates | null;
  /** Mann–Whitney U verdicts of this stage against the previous stage and the baseline (null for the first). */
  significance: { vsPrevious: StageVerdicts | null; vsBaseline: StageVerdicts | null };
  /** Which runs the figures come from: their format, ids, how many other runs the stage holds. */
  source: { format: string | null; artifactIds: string[]; otherRuns: number; headline: boolean };
}

/** Summary stored with a profile artifact (what the stage view lists without re-parsing). */
export function profileSummary(p: Profile) {
  // Own properties even for a type named `__proto__` (an assignment would set the prototype instead).
  const totals: Record<string, number> = Object.fromEntries(
    p.sampleTypes.map((t, i) => [t.type, percentageBase(p, i)]),
  );
  const d = describeProfile(p);
  return {
    sampleTypes: p.sampleTypes,
    defaultSampleType: p.defaultSampleType,
    kind: d.kind,
    durationNanos: p.durationNanos,
    timeNanos: p.timeNanos,
    numSamples: p.stats.numSamples,
    totals,
  };
}

/** The summary kept in the store for any parsed artifact. */
export function artifactSummary(parsed: Parsed): unknown {
  switch (parsed.kind) {
    case 'profile':
      return profileSummary(parsed.profile);
    case 'loadtest':
      return parsed.run.summary;
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
      };
    }
    case 'schedtrace':
      return { ...parsed.schedtrace.summary, gc: parsed.schedtrace.gc?.summary ?? null };
    case 'trace': {
      // the figures without the timeline and the long lists (the parsed model has them)
      const { timeline: _timeline, entryFunctions, ...rest } = parsed.trace.summary;
      return {
        ...rest,
        entryFunctions: { functions: entryFunctions.functions.slice(0, 10), omitted: entryFunctions.omitted },
      };
    }
  }
}

function ratio(a: number | null, b: number | null): number | null {
  return a !== null && b !== null && b !== 0 ? a / b : null;
}

function ratios(cur: StageRow, old: StageRow | undefined): Ratios | null {
  if (!old) return null;
  return {
    rps: ratio(cur.rps, old.rps),
    p50: ratio(cur.latencyMs.p50, old.latencyMs.p50),
    p95: ratio(cur.latencyMs.p95, old.latencyMs.p95),
    p99: ratio(cur.latencyMs.p99, old.latencyMs.p99),
  };
}

/** Request-weighted mean of a figure over runs that have it. */
function weighted(runs: LoadTestRun['summary'][], pick: (s: LoadTestRun['summary']) => number | null): number | null {
  let num = 0;
  let den = 0;
  for (const s of runs) {
    const v = pick(s);
    if (v === null || v === undefined) continue;
    const w = s.requests ?? 1;
    num += v * w;
    den += w;
  }
  return den > 0 ? num / den : null;
}

/**
 * What makes two runs repeats of one measurement: the tool, the target and the load it applied
 * (connections, threads, constant rate, configured duration). Runs that differ in any of these
 * measure different things and are never treated as samples of one distribution.
 */
export function runSettingsKey(format: string, s: LoadTestRun['summary']): string {
  const m = s.meta ?? ({} as LoadTestRun['summary']['meta']);
  const pick = (v: unknown) => (v === undefined || v === null ? '' : String(v));
  return [format, m.targetUrl, m.connections, m.threads, m.rate, m.configuredDuration].map(pick).join('\u0000');
}

/** The per-run figures a verdict compares: one value per run (req/s, ms). */
function perRun(row: StageRow, k: 'rps' | 'p50' | 'p95' | 'p99'): (number | null)[] {
  // An aggregate row holds runs of different settings: its one figure stands alone, like a single run.
  if (row.summary !== 'median') {
    const v = k === 'rps' ? row.rps : row.latencyMs[k];
    return v === null ? [] : [v];
  }
  return row.runs.map((r) => (k === 'rps' ? r.rps : r.latencyMs[k]));
}

/*
 * The exact U test costs up to ~40 ms for 50 runs against 50 (benchstat's exact limit), and the stage
 * table is rebuilt on every read of a comparison: verdicts are kept by their inputs, so a read costs
 * nothing new and an upload recomputes only the pairs whose runs changed. Bounded: least recently used
 * entries go first.
 */
const VERDICT_MEMO_MAX = 4096;
const verdictMemo = new Map<string, Verdict>();

function memoVerdict(base: (number | null)[], target: (number | null)[]): Verdict {
  const key = `${base.join(',')}|${target.join(',')}`;
  const hit = verdictMemo.get(key);
  if (hit) {
    verdictMemo.delete(key);
    verdictMemo.set(key, hit);
    return hit;
  }
  const v = verdict(base, target);
  verdictMemo.set(key, v);
  if (verdictMemo.size > VERDICT_MEMO_MAX) verdictMemo.delete(verdictMemo.keys().next().value!);
  return v;
}

function verdicts(cur: StageRow, old: StageRow | undefined): StageVerdicts | null {
  if (!old) return null;
  const v = (k: 'rps' | 'p50' | 'p95' | 'p99') => memoVerdict(perRun(old, k), perRun(cur, k));
  return { rps: v('rps'), p50: v('p50'), p95: v('p95'), p99: v('p99') };
}

/**
 * The load-test format the stage table reads: the one present in the most stages (ties: the one
 * with more requests). Runs of different tools measure different things — a closed-loop wrk run
 * saturates the service, a constant-rate vegeta run holds a fixed load — so a row never mixes them;
 * the other runs stay in the timelines.
 */
export function headlineFormat(tree: ComparisonTree): string | null {
  const stagesWith = new Map<string, number>();
  const requests = new Map<string, number>();
  for (const st of tree.stages) {
    const formats = new Set<string>();
    for (const a of st.artifacts) {
      if (a.kind !== 'loadtest') continue;
      formats.add(a.format);
      requests.set(a.format, (requests.get(a.format) ?? 0) + ((a.summary as LoadTestRun['summary']).requests ?? 0));
    }
    for (const f of formats) stagesWith.set(f, (stagesWith.get(f) ?? 0) + 1);
  }
  const ranked = [...stagesWith].sort(
    (x, y) => y[1] - x[1] || (requests.get(y[0]) ?? 0) - (requests.get(x[0]) ?? 0) || (x[0] < y[0] ? -1 : 1),
  );
  return ranked[0]?.[0] ?? null;
}

/**
 * The stage table: one row per stage from its load tests' summaries (read from the store, no
 * re-parsing), all rows from the same tool (see headlineFormat); a stage without a run of that
 * tool uses its own largest run, and says so in `source`. Several runs of the tool in one stage:
 * - all with the same settings (repeated runs): each figure is the median across runs with benchstat's
 *   95 % interval, and every stage-to-stage change gets a Mann–Whitney U verdict (`significance`);
 * - with different settings: requests and errors add up, rps is total requests over total duration,
 *   latency percentiles are request-weighted means (an approximation, flagged by `aggregated`).
 */
export function stageTable(tree: ComparisonTree): StageRow[] {
  const headline = headlineFormat(tree);
  const rows: StageRow[] = tree.stages.map((st) => {
    const all = st.artifacts.filter((a) => a.kind === 'loadtest');
    let used = all.filter((a) => a.format === headline);
    if (used.length === 0 && all.length > 0) {
      const biggest = [...all].sort(
        (x, y) =>
          ((y.summary as LoadTestRun['summary']).requests ?? 0) - ((x.summary as LoadTestRun['summary']).requests ?? 0),
      )[0]!;
      used = all.filter((a) => a.format === biggest.format);
    }
    const runs = used.map((a) => a.summary as LoadTestRun['summary']);
    const sum = (pick: (s: LoadTestRun['summary']) => number | null) =>
      runs.some((r) => pick(r) !== null) ? runs.reduce((a, r) => a + (pick(r) ?? 0), 0) : null;
    const requests = sum((s) => s.requests);
    const errors = sum((s) => s.errors);
    const stageRuns: StageRun[] = used.map((a, i) => ({
      artifactId: a.id,
      filename: a.filename,
      rps: runs[i]!.rps,
      requests: runs[i]!.requests,
      errors: runs[i]!.errors,
      latencyMs: { p50: runs[i]!.latencyMs.p50, p95: runs[i]!.latencyMs.p95, p99: runs[i]!.latencyMs.p99 },
    }));
    const repeated = runs.length > 1 && new Set(used.map((a, i) => runSettingsKey(a.format, runs[i]!))).size === 1;
    const summary: StageSummaryKind =
      runs.length === 0 ? 'none' : runs.length === 1 ? 'single-run' : repeated ? 'median' : 'aggregate';
    const source = {
      format: used[0]?.format ?? null,
      artifactIds: used.map((a) => a.id),
      otherRuns: all.length - used.length,
      headline: used[0]?.format === headline,
    };
    const base = {
      stageId: st.id,
      name: st.name,
      note: st.note,
      requests,
      errors,
      vsPrevious: null,
      vsBaseline: null,
      loadTests: runs.length,
      aggregated: summary === 'aggregate',
      summary,
      runs: stageRuns,
      significance: { vsPrevious: null, vsBaseline: null },
      source,
    };
    if (summary === 'median') {
      const est: StageEstimates = {
        rps: estimate(stageRuns.map((r) => r.rps)),
        p50: estimate(stageRuns.map((r) => r.latencyMs.p50)),
        p95: estimate(stageRuns.map((r) => r.latencyMs.p95)),
        p99: estimate(stageRuns.map((r) => r.latencyMs.p99)),
      };
      return {
        ...base,
        rps: est.rps?.median ?? null,
        latencyMs: { p50: est.p50?.median ?? null, p95: est.p95?.median ?? null, p99: est.p99?.median ?? null },
        estimates: est,
      };
    }
    const duration = runs.every((r) => r.durationSeconds !== null) ? sum((s) => s.durationSeconds) : null;
    return {
      ...base,
      rps:
        runs.length === 1
          ? runs[0]!.rps
          : requests !== null && duration
            ? requests / duration
            : weighted(runs, (s) => s.rps),
      latencyMs: {
        p50: weighted(runs, (s) => s.latencyMs.p50),
        p95: weighted(runs, (s) => s.latencyMs.p95),
        p99: weighted(runs, (s) => s.latencyMs.p99),
      },
      estimates: null,
    };
  });
  rows.forEach((r, i) => {
    r.vsPrevious = ratios(r, rows[i - 1]);
    r.vsBaseline = i === 0 ? null : ratios(r, rows[0]);
    r.significance = { vsPrevious: verdicts(r, rows[i - 1]), vsBaseline: i === 0 ? null : verdicts(r, rows[0]) };
  });
  return rows;
}

/**
 * The spread of a function's cum share of each profile across a stage's profiles (fractions 0..1):
 * the median with benchstat's interval, and the extremes.
 */
export interface ShareSpread {
  n: number;
  min: number;
  max: number;
  median: number;
  lo: number | null;
  hi: number | null;
}

function shareSpread(shares: number[]): ShareSpread | null {
  const e = estimate(shares);
  if (!e) return null;
  return { n: e.n, min: Math.min(...shares), max: Math.max(...shares), median: e.median, lo: e.lo, hi: e.hi };
}

/** A diff tree node with its function's cum verdict across the stages' profiles. */
export type NoisyDiffNode = DiffNode & {
  noise?: Pick<Verdict, 'status' | 'significant' | 'p'> | null;
  children: NoisyDiffNode[];
};

/**
 * Marks every node of a diff tree with its function's cum verdict (a call path's own runs are not
 * tested: the function's cum across all its paths stands for it). Iterative: trees can be deep.
 */
function withNodeNoise(root: DiffNode, functions: Map<string, FunctionNoise>): NoisyDiffNode {
  const copy = (n: DiffNode): NoisyDiffNode => ({ ...n, noise: functions.get(n.name)?.cum ?? null, children: [] });
  const out = copy(root);
  const stack: [DiffNode, NoisyDiffNode][] = [[root, out]];
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

/**
 * Requests served during one profile's window, or null when nothing tells (see
 * AnalysisService.profileRequests for the order of preference): a load-test timeline spanning the
 * window, else the profile's own run's req/s × its duration, else the stage's req/s × its duration.
 */
export function requestsForProfile(
  p: Pick<Profile, 'timeNanos' | 'durationNanos'>,
  loadTests: LoadTestRun[],
  pairedRps: number | null,
  stageRps: number | null,
): { requests: number; method: string } | null {
  const startMs = p.timeNanos / 1e6;
  const durMs = p.durationNanos / 1e6;
  if (!(durMs > 0)) return null;
  if (startMs > 0) {
    for (const run of loadTests) {
      const started = run.summary.meta.startedAt;
      const t0 = typeof started === 'number' ? started : typeof started === 'string' ? Date.parse(started) : Number.NaN;
      if (!Number.isFinite(t0) || !run.timeline || run.timeline.length === 0) continue;
      const t1 = t0 + (run.timeline[run.timeline.length - 1]!.t + 1) * 1000;
      // The run must span the whole window (one bucket of slack each side), not merely touch it.
      if (startMs < t0 - 1000 || startMs + durMs > t1 + 1000) continue;
      let n = 0;
      for (const b of run.timeline) {
        const bs = t0 + b.t * 1000;
        const overlap = Math.max(0, Math.min(bs + 1000, startMs + durMs) - Math.max(bs, startMs));
        n += (b.requests * overlap) / 1000;
      }
      if (n > 0) return { requests: n, method: `timeline of ${run.format} within the profile's window` };
    }
  }
  if (pairedRps !== null && pairedRps > 0)
    return { requests: (pairedRps * durMs) / 1000, method: "its run's rps × the profile's duration" };
  if (stageRps !== null && stageRps > 0)
    return {
      requests: (stageRps * durMs) / 1000,
      method: `stage rps (${stageRps.toFixed(1)}/s) × profile duration (${(durMs / 1000).toFixed(2)} s)`,
    };
  return null;
}

/** Picks and merges the profiles of a stage that hold a sample type. */
export interface StageProfile {
  profile: Profile;
  artifacts: Artifact[];
  sampleType: string;
  sampleIndex: number;
  unit: string;
  /** The stage's total before focus/ignore/hide/show; null when no filter applied. */
  unfilteredTotal: number | null;
}

/**
 * How per-profile figures are made comparable across runs before the U test:
 * - `per-request`: each profile divided by the requests served while it was taken (see
 *   profileRequests: a load-test timeline covering its window, else its own run's req/s × its duration,
 *   profiles pairing with the stage's runs in upload order, else the stage's req/s × its duration);
 * - `per-second`: divided by the profile's duration;
 * - `raw`: as recorded (snapshots and cumulative profiles have no duration).
 */
export type ProfileNormalisation = 'per-request' | 'per-second' | 'raw';

/** One function's flat and cum verdicts across the stages' profiles (see significance.ts). */
export interface FunctionNoise {
  flat: Pick<Verdict, 'status' | 'significant' | 'p'>;
  cum: Pick<Verdict, 'status' | 'significant' | 'p'>;
}

/** Noise across several profiles per stage, attached to a diff. */
export interface DiffNoise {
  normalisation: ProfileNormalisation;
  unit: string;
  nBase: number;
  nTarget: number;
  alpha: number;
  runsNeeded: number;
}

/** Functions (by their largest cum) whose change a diff tests against the noise. */
export const NOISE_MAX_FUNCTIONS = 2000;

/** A stage's profiles one by one: per function, its flat and cum normalised per `normalisation`. */
interface ProfileRuns {
  perProfile: Map<string, { flat: number; cum: number }>[];
  /** The divisor of each profile for each normalisation (null where unavailable). */
  divisors: { 'per-request': (number | null)[]; 'per-second': (number | null)[] };
}

export class AnalysisService {
  constructor(
    readonly store: Store,
    readonly models: ModelCache,
  ) {}

  stage(tree: ComparisonTree, stageId: string): StageWithArtifacts {
    const st = tree.stages.find((s) => s.id === stageId);
    if (!st) throw new ApiError(404, 'not-found', `comparison ${tree.comparison.id} has no stage ${stageId}`);
    return st;
  }

  /** The sample type a comparison view opens on: the first profile's default (CPU first). */
  defaultSampleType(tree: ComparisonTree): string | null {
    const profiles = tree.stages.flatMap((s) => s.artifacts.filter((a) => a.kind === 'profile'));
    const sums = profiles.map((a) => a.summary as ReturnType<typeof profileSummary>);
    return (sums.find((s) => s.kind === 'cpu') ?? sums[0])?.defaultSampleType ?? null;
  }

  /**
   * The stage's profiles that hold `sampleType`, merged. Go's heap and allocs endpoints hold the same
   * four sample types; the one whose default is the requested type wins, so they are never summed.
   */
  async stageProfile(
    tree: ComparisonTree,
    stageId: string,
    sampleType: string | undefined,
    filters: FrameFilters = {},
  ): Promise<StageProfile> {
    const st = this.stage(tree, stageId);
    // Without a sample type: the comparison's default when this stage has it, else the stage's own.
    const stageDefault = (
      st.artifacts.find((a) => a.kind === 'profile')?.summary as ReturnType<typeof profileSummary> | undefined
    )?.defaultSampleType;
    const cmpDefault = this.defaultSampleType(tree);
    const has = (t: string | null) =>
      !!t &&
      st.artifacts.some(
        (a) =>
          a.kind === 'profile' &&
          (a.summary as ReturnType<typeof profileSummary>).sampleTypes.some((x) => x.type === t),
      );
    const type = sampleType ?? (has(cmpDefault) ? cmpDefault : stageDefault);
    if (!type) throw new ApiError(404, 'no-profile', `stage "${st.name}" has no profile`);
    const withType = st.artifacts.filter(
      (a) =>
        a.kind === 'profile' &&
        (a.summary as ReturnType<typeof profileSummary>).sampleTypes.some((t) => t.type === type),
    );
    if (withType.length === 0)
      throw new ApiError(404, 'no-profile', `stage "${st.name}" has no profile with sample type "${type}"`);
    const byKind = new Map<string, Artifact[]>();
    for (const a of withType) {
      const s = a.summary as ReturnType<typeof profileSummary>;
      const k = `${s.kind}|${s.sampleTypes.map((t) => `${t.type}/${t.unit}`).join(',')}`;
      byKind.set(k, [...(byKind.get(k) ?? []), a]);
    }
    const groups = [...byKind.values()];
    const chosen =
      groups.find((g) => (g[0]!.summary as ReturnType<typeof profileSummary>).defaultSampleType === type) ?? groups[0]!;
    const profiles = await Promise.all(
      chosen.map(async (a) => (await this.models.get(a)) as Extract<Parsed, { kind: 'profile' }>),
    );
    const merged = mergeProfiles(profiles.map((p) => p.profile));
    const profile = filterProfile(merged, filters);
    const sampleIndex = profile.sampleTypes.findIndex((t) => t.type === type);
    return {
      profile,
      artifacts: chosen,
      sampleType: type,
      sampleIndex,
      unit: profile.sampleTypes[sampleIndex]!.unit,
      unfilteredTotal: profile === merged ? null : total(merged, sampleIndex),
    };
  }

  async flamegraph(
    tree: ComparisonTree,
    stageId: string,
    sampleType: string | undefined,
    minFraction: number,
    filters: FrameFilters,
  ) {
    const sp = await this.stageProfile(tree, stageId, sampleType, filters);
    const { tree: t, trim } = callTree(sp.profile, sp.sampleIndex, minFraction);
    const d = describeProfile(sp.profile);
    return {
      stageId,
      sampleType: sp.sampleType,
      unit: sp.unit,
      total: percentageBase(sp.profile, sp.sampleIndex),
      kind: d.kind,
      sampleTypes: d.sampleTypes,
      profiles: sp.artifacts.map((a) => a.id),
      tree: t,
      trim,
    };
  }

  async top(tree: ComparisonTree, stageId: string, sampleType: string | undefined, filters: FrameFilters) {
    const sp = await this.stageProfile(tree, stageId, sampleType, filters);
    return {
      stageId,
      sampleType: sp.sampleType,
      unit: sp.unit,
      total: percentageBase(sp.profile, sp.sampleIndex),
      rows: sortByFlat(flatCum(sp.profile, sp.sampleIndex)),
    };
  }

  async folded(
    tree: ComparisonTree,
    stageId: string,
    sampleType: string | undefined,
    filters: FrameFilters,
  ): Promise<string> {
    const sp = await this.stageProfile(tree, stageId, sampleType, filters);
    return toFolded(sp.profile, sp.sampleIndex);
  }

  async sandwich(
    tree: ComparisonTree,
    stageId: string,
    sampleType: string | undefined,
    fn: string,
    filters: FrameFilters,
  ) {
    const sp = await this.stageProfile(tree, stageId, sampleType, filters);
    const s = sandwich(sp.profile, sp.sampleIndex, fn);
    return { ...s, sampleType: sp.sampleType, unit: sp.unit, total: percentageBase(sp.profile, sp.sampleIndex) };
  }

  async loadTests(st: StageWithArtifacts): Promise<{ artifact: Artifact; run: LoadTestRun }[]> {
    const out: { artifact: Artifact; run: LoadTestRun }[] = [];
    for (const a of st.artifacts.filter((x) => x.kind === 'loadtest')) {
      const parsed = await this.models.get(a);
      if (parsed.kind === 'loadtest') out.push({ artifact: a, run: parsed.run });
    }
    return out;
  }

  /**
   * Requests the stage served during each of its chosen profiles' windows, one entry per profile
   * (null where nothing tells). In order of preference, for each profile:
   * 1. a load test with an absolute start time whose timeline covers the profile's window: its
   *    requests in the buckets overlapping the window (partial buckets pro rata);
   * 2. the run paired with the profile (the stage's headline runs pair with its profiles in upload
   *    order when there are as many of each): that run's req/s × the profile's duration;
   * 3. the stage's req/s (the median of its runs) × the profile's duration.
   * A stage of several profiles sums them, so the divisor of the merged profile is the requests of
   * exactly the windows it sampled, never those of a run that was not being profiled.
   */
  async profileRequests(
    tree: ComparisonTree,
    stageId: string,
    artifacts: Artifact[],
  ): Promise<{ requests: number | null; method: string | null }[]> {
    const st = this.stage(tree, stageId);
    const loadTests = await this.loadTests(st);
    const row = stageTable({ ...tree, stages: [st] })[0];
    const paired = row && row.runs.length === artifacts.length ? row.runs : null;
    const out: { requests: number | null; method: string | null }[] = [];
    for (const [i, a] of artifacts.entries()) {
      const p = ((await this.models.get(a)) as Extract<Parsed, { kind: 'profile' }>).profile;
      const found = requestsForProfile(
        p,
        loadTests.map((l) => l.run),
        paired?.[i]?.rps ?? null,
        row?.rps ?? null,
      );
      out.push(found ?? { requests: null, method: null });
    }
    return out;
  }

  /** Requests the stage served while its chosen profiles were taken (see profileRequests), summed. */
  async requestsDuring(
    tree: ComparisonTree,
    stageId: string,
    artifacts: Artifact[],
  ): Promise<{ requests: number; method: string }> {
    const each = await this.profileRequests(tree, stageId, artifacts);
    if (each.length > 0 && each.every((e) => e.requests !== null)) {
      const methods = [...new Set(each.map((e) => e.method!))];
      return {
        requests: each.reduce((a, e) => a + e.requests!, 0),
        method: each.length === 1 ? methods[0]! : `${each.length} profiles, each: ${methods.join('; ')}`,
      };
    }
    throw new ApiError(
      400,
      'no-requests',
      `per-request needs a load test in stage "${this.stage(tree, stageId).name}" and profiles with a duration (allocation and heap snapshots have none: use share)`,
    );
  }

  /** Each of the stage's chosen profiles on its own: flat and cum per function, and its divisors. */
  async profileRuns(
    tree: ComparisonTree,
    stageId: string,
    sp: StageProfile,
    filters: FrameFilters,
  ): Promise<ProfileRuns> {
    const requests = await this.profileRequests(tree, stageId, sp.artifacts);
    const perProfile: ProfileRuns['perProfile'] = [];
    const perRequest: (number | null)[] = [];
    const perSecond: (number | null)[] = [];
    for (const [i, a] of sp.artifacts.entries()) {
      const parsed = (await this.models.get(a)) as Extract<Parsed, { kind: 'profile' }>;
      const p = filterProfile(parsed.profile, filters);
      const idx = p.sampleTypes.findIndex((t) => t.type === sp.sampleType);
      perProfile.push(
        new Map(idx < 0 ? [] : flatCum(p, idx).map((r) => [r.name, { flat: r.flat, cum: r.cum }] as const)),
      );
      const seconds = p.durationNanos > 0 ? p.durationNanos / 1e9 : null;
      perSecond.push(seconds);
      perRequest.push(requests[i]!.requests);
    }
    return { perProfile, divisors: { 'per-request': perRequest, 'per-second': perSecond } };
  }

  /**
   * Per function, the benchstat test of its flat and cum between the stages' profiles, one value per
   * profile (normalised the same way on both sides); null unless a side has several profiles.
   */
  async profileNoise(
    tree: ComparisonTree,
    base: { stageId: string; sp: StageProfile },
    target: { stageId: string; sp: StageProfile },
    filters: FrameFilters,
  ): Promise<{ noise: DiffNoise; functions: Map<string, FunctionNoise> } | null> {
    if (base.sp.artifacts.length < 2 && target.sp.artifacts.length < 2) return null;
    const b = await this.profileRuns(tree, base.stageId, base.sp, filters);
    const t = await this.profileRuns(tree, target.stageId, target.sp, filters);
    const usable = (k: 'per-request' | 'per-second') =>
      [...b.divisors[k], ...t.divisors[k]].every((d) => d !== null && d > 0);
    const normalisation: ProfileNormalisation = usable('per-request')
      ? 'per-request'
      : usable('per-second')
        ? 'per-second'
        : 'raw';
    const divide = (r: ProfileRuns) =>
      r.perProfile.map((_, i) => (normalisation === 'raw' ? 1 : r.divisors[normalisation][i]!));
    const bd = divide(b);
    const td = divide(t);
    // Each function's largest cum in any one profile ranks it; only the first NOISE_MAX_FUNCTIONS are
    // tested (an exact U test of 25+25 runs with ties takes milliseconds; a profile can hold 10^5
    // functions), the rest carry no verdict.
    const weight = new Map<string, number>();
    for (const [r, d] of [
      [b, bd],
      [t, td],
    ] as const)
      r.perProfile.forEach((m, i) => {
        for (const [k, v] of m) weight.set(k, Math.max(weight.get(k) ?? 0, Math.abs(v.cum) / d[i]!));
      });
    const names = [...weight]
      .sort((x, y) => y[1] - x[1] || (x[0] < y[0] ? -1 : 1))
      .slice(0, NOISE_MAX_FUNCTIONS)
      .map(([k]) => k);
    const functions = new Map<string, FunctionNoise>();
    const brief = (v: Verdict) => ({ status: v.status, significant: v.significant, p: v.p });
    for (const name of names) {
      const side = (r: ProfileRuns, d: number[], k: 'flat' | 'cum') =>
        r.perProfile.map((m, i) => (m.get(name)?.[k] ?? 0) / d[i]!);
      functions.set(name, {
        flat: brief(verdict(side(b, bd, 'flat'), side(t, td, 'flat'))),
        cum: brief(verdict(side(b, bd, 'cum'), side(t, td, 'cum'))),
      });
    }
    const unit =
      normalisation === 'per-request'
        ? `${base.sp.unit}/request`
        : normalisation === 'per-second'
          ? `${base.sp.unit}/s`
          : base.sp.unit;
    return {
      noise: {
        normalisation,
        unit,
        nBase: b.perProfile.length,
        nTarget: t.perProfile.length,
        alpha: BENCHSTAT_ALPHA,
        runsNeeded: runsNeeded(BENCHSTAT_ALPHA),
      },
      functions,
    };
  }

  async diff(
    tree: ComparisonTree,
    baseId: string,
    targetId: string,
    sampleType: string | undefined,
    mode: DiffMode,
    minFraction: number,
    filters: FrameFilters,
  ) {
    const base = await this.stageProfile(tree, baseId, sampleType, filters);
    const target = await this.stageProfile(tree, targetId, base.sampleType, filters);
    let perRequest: { baseRequests: number; targetRequests: number; method: string } | null = null;
    if (mode === 'per-request') {
      const b = await this.requestsDuring(tree, baseId, base.artifacts);
      const t = await this.requestsDuring(tree, targetId, target.artifacts);
      perRequest = {
        baseRequests: b.requests,
        targetRequests: t.requests,
        method: b.method === t.method ? b.method : `base: ${b.method}; target: ${t.method}`,
      };
    }
    const d = diffProfiles(base.profile, target.profile, {
      sampleType: base.sampleType,
      mode,
      minFraction,
      ...(perRequest ? { baseRequests: perRequest.baseRequests, targetRequests: perRequest.targetRequests } : {}),
      ...(base.unfilteredTotal !== null || target.unfilteredTotal !== null
        ? {
            scaleTotals: {
              base: base.unfilteredTotal ?? total(base.profile, base.sampleIndex),
              target: target.unfilteredTotal ?? total(target.profile, target.sampleIndex),
            },
          }
        : {}),
    });
    const noise = await this.profileNoise(
      tree,
      { stageId: baseId, sp: base },
      { stageId: targetId, sp: target },
      filters,
    );
    const warnings: string[] = [];
    if (isCumulativeSinceStart(base.sampleType) && (mode === 'absolute' || mode === 'normalize')) {
      warnings.push(
        `${base.sampleType} accumulates since the process started: absolute values also compare the two processes' uptimes and loads. Prefer "share" or "per-request".`,
      );
    }
    if (
      base.sampleType === 'cpu' &&
      base.profile.durationNanos > 0 &&
      target.profile.durationNanos > 0 &&
      mode === 'absolute'
    ) {
      const r = target.profile.durationNanos / base.profile.durationNanos;
      if (r < 0.9 || r > 1.1)
        warnings.push(
          `The profiles cover different durations (${(base.profile.durationNanos / 1e9).toFixed(1)} s vs ${(target.profile.durationNanos / 1e9).toFixed(1)} s): absolute CPU time is not comparable; use "share" or "per-request".`,
        );
    }
    return {
      mode,
      unit: d.unit,
      sampleType: d.sampleType,
      baseTotal: d.baseTotal,
      targetTotal: d.targetTotal,
      scale: d.scale,
      warnings,
      perRequest,
      noise: noise?.noise ?? null,
      tree: noise ? withNodeNoise(d.tree, noise.functions) : d.tree,
      trim: d.trim,
      top: noise ? d.rows.map((r) => ({ ...r, noise: noise.functions.get(r.name) ?? null })) : d.rows,
    };
  }

  /** The top functions' cost at every stage: the part of the story no single diff shows. */
  async trajectory(tree: ComparisonTree, sampleType: string | undefined, n: number) {
    const type = sampleType ?? this.defaultSampleType(tree);
    const perStage: ({
      rows: Map<string, { flat: number; cum: number }>;
      total: number;
      /** With several profiles: each profile's per-function figures and total. */
      runs: { rows: Map<string, { flat: number; cum: number }>; total: number }[] | null;
    } | null)[] = [];
    let unit = '';
    for (const st of tree.stages) {
      try {
        const sp = await this.stageProfile(tree, st.id, type ?? undefined);
        unit = sp.unit;
        const t = percentageBase(sp.profile, sp.sampleIndex);
        let runs = null;
        if (sp.artifacts.length > 1) {
          const pr = await this.profileRuns(tree, st.id, sp, {});
          runs = pr.perProfile.map((rows) => ({
            rows,
            total: [...rows.values()].reduce((a, r) => a + r.flat, 0),
          }));
        }
        perStage.push({
          rows: new Map(flatCum(sp.profile, sp.sampleIndex).map((r) => [r.name, { flat: r.flat, cum: r.cum }])),
          total: t,
          runs,
        });
      } catch (e) {
        if (e instanceof ApiError && e.status === 404) perStage.push(null);
        else throw e;
      }
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
      .slice(0, n)
      .map(([k]) => k);
    return {
      sampleType: type,
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

  async timeline(tree: ComparisonTree) {
    const stages = [];
    for (const st of tree.stages) {
      const runs = await this.loadTests(st);
      stages.push({
        stageId: st.id,
        name: st.name,
        runs: runs.map(({ artifact, run }) => ({
          artifactId: artifact.id,
          filename: artifact.filename,
          format: run.format,
          summary: run.summary,
          timeline: run.timeline,
          latencyDistribution: run.latencyDistribution,
        })),
      });
    }
    return { stages };
  }

  async benchmarks(tree: ComparisonTree, baseId: string, targetId: string) {
    const load = async (id: string): Promise<BenchmarkRun> => {
      const st = this.stage(tree, id);
      const runs: BenchmarkRun[] = [];
      for (const a of st.artifacts.filter((x) => x.kind === 'benchmark')) {
        const p = await this.models.get(a);
        if (p.kind === 'benchmark') runs.push(p.benchmark);
      }
      if (runs.length === 0) throw new ApiError(404, 'no-benchmark', `stage "${st.name}" has no go test -bench output`);
      return { ...runs[0]!, benchmarks: runs.flatMap((r) => r.benchmarks) };
    };
    return compareBenchmarks(await load(baseId), await load(targetId));
  }

  async gc(tree: ComparisonTree) {
    const stages = [];
    for (const st of tree.stages) {
      const traces: { artifactId: string; filename: string; trace: GcTrace }[] = [];
      for (const a of st.artifacts.filter((x) => x.kind === 'gctrace')) {
        const p = await this.models.get(a);
        if (p.kind === 'gctrace') traces.push({ artifactId: a.id, filename: a.filename, trace: p.gctrace });
      }
      stages.push({ stageId: st.id, name: st.name, traces });
    }
    return { stages };
  }
}
