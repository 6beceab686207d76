import { NAME_PATTERN, NOTE_PATTERN } from './untrusted-text.ts';
import { CaptureRecordSchema } from './capture-record.ts';
import Type, { type Static } from 'typebox';
import type { CaptureRecord } from '../model/capture.ts';
import type { GcTraceSummary } from '../model/gctrace.ts';
import type { LoadTestSummary } from '../model/loadtest.ts';
import type { TraceSummary } from '../model/trace.ts';
import type {
  BenchmarkArtifactSummary,
  MetricsArtifactSummary,
  SchedTraceArtifactSummary,
} from '../model/artifact-summary.ts';
import type { TraceRequestFigures } from '../model/trace-requests.ts';
import { Id, Model, Nullable, Literals } from './kit.ts';
import { ProfileKind, SampleTypeInfo } from './views.ts';

/** The stored summaries the API shows as they are (model/artifact-summary.ts). */
export type { BenchmarkArtifactSummary, MetricsArtifactSummary, SchedTraceArtifactSummary };

/* Comparisons, stages and their files: what the store holds, as the API shows it. */

/** What the stage view lists of a profile without re-parsing it (totals in each sample type's own unit). */
export const ProfileSummary = Type.Object({
  kind: ProfileKind,
  sampleTypes: Type.Array(SampleTypeInfo),
  defaultSampleType: Type.String(),
  /** The profile's window in nanoseconds (0 for snapshots). */
  durationNanos: Type.Number(),
  timeNanos: Type.Number(),
  numSamples: Type.Number(),
  totals: Type.Record(Type.String(), Type.Number()),
});
export type ProfileSummary = Static<typeof ProfileSummary>;

/**
 * Summary stored with an execution trace: its figures without the timeline, the first 10 entry
 * functions, and the summary of each profile it yields (`go tool trace -pprof=net|sync|syscall|sched`).
 */
export type TraceArtifactSummary = Omit<TraceSummary, 'timeline'> & {
  profiles?: Partial<Record<'net' | 'sync' | 'syscall' | 'sched', ProfileSummary>>;
  /** Its requests and their parts (model/trace-requests.ts); absent or null in records made before. */
  requests?: TraceRequestFigures | null;
};

/** The summary of any artifact, by its kind. */
export type ArtifactSummary =
  | ProfileSummary
  | LoadTestSummary
  | BenchmarkArtifactSummary
  | GcTraceSummary
  | TraceArtifactSummary
  | SchedTraceArtifactSummary
  | MetricsArtifactSummary;

export const ArtifactKind = Literals(['profile', 'loadtest', 'benchmark', 'gctrace', 'trace', 'schedtrace', 'metrics']);
export type ArtifactKind = Static<typeof ArtifactKind>;

export const Artifact = Type.Object({
  id: Type.String(),
  kind: ArtifactKind,
  format: Type.String(),
  filename: Type.String(),
  size: Type.Number(),
  sha256: Type.String(),
  createdAt: Type.String(),
  summary: Model<ArtifactSummary>(
    'by kind: a profile summary (kind, sampleTypes, totals, durationNanos), a load-test summary (requests, rps, latencyMs, meta), a benchmark summary (config, names), a GC summary, an execution-trace summary (schedWait, blocked, gc, goroutines), a schedtrace summary or a metrics summary (source, scrapes, highlights)',
  ),
});
export type Artifact = Static<typeof Artifact>;

export const Stage = Type.Object({
  id: Type.String(),
  name: Type.String(),
  note: Type.String(),
  position: Type.Integer(),
});
export type Stage = Static<typeof Stage>;

/** The source files stored with a stage (their bytes are served by the line view). */
export const StageSourcesInfo = Type.Object({
  /** The Go module path (go.mod's `module`), '' when unknown. */
  modulePath: Type.String(),
  /** `git rev-parse HEAD` of the tree they came from, '' when unknown. */
  revision: Type.String(),
  /** Whether that tree had uncommitted changes; null when unknown. */
  dirty: Nullable(Type.Boolean()),
  /** `capture`, or the archive's file name. */
  origin: Type.String(),
  files: Type.Integer(),
  /** Bytes of the files together. */
  bytes: Type.Integer(),
  /** Bytes they take in storage (compressed; counted by MAX_COMPARISON_BYTES). */
  size: Type.Integer(),
  createdAt: Type.String(),
});
export type StageSourcesInfo = Static<typeof StageSourcesInfo>;

export const StageSourcesListing = Type.Object({
  ...StageSourcesInfo.properties,
  /** Module-relative paths and sizes, sorted by path. */
  entries: Type.Array(Type.Object({ path: Type.String(), size: Type.Integer() })),
});

