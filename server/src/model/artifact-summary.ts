import type { BenchConfig } from './benchmark.ts';
import type { GcTraceSummary } from './gctrace.ts';
import type { LoadTestArtifactSummary } from './loadtest.ts';
import type { MetricsModel, MetricsRuntimeSettings } from './metrics.ts';
import type { ProfileKind, ValueType } from './profile.ts';
import type { SchedTraceSummary } from './schedtrace.ts';
import type { TraceSummary } from './trace.ts';
import type { TraceRequestFigures } from './trace-requests.ts';

/**
 * What the store keeps of each kind of file beside its bytes (its summary, written once at upload by
 * `artifactSummary`), so stage lists, kinds, conditions and per-request divisors need no parsing.
 * `KindedSummary` ties each summary to its artifact kind: testing `kind` gives the summary's type.
 * Summaries written by older versions may lack a field added since (marked optional here).
 */

/** A profile's: its sample types and totals (see stage-profiles.ts profileSummary). */
export interface StoredProfileSummary {
  sampleTypes: ValueType[];
  defaultSampleType: string;
  kind: ProfileKind;
  durationNanos: number;
  timeNanos: number;
  numSamples: number;
  totals: Record<string, number>;
}

/** The profiles an execution trace yields, by the name `go tool trace -pprof=…` gives each. */
export type TraceProfileName = 'net' | 'sync' | 'syscall' | 'sched';

/**
 * An execution trace's: its figures without the timeline, the first 10 entry functions, and the
 * summary of each profile it yields.
 */
export type StoredTraceSummary = Omit<TraceSummary, 'timeline'> & {
  profiles?: Partial<Record<TraceProfileName, StoredProfileSummary>>;
  /** Its requests and their parts (model/trace-requests.ts); absent or null in records made before. */
  requests?: TraceRequestFigures | null;
};

/** A `go test -bench` file's. */
export interface BenchmarkArtifactSummary {
  config: BenchConfig;
  /** Number of (benchmark, unit) series. */
  benchmarks: number;
  names: string[];
}

/** A GODEBUG=schedtrace log's: its figures and, when it has gc lines, their GC summary. */
export type SchedTraceArtifactSummary = SchedTraceSummary & { gc: GcTraceSummary | null };

/** A runtime-metric series' (`stagediff capture --metrics`). */
export type MetricsArtifactSummary = Pick<
  MetricsModel,
  'source' | 'start' | 'failedScrapes' | 'windowSeconds' | 'highlights'
> & {
  /** Scrapes taken, and series recorded. */
  scrapes: number;
  series: number;
  /** GOMAXPROCS, GOGC, GOMEMLIMIT and the Go version as the series state them (absent in older records). */
  runtimeSettings?: MetricsRuntimeSettings;
};

/** Each artifact kind's stored summary. */
export interface StoredSummaries {
  profile: StoredProfileSummary;
  loadtest: LoadTestArtifactSummary;
  benchmark: BenchmarkArtifactSummary;
  gctrace: GcTraceSummary;
  trace: StoredTraceSummary;
  schedtrace: SchedTraceArtifactSummary;
  metrics: MetricsArtifactSummary;
}

/** Any stored summary. */
export type StoredSummary = StoredSummaries[keyof StoredSummaries];

/** An artifact kind with its summary: `a.kind === 'trace'` makes `a.summary` a StoredTraceSummary. */
export type KindedSummary = {
  [K in keyof StoredSummaries]: { kind: K; summary: StoredSummaries[K] };
}[keyof StoredSummaries];

/**
 * An artifact's kind and summary as the discriminated pair. The store gives back (as JSON) the summary
 * `artifactSummary` wrote for the artifact's kind: this is the one place that tells the compiler so.
 */
export function kinded(a: { kind: keyof StoredSummaries; summary: unknown }): KindedSummary {
  return a as KindedSummary;
}
