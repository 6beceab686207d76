/**
 * An artifact's summary typed by its kind, for every reader of the contract (the web page included):
 * `kindedArtifact(a)` gives the pair of kind and summary, so testing `kind` types the summary with no
 * cast per reader — the contract's side of the model's `kinded` (model/artifact-summary.ts). Plain: type
 * imports only, so the web bundle imports it as it is.
 */
import type { GcTraceSummary } from '../model/gctrace.ts';
import type { LoadTestArtifactSummary } from '../model/loadtest.ts';
import type {
  ArtifactKind,
  BenchmarkArtifactSummary,
  MetricsArtifactSummary,
  ProfileSummary,
  SchedTraceArtifactSummary,
  TraceArtifactSummary,
} from './resources.ts';

/** Each artifact kind's summary as the API shows it (KindedArtifact fails to build when a kind lacks one). */
export interface ArtifactSummaries {
  profile: ProfileSummary;
  loadtest: LoadTestArtifactSummary;
  benchmark: BenchmarkArtifactSummary;
  gctrace: GcTraceSummary;
  trace: TraceArtifactSummary;
  schedtrace: SchedTraceArtifactSummary;
  metrics: MetricsArtifactSummary;
}

/** An artifact's kind with its summary: `a.kind === 'trace'` makes `a.summary` a TraceArtifactSummary. */
export type KindedArtifact = {
  [K in ArtifactKind]: { kind: K; summary: ArtifactSummaries[K] };
}[ArtifactKind];

/**
 * An artifact's kind and summary as the discriminated pair. The server sends, for each artifact, the
 * summary of its kind (services/stage-profiles.ts apiArtifactSummary): this is the one place a reader of
 * the contract tells the compiler so.
 */
export function kindedArtifact(a: { kind: ArtifactKind; summary: unknown }): KindedArtifact {
  return a as KindedArtifact;
}