export const StageWithFiles = Type.Object({
  id: Type.String(),
  name: Type.String(),
  note: Type.String(),
  position: Type.Integer(),
  /** How the stage was recorded by `stagediff capture`, one record per invocation. */
  captures: Type.Array(Model<CaptureRecord>('a stagediff-capture/1 record (see model/capture.ts)')),
  artifacts: Type.Array(Artifact),
  /** Present when the stage carries its source files. */
  sources: Type.Optional(StageSourcesInfo),
});
export type StageWithFiles = Static<typeof StageWithFiles>;

export const Comparison = Type.Object({
  id: Type.String(),
  title: Type.String(),
  description: Type.String(),
  createdAt: Type.String(),
  updatedAt: Type.String(),
  /** The demo and other seeded comparisons: no edit token opens them. */
  readOnly: Type.Boolean(),
  /** Bumped by every change; derived results are cached by it. */
  revision: Type.Integer(),
  /** Kept from retention (RETENTION_DAYS) by its edit-token holder. */
  keep: Type.Boolean(),
  /** The share link. */
  url: Type.String(),
  stages: Type.Array(StageWithFiles),
  /** Storage the comparison's files take, and the bound on it (MAX_COMPARISON_BYTES; null: none). */
  usage: Type.Object({ bytes: Type.Integer(), maxBytes: Nullable(Type.Integer()) }),
});
export type Comparison = Static<typeof Comparison>;

export const ComparisonParams = Type.Object({ id: Id });
export const StageParams = Type.Object({ id: Id, stageId: Id });
export const ArtifactParams = Type.Object({ artifactId: Id });
export const ComparisonArtifactParams = Type.Object({ id: Id, artifactId: Id });

/** A name (a title, a stage's name): one line, no control character, no bidirectional override. */
const Name = (maxLength: number) => Type.String({ minLength: 1, maxLength, pattern: NAME_PATTERN });
/** A note (a description, a stage's note): lines and tabs allowed, no other control character nor bidi override. */
const Note = (maxLength: number) => Type.String({ maxLength, pattern: NOTE_PATTERN });

export const CreateComparisonBody = Type.Object(
  {
    title: Name(200),
    description: Type.Optional(Note(10000)),
  },
  { additionalProperties: false },
);
export const CreatedComparison = Type.Object({ id: Type.String(), editToken: Type.String(), url: Type.String() });
export type CreatedComparison = Static<typeof CreatedComparison>;

export const PatchComparisonBody = Type.Object(
  {
    title: Type.Optional(Name(200)),
    description: Type.Optional(Note(10000)),
    /** Keep the comparison from retention (RETENTION_DAYS): it is never removed for not being viewed. */
    keep: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

export const StageBody = Type.Object(
  { name: Name(120), note: Type.Optional(Note(2000)) },
  { additionalProperties: false },
);
export const PatchStageBody = Type.Object(
  {
    name: Type.Optional(Name(120)),
    note: Type.Optional(Note(2000)),
  },
  { additionalProperties: false },
);
export const StageOrderBody = Type.Object(
  { stageIds: Type.Array(Type.String(), { maxItems: 200 }) },
  { additionalProperties: false },
);
/** A capture record as POST …/captures takes it: the whole record, checked (api/capture-record.ts). */
export const CaptureBody = CaptureRecordSchema;
export const StageWithCaptures = Type.Object({
  id: Type.String(),
  name: Type.String(),
  note: Type.String(),
  position: Type.Integer(),
  captures: Type.Array(Model<CaptureRecord>('a stagediff-capture/1 record')),
});

export const UploadQuery = Type.Object({ filename: Type.Optional(Type.String({ maxLength: 255 })) });

/** One file of an upload: stored (its artifact), or refused with the reason (naming the file). */
export const FileResult = Type.Union([
  Type.Object({
    filename: Type.String(),
    ok: Type.Literal(true),
    artifact: Artifact,
    /** Runs read from the file: a load-test file may hold several runs of one tool, each a run of the stage. */
    runs: Type.Integer(),
    /** Said when the file held several runs: "3 runs read from one file". */
    note: Type.Optional(Type.String()),
  }),
  Type.Object({
    filename: Type.String(),
    ok: Type.Literal(false),
    error: Type.Object({
      code: Type.String(),
      message: Type.String(),
      /** For `duplicate`: the artifact of the stage that already holds these bytes. */
      existing: Type.Optional(Type.Object({ artifactId: Type.String(), filename: Type.String() })),
    }),
  }),
]);
export type FileResult = Static<typeof FileResult>;
export const UploadResults = Type.Object({ results: Type.Array(FileResult) });
export const UploadRefused = Type.Object({
  error: Type.Object({
    code: Type.String(),
    message: Type.String(),
    existing: Type.Optional(Type.Object({ artifactId: Type.String(), filename: Type.String() })),
  }),
  results: Type.Array(FileResult),
});

export const Nothing = Type.Null({ description: 'no body' });
export { Nullable };
