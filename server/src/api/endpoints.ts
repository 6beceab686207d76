import Type, { type Static, type TSchema } from 'typebox';
import { StageChanges, StageTable, StageTableQuery } from './changes.ts';
import { ErrorBody } from './kit.ts';
import { ProfilerImportBody, ProfilerImportReply } from './profiler-import.ts';
import { RequestsView } from './requests.ts';
import { StageRuntime } from './runtime.ts';
import {
  ArtifactParams,
  CaptureBody,
  Comparison,
  ComparisonArtifactParams,
  ComparisonParams,
  CreateComparisonBody,
  CreatedComparison,
  Nothing,
  PatchComparisonBody,
  PatchStageBody,
  Stage,
  StageBody,
  StageOrderBody,
  StageParams,
  StageSourcesInfo,
  StageSourcesListing,
  StageWithCaptures,
  UploadQuery,
  UploadResults,
} from './resources.ts';
import {
  Benchmarks,
  ChangesQuery,
  Diff,
  DiffImageQuery,
  DiffProfileQuery,
  DiffQuery,
  FilterCheck,
  FilterQuery,
  Flamegraph,
  FlamegraphImageQuery,
  ProfileDownloadQuery,
  FlamegraphQuery,
  FoldedQuery,
  GcStages,
  Sandwich,
  SandwichQuery,
  Search,
  SearchQuery,
  SourceQuery,
  SourceView,
  StagePairQuery,
  Timeline,
  Top,
  TopQuery,
  Trajectory,
  TrajectoryQuery,
} from './views.ts';
import { ENDPOINT_ROUTES, type EndpointName, endpointUrl } from './routes.ts';

/**
 * The API contract, declared once: every endpoint's method and path (routes.ts), its parameters, query,
 * body and answers. The server's routes validate and serialise with these schemas, /api/openapi.json
 * publishes them, and the web client and the CLI take their types from them (`Query`, `Reply` below).
 * A view computed by the analysis workers is serialised there with the same response schema.
 */
export interface EndpointSchema {
  summary: string;
  description?: string;
  params?: TSchema;
  querystring?: TSchema;
  body?: TSchema;
  /** The success answer; its status is `status` (200 unless said). */
  response: TSchema;
  status?: 200 | 201 | 204;
  /** Not JSON: the media type of the answer (text, an image). */
  produces?: string;
  /** Needs the comparison's edit token (Authorization: Bearer TOKEN). */
  auth?: true;
}

const Text = Type.String({ description: 'text' });
const Binary = Type.String({ description: 'binary image' });
const PprofFile = Type.String({ description: 'a gzipped profile.proto, as go tool pprof reads it' });

