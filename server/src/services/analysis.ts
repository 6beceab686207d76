import type { Artifact, ComparisonTree, StageWithArtifacts, Store } from '../store/index.ts';
import type { Parsed } from '../ingest/detect.ts';
import type { Profile } from '../model/profile.ts';
import type { LoadTestRun } from '../model/loadtest.ts';
import type { BenchmarkRun } from '../model/benchmark.ts';
import type { GcTrace } from '../model/gctrace.ts';
import { mergeProfiles } from '../analysis/merge.ts';
import { flatCum, sortByFlat, total } from '../analysis/flat-cum.ts';
import { callTree } from '../analysis/call-tree.ts';
import { type DiffMode, diffProfiles } from '../analysis/diff.ts';
import { toFolded } from '../analysis/folded.ts';
import { type FrameFilters, filterProfile } from '../analysis/filter.ts';
import { sandwich } from '../analysis/sandwich.ts';
import { describeProfile, isCumulativeSinceStart } from '../analysis/sample-types.ts';
import { compareBenchmarks } from '../analysis/benchstat.ts';
import { ApiError } from '../routes/errors.ts';
import type { ModelCache } from './models.ts';

type Latency3 = { p50: number | null; p95: number | null; p99: number | null };
type Ratios = { rps: number | null; p50: number | null; p95: number | null; p99: number | null };

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
  /** Load tests behind the figures; above 1 the figures are their request-weighted aggregate. */
  loadTests: number;
  aggregated: boolean;
  /** Which runs the figures come from: their format, ids, how many other runs the stage holds. */
  source: { format: string | null; artifactIds: string[]; otherRuns: number; headline: boolean };
}

/** Summary stored with a profile artifact (what the stage view lists without re-parsing). */
export function profileSummary(p: Profile) {
  const totals: Record<string, number> = {};
  p.sampleTypes.forEach((t, i) => {
    totals[t.type] = total(p, i);
  });
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
 * tool uses its own largest run, and says so in `source`. Several runs of the tool in one stage
 * are combined: requests and errors add up, rps is total requests over total duration, latency
 * percentiles are request-weighted means (an approximation, flagged by `aggregated`).
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
    const duration = runs.every((r) => r.durationSeconds !== null) ? sum((s) => s.durationSeconds) : null;
    return {
      stageId: st.id,
      name: st.name,
      note: st.note,
      rps:
        runs.length === 1
          ? runs[0]!.rps
          : requests !== null && duration
            ? requests / duration
            : weighted(runs, (s) => s.rps),
      requests,
      errors: sum((s) => s.errors),
      latencyMs: {
        p50: weighted(runs, (s) => s.latencyMs.p50),
        p95: weighted(runs, (s) => s.latencyMs.p95),
        p99: weighted(runs, (s) => s.latencyMs.p99),
      },
      vsPrevious: null,
      vsBaseline: null,
      loadTests: runs.length,
      aggregated: runs.length > 1,
      source: {
        format: used[0]?.format ?? null,
        artifactIds: used.map((a) => a.id),
        otherRuns: all.length - used.length,
        headline: used[0]?.format === headline,
      },
    };
  });
  rows.forEach((r, i) => {
    r.vsPrevious = ratios(r, rows[i - 1]);
    r.vsBaseline = i === 0 ? null : ratios(r, rows[0]);
  });
  return rows;
}

/** Picks and merges the profiles of a stage that hold a sample type. */
export interface StageProfile {
  profile: Profile;
  artifacts: Artifact[];
  sampleType: string;
  sampleIndex: number;
  unit: string;
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
    let profile = mergeProfiles(profiles.map((p) => p.profile));
    profile = filterProfile(profile, filters);
    const sampleIndex = profile.sampleTypes.findIndex((t) => t.type === type);
    return { profile, artifacts: chosen, sampleType: type, sampleIndex, unit: profile.sampleTypes[sampleIndex]!.unit };
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
      total: total(sp.profile, sp.sampleIndex),
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
      total: total(sp.profile, sp.sampleIndex),
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
    return { ...s, sampleType: sp.sampleType, unit: sp.unit, total: total(sp.profile, sp.sampleIndex) };
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
   * Requests a stage served during a profile's window: from a load test's timeline when the run
   * has an absolute start time and the profile has a time and duration (buckets overlapping the
   * window, partial buckets pro rata); otherwise the stage's rps × the profile's duration.
   */
  async requestsDuring(
    tree: ComparisonTree,
    stageId: string,
    p: Profile,
  ): Promise<{ requests: number; method: string }> {
    const st = this.stage(tree, stageId);
    const runs = await this.loadTests(st);
    const startMs = p.timeNanos / 1e6;
    const durMs = p.durationNanos / 1e6;
    if (startMs > 0 && durMs > 0) {
      for (const { run } of runs) {
        const started = run.summary.meta.startedAt;
        const t0 = typeof started === 'number' ? started : typeof started === 'string' ? Date.parse(started) : NaN;
        if (!Number.isFinite(t0) || !run.timeline) continue;
        let n = 0;
        for (const b of run.timeline) {
          const bs = t0 + b.t * 1000;
          const overlap = Math.max(0, Math.min(bs + 1000, startMs + durMs) - Math.max(bs, startMs));
          n += (b.requests * overlap) / 1000;
        }
        if (n > 0) return { requests: n, method: `timeline of ${run.format} within the profile's window` };
      }
    }
    const rows = stageTable({ ...tree, stages: [st] });
    const rps = rows[0]?.rps ?? null;
    if (rps !== null && durMs > 0)
      return {
        requests: (rps * durMs) / 1000,
        method: `stage rps (${rps.toFixed(1)}/s) × profile duration (${(durMs / 1000).toFixed(2)} s)`,
      };
    throw new ApiError(
      400,
      'no-requests',
      `per-request needs a load test in stage "${st.name}" and a profile with a duration (allocation and heap snapshots have none: use share)`,
    );
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
      const b = await this.requestsDuring(tree, baseId, base.profile);
      const t = await this.requestsDuring(tree, targetId, target.profile);
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
    });
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
      tree: d.tree,
      trim: d.trim,
      top: d.rows,
    };
  }

  /** The top functions' cost at every stage: the part of the story no single diff shows. */
  async trajectory(tree: ComparisonTree, sampleType: string | undefined, n: number) {
    const type = sampleType ?? this.defaultSampleType(tree);
    const perStage: ({ rows: Map<string, { flat: number; cum: number }>; total: number } | null)[] = [];
    let unit = '';
    for (const st of tree.stages) {
      try {
        const sp = await this.stageProfile(tree, st.id, type ?? undefined);
        unit = sp.unit;
        const t = total(sp.profile, sp.sampleIndex);
        perStage.push({
          rows: new Map(flatCum(sp.profile, sp.sampleIndex).map((r) => [r.name, { flat: r.flat, cum: r.cum }])),
          total: t,
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
