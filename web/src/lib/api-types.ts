/**
 * Shapes of the stagediff HTTP API as the web client reads them (see shared DESIGN.md, "HTTP API").
 * Written here rather than imported so the web build never depends on server code; all figures carry
 * their unit explicitly (sample unit, ms, req/s, bytes).
 */

export interface SampleTypeRef {
  type: string;
  unit: string;
}

export interface LatencyMs {
  min?: number | null;
  mean?: number | null;
  p50: number | null;
  p75?: number | null;
  p90?: number | null;
  p95: number | null;
  p99: number | null;
  p999?: number | null;
  max?: number | null;
}

/** Summary of a profile artifact; totals in each sample type's own unit. */
export interface ProfileSummary {
  sampleTypes: SampleTypeRef[];
  defaultSampleType: string;
  kind: string;
  durationNanos: number | null;
  totals: Record<string, number>;
}

/** Summary of one load-test run; rps in req/s, latency in ms. */
export interface LoadTestSummary {
  requests: number | null;
  durationSeconds: number | null;
  rps: number | null;
  errors: number | null;
  transportErrors?: number | null;
  non2xx?: number | null;
  latencyMs: LatencyMs;
  bytesPerSecond?: number | null;
  meta?: { tool?: string; [key: string]: unknown };
}

export type ArtifactKind = 'profile' | 'loadtest' | 'benchmark' | 'gctrace';

export interface Artifact {
  id: string;
  kind: ArtifactKind;
  format: string;
  filename: string;
  size: number;
  sha256: string;
  summary: unknown;
}

export interface Stage {
  id: string;
  name: string;
  note: string;
  position: number;
  artifacts: Artifact[];
}

/** Ratios new/old; null for the first stage or a missing figure. */
export interface RatioSet {
  rps: number | null;
  p50: number | null;
  p95: number | null;
  p99: number | null;
}

export interface StageRow {
  stageId: string;
  name: string;
  note: string;
  rps: number | null;
  requests: number | null;
  errors: number | null;
  latencyMs: { p50: number | null; p95: number | null; p99: number | null };
  vsPrevious: RatioSet | null;
  vsBaseline: RatioSet | null;
  loadTests?: number;
}

export interface Comparison {
  id: string;
  title: string;
  description: string;
  createdAt: string;
  readOnly?: boolean;
  stages: Stage[];
  stageTable: StageRow[];
}

export interface CreatedComparison {
  id: string;
  editToken: string;
  url: string;
}

export interface ApiErrorBody {
  error: { code: string; message: string };
}

export type UploadResult =
  | { filename: string; ok: true; artifact: Artifact }
  | { filename: string; ok: false; error: { code: string; message: string } };

export interface FlameNode {
  name: string;
  value: number;
  children: FlameNode[];
}

export interface SampleTypeInfo {
  type: string;
  unit: string;
  description?: string;
  cumulativeSinceStart?: boolean;
}

export interface FlameGraphResponse {
  stageId: string;
  sampleType: string;
  unit: string;
  total: number;
  sampleTypes: SampleTypeInfo[];
  kind: string;
  tree: FlameNode;
  trim: { prunedNodes: number; prunedValue: number; nodes: number; depthTruncatedNodes: number };
}

/** A diff tree node: value = |base| + |target| (frame width), delta = target − base. */
export interface DiffNode {
  name: string;
  value: number;
  delta: number;
  base: number;
  target: number;
  children: DiffNode[];
}

export type DiffMode = 'absolute' | 'share' | 'normalize' | 'per-request';
export type DiffStatus = 'new' | 'removed' | 'changed' | 'unchanged';

export interface DiffRow {
  name: string;
  base: { flat: number; cum: number };
  target: { flat: number; cum: number };
  deltaFlat: number;
  deltaCum: number;
  status: DiffStatus;
}

export interface DiffResponse {
  mode: DiffMode;
  unit: string;
  sampleType: string;
  baseTotal: number;
  targetTotal: number;
  scale: { base: number; target: number };
  warnings: string[];
  perRequest: { baseRequests: number; targetRequests: number; method: string } | null;
  tree: DiffNode;
  top: DiffRow[];
}

export interface TopResponse {
  unit: string;
  total: number;
  rows: { name: string; flat: number; cum: number }[];
}

export interface TrajectoryPoint {
  stageId: string;
  flat: number;
  cum: number;
  total: number;
}

export interface TrajectoryResponse {
  sampleType: string;
  unit: string;
  stages: { stageId: string; name: string }[];
  functions: { name: string; points: (TrajectoryPoint | null)[] }[];
}

export interface SandwichResponse {
  name: string;
  unit: string;
  total: number;
  flat: number;
  cum: number;
  callers: FlameNode;
  callees: FlameNode;
}

export interface TimelineBucket {
  t: number;
  requests: number;
  rps: number;
  errors: number;
  latencyMs: { mean: number | null; p50: number | null; p95: number | null; p99: number | null };
}

export interface TimelineRun {
  artifactId: string;
  filename: string;
  format: string;
  timeline: TimelineBucket[] | null;
  latencyDistribution: { percentile: number; ms: number }[] | null;
}

export interface TimelineResponse {
  stages: { stageId: string; name: string; runs: TimelineRun[] }[];
}