export const SCHEMAS = {
  createComparison: {
    summary: 'Create a comparison (an optimization story)',
    body: CreateComparisonBody,
    response: CreatedComparison,
    status: 201,
  },
  getComparison: {
    summary: 'A comparison with its stages and their files',
    params: ComparisonParams,
    response: Comparison,
  },
  patchComparison: {
    summary: 'Edit title or description, or keep it from retention (edit token)',
    params: ComparisonParams,
    body: PatchComparisonBody,
    response: Comparison,
    auth: true,
  },
  deleteComparison: {
    summary: 'Delete a comparison and its files (edit token)',
    params: ComparisonParams,
    response: Nothing,
    status: 204,
    auth: true,
  },
  checkEditToken: {
    summary:
      'Check an edit token without changing anything: 204 when it opens the comparison, 401 without one, 403 when it does not (a read-only comparison too)',
    params: ComparisonParams,
    response: Nothing,
    status: 204,
    auth: true,
  },
  createStage: {
    summary: 'Append a stage (edit token)',
    params: ComparisonParams,
    body: StageBody,
    response: Stage,
    status: 201,
    auth: true,
  },
  patchStage: {
    summary: 'Rename or annotate a stage (edit token)',
    params: StageParams,
    body: PatchStageBody,
    response: Stage,
    auth: true,
  },
  deleteStage: {
    summary: 'Delete a stage and its files (edit token)',
    params: StageParams,
    response: Nothing,
    status: 204,
    auth: true,
  },
  orderStages: {
    summary: 'Reorder stages (edit token): list every stage id once, in the new order',
    params: ComparisonParams,
    body: StageOrderBody,
    response: Type.Array(Stage),
    auth: true,
  },
  addCapture: {
    summary: 'Record how a stage was captured (edit token): a `stagediff capture` record, appended to the stage',
    params: StageParams,
    body: CaptureBody,
    response: StageWithCaptures,
    status: 201,
    auth: true,
  },
  uploadArtifacts: {
    summary:
      'Upload files into a stage (edit token): multipart field "file", several at once; or one raw application/octet-stream body with ?filename=. Each file gets its own result; a file whose bytes the stage already holds is refused (duplicate, 409 when it is the only one) naming the artifact there.',
    params: StageParams,
    querystring: UploadQuery,
    response: UploadResults,
    auth: true,
  },
  importFromProfiler: {
    summary:
      "Add runs to a stage from a continuous profiler (edit token): the server fetches a window's scrapes for a selector from Parca (only from hosts PROFILER_HOSTS allows) and stores N runs of whole scrapes, one pprof file per kind and run with its covered time and duration: CPU summed over the scrapes that start and end inside the run, allocs/mutex/block as last − first of their snapshots, heap and goroutine as the snapshot nearest the run's end; from Pyroscope (source pyroscope), over its Connect querier, each equal sub-window's merge of the delta types (CPU, allocs, mutex, block) and the heap and goroutine snapshot nearest the run's end",
    params: StageParams,
    body: ProfilerImportBody,
    response: ProfilerImportReply,
    auth: true,
  },
  rawArtifact: {
    summary: 'The original bytes of an uploaded file',
    params: ArtifactParams,
    response: Binary,
    produces: 'application/octet-stream',
  },
  deleteArtifact: {
    summary: 'Remove one file from a comparison (edit token)',
    params: ComparisonArtifactParams,
    response: Nothing,
    status: 204,
    auth: true,
  },
  putStageSources: {
    summary:
      "Store a stage's source files (edit token), replacing any it had: a .tar.gz or .zip archive as a raw application/octet-stream body (?filename= names it in errors). Only .go, .s, .c, .h files and go.mod are kept, rooted at the archive's shallowest go.mod; an archive with links, ../ or absolute paths, or past MAX_SOURCE_FILE_BYTES, MAX_SOURCE_BYTES, MAX_SOURCE_FILES or MAX_SOURCE_ARCHIVE_ENTRIES is refused (400 or 413 naming the archive, the entry and the problem) and nothing is stored. A stagediff-source.json at the archive's root gives the commit and dirty flag",
    params: StageParams,
    querystring: UploadQuery,
    response: StageSourcesInfo,
    auth: true,
  },
  getStageSources: {
    summary: "The source files stored with a stage: module path, commit, dirty flag and each file's path and size",
    params: StageParams,
    response: StageSourcesListing,
  },
  deleteStageSources: {
    summary: "Remove a stage's source files (edit token)",
    params: StageParams,
    response: Nothing,
    status: 204,
    auth: true,
  },
  source: {
    summary:
      "One function's source in two stages, line by line: each stage's file (from its stored sources) aligned by a text diff of the two versions (unchanged lines pair up even when code above them moved; removed lines keep their old cost, added lines show their new one), each line with its flat and cum in both stages in the diff's mode, and the engine's verdict where the line is the same file:line in both. The figures are the diff's at line granularity (go tool pprof -list on each stage's own profile and sources). With SOURCE_GOPROXY set, a dependency's or the standard library's file the stage's sources lack comes from its module version's zip on that Go module proxy (each side says where its text came from: textFrom, module, goVersion, or why not: problem). Without text on both sides, the function's file:line rows",
    params: ComparisonParams,
    querystring: SourceQuery,
    response: SourceView,
  },
  checkFilters: {
    summary:
      'Checks focus/ignore/hide/show as the analysis routes would (Go syntax, limits) without any analysis: the expressions as they will apply, or the same 400 naming the parameter',
    querystring: FilterQuery,
    response: FilterCheck,
  },
  stageTable: {
    summary:
      "The stage table: each stage's figures across its runs (load-test figures per run, CPU and allocated bytes per request per profile), with the verdicts against the previous stage and the first, and the change points of QPS, P99 and CPU per request over the stages (E-Divisive with a t-test, as Apache Otava; from 6 stages with the figure). `window` is how many consecutive stages the change-point search splits at a time (Otava's window_len; default 50, at most 500)",
    params: ComparisonParams,
    querystring: StageTableQuery,
    response: StageTable,
  },
  changes: {
    summary:
      'Everything the change engine judges about one pair of stages (id or name): each figure with its interval and verdict, the per-request divisors, the functions whose cost changed (named where the change starts), benchmarks, GC, the runtime rows (execution traces and runtime metrics, present only when a stage has either), the change points of the stage table that fall between the two stages (present only when the pair straddles one; `window` as the stage table\'s), and "what changed" in words',
    params: ComparisonParams,
    querystring: ChangesQuery,
    response: StageChanges,
  },
  flamegraph: {
    summary: 'Call tree of one stage as nested {name, value, children} nodes, trimmed at minFraction of the total',
    params: ComparisonParams,
    querystring: FlamegraphQuery,
    response: Flamegraph,
  },
  diff: {
    summary:
      'Diff of two stages: a tree with delta per node and functions ranked by change (absolute equals go tool pprof -diff_base). With several profiles per stage, rows and nodes carry the verdict of the function across the profiles',
    params: ComparisonParams,
    querystring: DiffQuery,
    response: Diff,
  },
  search: {
    summary:
      "Search a stage's whole call tree (or, with base and target, the diff's) for frames matching a Go regular expression (case-insensitive): the share of the total whose stacks hold a match, and the call paths of the heaviest matching frames, trimmed from the drawn tree or not",
    params: ComparisonParams,
    querystring: SearchQuery,
    response: Search,
  },
  top: {
    summary: 'Flat and cum of every function of one stage (pprof -top)',
    params: ComparisonParams,
    querystring: TopQuery,
    response: Top,
  },
  trajectory: {
    summary: "The top functions' flat/cum at every stage, with their spread across a stage's profiles",
    params: ComparisonParams,
    querystring: TrajectoryQuery,
    response: Trajectory,
  },
  sandwich: {
    summary: 'Callers and callees of one function',
    params: ComparisonParams,
    querystring: SandwichQuery,
    response: Sandwich,
  },
  timeline: {
    summary: 'Per-second timelines and latency distributions of every load test, per stage',
    params: ComparisonParams,
    response: Timeline,
  },
  folded: {
    summary: 'Folded stacks (Brendan Gregg format) of one stage',
    params: ComparisonParams,
    querystring: FoldedQuery,
    response: Text,
    produces: 'text/plain; charset=utf-8',
  },
  benchmarks: {
    summary: "benchstat's comparison of two stages' go test -bench outputs (paired by configuration, as benchstat)",
    params: ComparisonParams,
    querystring: StagePairQuery,
    response: Benchmarks,
  },
  gc: {
    summary: 'GC traces per stage: cycles and pause summaries',
    params: ComparisonParams,
    response: GcStages,
  },
  runtime: {
    summary:
      "What the Go runtime did in two stages (id or name): each stage's execution traces (summary, timeline of running/runnable goroutines, GC and STW spans, requests served during each), runtime-metric series and scheduler traces; the change engine's runtime rows (the same as GET …/changes' runtime): verdicts across the traces on scheduling wait (mean, P99), GC stop-the-world, time blocked by reason, syscalls and goroutines created, and across the metrics windows on GC CPU, bytes allocated and scheduling latency P99 (totals per request when every window has its own load run, else per second); each trace's place on the wall clock",
    params: ComparisonParams,
    querystring: StagePairQuery,
    response: StageRuntime,
  },
  requests: {
    summary:
      "The requests of two stages' execution traces (id or name), side by side: per stage, each trace's method (runtime/trace tasks or net/http connection goroutines), its requests' latency distribution (P50, P90, P99, max) and histogram on log-scale bins both stages share, each part's distribution (running, scheduler wait, syscalls, network, locks, channels, select, sleep, GC), the mean parts of the median band and of the slowest 1 %, the slowest requests with their critical path as segments (goroutine, entry function, offsets, part), where the slowest requests' paths went (by goroutine entry function and part); and the change engine's request rows (the same as GET …/changes' runtime rows request-*). status says when a stage has no traced requests or its traces were too large for the request analysis",
    params: ComparisonParams,
    querystring: StagePairQuery,
    response: RequestsView,
  },
  flamegraphSvg: {
    summary: 'Flamegraph of one stage as SVG (root on top; the parameters of /flamegraph, plus width)',
    params: ComparisonParams,
    querystring: FlamegraphImageQuery,
    response: Binary,
    produces: 'image/svg+xml; charset=utf-8',
  },
  flamegraphPng: {
    summary: 'Flamegraph of one stage as PNG (the parameters of /flamegraph, plus width)',
    params: ComparisonParams,
    querystring: FlamegraphImageQuery,
    response: Binary,
    produces: 'image/png',
  },
  diffSvg: {
    summary: 'Diff flamegraph of two stages as SVG (red: more in the target, blue: less; the parameters of /diff)',
    params: ComparisonParams,
    querystring: DiffImageQuery,
    response: Binary,
    produces: 'image/svg+xml; charset=utf-8',
  },
  diffPng: {
    summary: 'Diff flamegraph of two stages as PNG (the parameters of /diff)',
    params: ComparisonParams,
    querystring: DiffImageQuery,
    response: Binary,
    produces: 'image/png',
  },
  stageProfile: {
    summary:
      "One stage's profiles of a kind merged, as a pprof file (gzipped profile.proto) for go tool pprof: go tool pprof -top on it prints what it prints on the stage's files together. sampleType picks the files as the views do and becomes the default sample type",
    params: StageParams,
    querystring: ProfileDownloadQuery,
    response: PprofFile,
    produces: 'application/octet-stream',
  },
  stagePgo: {
    summary:
      "A stage's CPU profiles merged as one profile for Go's profile-guided optimisation: save it as default.pgo in the main package (or pass go build -pgo=FILE) to build what the stage measured",
    params: StageParams,
    response: PprofFile,
    produces: 'application/octet-stream',
  },
  diffProfile: {
    summary:
      "The diff of two stages as a pprof file, in go tool pprof's -diff_base convention: the target's samples, and the base's negated and labelled pprof::base=true, so go tool pprof on it prints what -diff_base prints on the stages' files",
    params: ComparisonParams,
    querystring: DiffProfileQuery,
    response: PprofFile,
    produces: 'application/octet-stream',
  },
} as const satisfies Record<EndpointName, EndpointSchema>;

