/**
 * Shapes of the stagediff HTTP API as the web client reads them (see shared DESIGN.md, "HTTP API").
 * Where the server declares a shape, it is imported from there as a *type* (erased at build time: the web
 * bundle never contains server code); only response envelopes the server builds inline and web-only
 * views of them are declared here. All figures carry their unit explicitly (sample unit, ms, req/s, bytes).
 */
import type { DiffMode, DiffRow as PlainDiffRow, DiffStatus } from '../../../server/src/analysis/diff.ts';
import type {
  BenchConfig,
  BenchmarkDiff,
  BenchmarkDiffRow,
  BenchSideSummary,
} from '../../../server/src/model/benchmark.ts';
import type { CaptureRecord, CaptureRun } from '../../../server/src/model/capture.ts';
import type { GcCycle, GcTrace, GcTraceSummary } from '../../../server/src/model/gctrace.ts';
import type {
  LatencyMs,
  LoadTestSummary,
  PercentilePoint,
  TimelineBucket,
} from '../../../server/src/model/loadtest.ts';
import type {
  DiffNoise,
  FunctionNoise,
  NoisyDiffNode,
  ShareSpread,
  StageRow,
} from '../../../server/src/services/analysis.ts';
import type {
  Artifact as StoredArtifact,
  ArtifactKind,
  Comparison as StoredComparison,
} from '../../../server/src/store/types.ts';

/** A diff row; `noise` is the function's verdict across several profiles per stage (see DiffNoise). */
export type DiffRow = PlainDiffRow & { noise?: FunctionNoise | null };
/** A diff tree node; `noise` is its function's cum verdict across several profiles per stage. */
export type DiffNode = NoisyDiffNode;

export type {
  DiffNoise,
  FunctionNoise,
  ShareSpread,
  ArtifactKind,
  BenchmarkDiff,
  BenchmarkDiffRow,
  BenchSideSummary,
  CaptureRecord,
  CaptureRun,
  DiffMode,
  DiffStatus,
  GcCycle,
  GcTrace,
  GcTraceSummary,
  LatencyMs,
  LoadTestSummary,
  StageRow,
  TimelineBucket,
};

export interface SampleTypeRef {
  type: string;
  unit: string;
}

/** Summary of a profile artifact; totals in each sample type's own unit. */
export interface ProfileSummary {
  sampleTypes: SampleTypeRef[];
  defaultSampleType: string;
  kind: string;
  durationNanos: number | null;
  totals: Record<string, number>;
}

/** An artifact as GET /api/comparisons/:id lists it (the store's record without its owner ids). */
export type Artifact = Omit<StoredArtifact, 'comparisonId' | 'stageId' | 'createdAt'> & { createdAt?: string };

export interface Stage {
  id: string;
  name: string;
  note: string;
  position: number;
  artifacts: Artifact[];
  /** How the stage was recorded by `stagediff capture` (absent from servers older than this field). */
  captures?: CaptureRecord[];
}

/** Ratios new/old; null for the first stage or a missing figure. */
export type RatioSet = NonNullable<StageRow['vsPrevious']>;

/** GET /api/comparisons/:id: the stored comparison with its share URL, stages and stage table. */
export interface Comparison extends StoredComparison {
  url?: string;
  stages: Stage[];
  stageTable: StageRow[];
}

export interface CreatedComparison {
  id: string;
  editToken: string;
  url: string;
}

export interface ApiErrorBody {
  /** `param`: the request parameter at fault, when one is (e.g. a filter expression Go rejects). */
  error: { code: string; message: string; param?: string };
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

export interface DiffResponse {
  mode: DiffMode;
  unit: string;
  sampleType: string;
  baseTotal: number;
  targetTotal: number;
  scale: { base: number; target: number };
  warnings: string[];
  perRequest: { baseRequests: number; targetRequests: number; method: string } | null;
  /** Set when a stage holds several profiles of the type: how rows' and nodes' `noise` was tested. */
  noise?: DiffNoise | null;
  tree: DiffNode;
  /** The first `limit` rows (by |deltaFlat|) of `rowsTotal`. */
  top: DiffRow[];
  rowsTotal?: number;
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
  /** The function's cum share of each of the stage's profiles, when it holds several. */
  spread?: ShareSpread | null;
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

export interface TimelineRun {
  artifactId: string;
  filename: string;
  format: string;
  timeline: TimelineBucket[] | null;
  latencyDistribution: PercentilePoint[] | null;
}

export interface TimelineResponse {
  stages: { stageId: string; name: string; runs: TimelineRun[] }[];
}

/** GET /api/comparisons/:id/gc: every stage (in order) with its parsed GC traces. */
export interface GcResponse {
  stages: { stageId: string; name: string; traces: { artifactId: string; filename: string; trace: GcTrace }[] }[];
}

/** Summary stored with a `go test -bench` artifact. */
export interface BenchmarkArtifactSummary {
  config: BenchConfig;
  /** Number of (benchmark, unit) series. */
  benchmarks: number;
  names: string[];
}
