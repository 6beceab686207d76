import type { StageRun, StageSummaryKind } from '../api/changes.ts';
import type { Artifact, ComparisonTree, StageWithArtifacts } from '../store/index.ts';
import { type LoadTestSummary, summaryRuns } from '../model/loadtest.ts';
import { kinded } from '../model/artifact-summary.ts';

/*
 * Which load-test runs stand for a stage: the stage table's rule, read from the stored summaries alone
 * (no parsing). Runs of different tools measure different things — a closed-loop wrk run saturates the
 * service, a constant-rate vegeta run holds a fixed load — so a row never mixes them.
 */

/** One load-test run of a stage: a file's only run, or one of the several runs a file holds. */
export interface RunRef {
  artifact: Artifact;
  /** 1-based position in a file of several runs; null for a file of one run. */
  runInFile: number | null;
  summary: LoadTestSummary;
}

/** The load-test runs of a stage, in upload order and in each file's own order. */
export function stageLoadRuns(st: StageWithArtifacts): RunRef[] {
  return st.artifacts.flatMap((artifact) => {
    const k = kinded(artifact);
    return k.kind === 'loadtest' ? summaryRuns(k.summary).map((r) => ({ artifact, ...r })) : [];
  });
}

/**
 * The load-test format the rows read: the one present in the most stages (ties: the one with more
 * requests, then by name).
 */
export function headlineFormat(tree: ComparisonTree): string | null {
  const stagesWith = new Map<string, number>();
  const requests = new Map<string, number>();
  for (const st of tree.stages) {
    const formats = new Set<string>();
    for (const r of stageLoadRuns(st)) {
      formats.add(r.artifact.format);
      requests.set(r.artifact.format, (requests.get(r.artifact.format) ?? 0) + (r.summary.requests ?? 0));
    }
    for (const f of formats) stagesWith.set(f, (stagesWith.get(f) ?? 0) + 1);
  }
  const ranked = [...stagesWith].sort(
    (x, y) => y[1] - x[1] || (requests.get(y[0]) ?? 0) - (requests.get(x[0]) ?? 0) || (x[0] < y[0] ? -1 : 1),
  );
  return ranked[0]?.[0] ?? null;
}

/**
 * What makes two runs repeats of one measurement: the tool, the target and the load it applied
 * (connections, threads, k6's VUs, constant rate, k6's iteration rate, configured duration, method).
 * Runs that differ in any of these measure different things and are never treated as samples of one
 * distribution.
 */
export function runSettingsKey(format: string, s: LoadTestSummary): string {
  const m = s.meta ?? ({} as LoadTestSummary['meta']);
  const pick = (v: unknown) => (v === undefined || v === null ? '' : String(v));
  return [format, m.targetUrl, m.connections, m.threads, m.rate, m.configuredDuration, m.vus, m.iterationRate, m.method]
    .map(pick)
    .join('\u0000');
}

/** The runs that stand for a stage, and how its row summarises them. */
export interface StageRunSet {
  /** The runs behind the row, in upload order. */
  used: RunRef[];
  runs: StageRun[];
  summary: StageSummaryKind;
  /** Load tests of other tools or settings, kept out of the row. */
  otherRuns: number;
  /** False when the stage lacks the headline tool and shows its own largest one instead. */
  headline: boolean;
  format: string | null;
}

/**
 * A stage's row runs: those of the headline tool (a stage without one uses the tool of its own largest
 * run). Several runs with the same settings are repeats (`median`); with different settings they are
 * an `aggregate`.
 */
export function stageRunSet(st: StageWithArtifacts, headline: string | null): StageRunSet {
  const all = stageLoadRuns(st);
  let used = all.filter((r) => r.artifact.format === headline);
  if (used.length === 0 && all.length > 0) {
    const biggest = [...all].sort((x, y) => (y.summary.requests ?? 0) - (x.summary.requests ?? 0))[0]!;
    used = all.filter((r) => r.artifact.format === biggest.artifact.format);
  }
  const runs: StageRun[] = used.map((r) => {
    const s = r.summary;
    return {
      artifactId: r.artifact.id,
      filename: r.artifact.filename,
      runInFile: r.runInFile,
      rps: s.rps,
      requests: s.requests,
      errors: s.errors,
      latencyMs: { p50: s.latencyMs.p50, p95: s.latencyMs.p95, p99: s.latencyMs.p99 },
    };
  });
  const repeated = used.length > 1 && new Set(used.map((r) => runSettingsKey(r.artifact.format, r.summary))).size === 1;
  return {
    used,
    runs,
    summary: used.length === 0 ? 'none' : used.length === 1 ? 'single-run' : repeated ? 'median' : 'aggregate',
    otherRuns: all.length - used.length,
    headline: used[0]?.artifact.format === headline,
    format: used[0]?.artifact.format ?? null,
  };
}

/** Request-weighted mean of a figure over the runs that have it. */
function weighted(runs: LoadTestSummary[], pick: (s: LoadTestSummary) => number | null): number | null {
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

/** The load-test figures the engine judges, one value per run. */
export type LoadFigure = 'rps' | 'p50' | 'p95' | 'p99' | 'errorRate';

/**
 * One value per run for each load-test figure. Repeats (`median`) give each run's own figure; a single
 * run gives its figure as printed; an aggregate of runs with different settings gives one value (total
 * requests over total duration; request-weighted latency percentiles, an approximation), standing alone
 * like a single run, because its runs measure different things.
 */
export function loadFigureValues(set: StageRunSet): Record<LoadFigure, number[]> {
  const sums = set.used.map((r) => r.summary);
  const errorRate = (s: LoadTestSummary) =>
    s.errors !== null && s.requests !== null && s.requests > 0 ? s.errors / s.requests : null;
  const perRun = (pick: (s: LoadTestSummary) => number | null) =>
    sums.map(pick).filter((v): v is number => v !== null && Number.isFinite(v));
  if (set.summary !== 'aggregate')
    return {
      rps: perRun((s) => s.rps),
      p50: perRun((s) => s.latencyMs.p50),
      p95: perRun((s) => s.latencyMs.p95),
      p99: perRun((s) => s.latencyMs.p99),
      errorRate: perRun(errorRate),
    };
  const total = (pick: (s: LoadTestSummary) => number | null) =>
    sums.some((s) => pick(s) !== null) ? sums.reduce((a, s) => a + (pick(s) ?? 0), 0) : null;
  const requests = total((s) => s.requests);
  const errors = total((s) => s.errors);
  const duration = sums.every((s) => s.durationSeconds !== null) ? total((s) => s.durationSeconds) : null;
  const one = (v: number | null) => (v === null || !Number.isFinite(v) ? [] : [v]);
  return {
    rps: one(requests !== null && duration ? requests / duration : weighted(sums, (s) => s.rps)),
    p50: one(weighted(sums, (s) => s.latencyMs.p50)),
    p95: one(weighted(sums, (s) => s.latencyMs.p95)),
    p99: one(weighted(sums, (s) => s.latencyMs.p99)),
    errorRate: one(requests !== null && requests > 0 && errors !== null ? errors / requests : null),
  };
}