export type Schemas = typeof SCHEMAS;

type Field<N extends EndpointName, K extends string> =
  Schemas[N] extends Record<K, infer S extends TSchema> ? Static<S> : never;

/** Query parameters that have a default wherever they appear (validation fills them in). */
type Defaulted =
  | 'mode'
  | 'granularity'
  | 'minFraction'
  | 'maxNodes'
  | 'limit'
  | 'sort'
  | 'n'
  | 'functions'
  | 'width'
  | 'noise'
  | 'window';

/** The query of endpoint N as the server reads it, defaults filled in. */
export type Query<N extends EndpointName> = Field<N, 'querystring'>;
/** What a client sends as the query of endpoint N: parameters with defaults may be left out. */
export type ClientQuery<N extends EndpointName> = Omit<Query<N>, Defaulted> &
  Partial<Pick<Query<N>, Extract<keyof Query<N>, Defaulted>>>;
/** The path parameters of endpoint N (none: an empty record). */
export type Params<N extends EndpointName> = Schemas[N] extends { params: TSchema }
  ? Field<N, 'params'>
  : Record<string, never>;
/** The body of endpoint N. */
export type Body<N extends EndpointName> = Field<N, 'body'>;
/** The success answer of endpoint N. */
export type Reply<N extends EndpointName> = Static<Schemas[N]['response']>;

export { ENDPOINT_ROUTES, ErrorBody, endpointUrl };
export type { EndpointName };
