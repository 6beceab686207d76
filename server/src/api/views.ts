import Type, { type Static } from 'typebox';
import type { GcTrace } from '../model/gctrace.ts';
import type { LoadTestSummary, PercentilePoint, TimelineBucket } from '../model/loadtest.ts';
import { ChangePointWindow, ProfileRequests, Verdict, VerdictStatus } from './changes.ts';
import { Literals, Model, Nullable, StageRef } from './kit.ts';
import {
  DEFAULT_DIFF_MODE,
  DEFAULT_FUNCTIONS,
  DEFAULT_GRANULARITY,
  DIFF_MODE_PARAMS,
  DIFF_MODES,
  FUNCTIONS_OPTIONS,
  GRANULARITIES,
  PROFILE_KINDS,
} from './options.ts';

/* The analysis views of a comparison: their query parameters and their answers. */

/** Profile kinds (options.ts PROFILE_KINDS): a view is always of one kind; profiles of different kinds never merge. */
export const ProfileKind = Literals(PROFILE_KINDS);
export type ProfileKind = Static<typeof ProfileKind>;

/** A sample type as the UI presents it: what it measures, and whether it accumulates since the process started. */
export const SampleTypeInfo = Type.Object({
  type: Type.String(),
  unit: Type.String(),
  description: Type.Optional(Type.String()),
  /** True when comparing stages by absolute value compares uptimes as much as code (snapshots' alloc_*, …). */
  cumulativeSinceStart: Type.Optional(Type.Boolean()),
});
export type SampleTypeInfo = Static<typeof SampleTypeInfo>;

export const MAX_FILTER_PARAMS = 16;
/**
 * A Go regular expression (RE2 syntax, as `go tool pprof` takes it); given several times, the values
 * are joined with "|" as pprof's interactive `focus=` does.
 */
const FilterParam = Type.Union([Type.String(), Type.Array(Type.String(), { maxItems: MAX_FILTER_PARAMS })], {
  description: 'Go regular expression (RE2 syntax), at most 512 characters; repeat to join with |',
});
/**
 * pprof's tag filters: tagfocus/tagignore take `[KEY=]FILTER`, a number range with units (`32kb`,
 * `:64kb`, `4mb:`, `1ms:10ms`) or comma-separated Go regular expressions on label values;
 * tagshow/taghide are Go regular expressions on label keys.
 */
const TagFilterParam = Type.String({
  maxLength: 512,
  description: 'as go tool pprof -tagfocus/-tagignore ([KEY=]RANGE or regexps) or -tagshow/-taghide (key regexp)',
});
const FilterParams = {
  focus: Type.Optional(FilterParam),
  ignore: Type.Optional(FilterParam),
  hide: Type.Optional(FilterParam),
  show: Type.Optional(FilterParam),
  tagfocus: Type.Optional(TagFilterParam),
  tagignore: Type.Optional(TagFilterParam),
  tagshow: Type.Optional(TagFilterParam),
  taghide: Type.Optional(TagFilterParam),
};
/**
 * What rows and tree nodes stand for, as `go tool pprof -functions|-lines|-files`: a function (the
 * default), a function's source line (`name file:line`), or a file (a node per function starting in
 * it and binary, as pprof keys them: `file (function at line N) [binary's full path]`, so the base's and
 * the target's rows of a file stay apart when their binaries ran from different paths, as in pprof).
 */
export const Granularity = Literals(GRANULARITIES);
export type Granularity = Static<typeof Granularity>;
/**
 * Which profiles a view reads: their kind (default: CPU when the comparison has it) and sample type, and
 * what its rows stand for (filled in by validation: functions unless said).
 */
const ProfileSelect = {
  kind: Type.Optional(ProfileKind),
  sampleType: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  granularity: Literals(GRANULARITIES, { default: DEFAULT_GRANULARITY }),
};
const MinFraction = Type.Number({
  minimum: 0,
  maximum: 1,
  default: 0,
  description: 'drop tree nodes below this fraction of the total',
});

/** Most tree nodes a flamegraph or diff holds unless the request says otherwise. */
export const DEFAULT_MAX_TREE_NODES = 50_000;
/** Deepest call path a `root` may name (the trees' depth limit). */
export const MAX_ROOT_FRAMES = 1024;
const MaxNodes = Type.Integer({
  minimum: 1,
  maximum: 500_000,
  default: DEFAULT_MAX_TREE_NODES,
  description:
    'most tree nodes: when minFraction would keep more, it is raised until the tree holds the heaviest nodes only (trim.minFraction, trim.nodeCap)',
});
/**
 * The call path a tree is rooted at: frame names from the outermost (`root=main&root=handler`), a
 * frame per value; absent, the whole profile. The subtree is trimmed at minFraction of its own value.
 */
const CallPath = Type.Union(
  [Type.String({ maxLength: 100_000 }), Type.Array(Type.String({ maxLength: 100_000 }), { maxItems: MAX_ROOT_FRAMES })],
  { description: 'call path to root the tree at: one frame per value, outermost first' },
);
const TreeSelect = { root: Type.Optional(CallPath), maxNodes: MaxNodes };

/**
 * The unit of a single stage's views (flamegraph, sandwich, trajectory): the page's one mode control,
 * the diff's modes read for one stage. `auto` (the default): per request when every profile of the stage
 * has its own load run (the diff's rule, services/requests.ts), else absolute; `absolute` (and
 * `normalize`, which scales one stage to another and so leaves a single stage as it is) is the profile
 * as go tool pprof shows it; `per-request` divides by the requests served during the profiles' windows;
 * `share` by the stage's total.
 */
export const ViewModeParam = Type.Union(
  [
    Type.Literal('auto'),
    Type.Literal('absolute'),
    Type.Literal('share'),
    Type.Literal('normalize'),
    Type.Literal('per-request'),
  ],
  { default: 'auto' },
);
export type ViewModeParam = Static<typeof ViewModeParam>;
/** What a single stage's values were divided by, when per request. */
export const ViewPerRequest = Type.Object({
  /** Requests served during the profiles' windows, summed over the profiles merged. */
  requests: Type.Number(),
  /** In words, how they were counted (one line for all the profiles). */
  method: Type.String(),
  /** True when every profile's requests come from its own load run. */
  measured: Type.Boolean(),
  /**
   * Each profile's divisor (its run and requests) and its own total of the sample type as recorded,
   * before filters (so total ÷ requests is the profile's figure per request, as the stage table's).
   */
  profiles: Type.Array(Type.Object({ ...ProfileRequests.properties, total: Nullable(Type.Number()) })),
});
export type ViewPerRequest = Static<typeof ViewPerRequest>;
/** The unit fields of a single stage's view. */
export const ViewUnitFields = {
  /** How the values are counted: as recorded, per request, or as a share of the stage's total. */
  mode: Literals(['absolute', 'per-request', 'share']),
  /** Why this mode, when the request said `auto` or `normalize`. */
  modeReason: Nullable(Type.String()),
  perRequest: Nullable(ViewPerRequest),
};

export const FilterQuery = Type.Object(FilterParams, { additionalProperties: false });
export type FilterQuery = Static<typeof FilterQuery>;
/** The filters as they will apply: one expression per filter. */
export const FilterCheck = Type.Object({
  focus: Type.Optional(Type.String()),
  ignore: Type.Optional(Type.String()),
  hide: Type.Optional(Type.String()),
  show: Type.Optional(Type.String()),
  tagfocus: Type.Optional(Type.String()),
  tagignore: Type.Optional(Type.String()),
  tagshow: Type.Optional(Type.String()),
  taghide: Type.Optional(Type.String()),
});

export const FlameNode = Type.Cyclic(
  {
    FlameNode: Type.Object({
      name: Type.String(),
      value: Type.Number(),
      children: Type.Array(Type.Ref('FlameNode')),
    }),
  },
  'FlameNode',
);
export type FlameNode = Static<typeof FlameNode>;

export const FlamegraphQuery = Type.Object(
  {
    stage: StageRef,
    ...ProfileSelect,
    mode: Type.Optional(ViewModeParam),
    minFraction: MinFraction,
    ...TreeSelect,
    ...FilterParams,
  },
  { additionalProperties: false },
);
export type FlamegraphQuery = Static<typeof FlamegraphQuery>;

/** What a tree left out, and the threshold it applied: minFraction, or above it when maxNodes capped the tree. */
const TrimThreshold = {
  minFraction: Type.Number(),
  /** The node cap, when it raised the threshold above the minFraction asked for; else null. */
  nodeCap: Nullable(Type.Integer()),
};
export const TreeTrim = Type.Object({
  prunedNodes: Type.Number(),
  prunedValue: Type.Number(),
  nodes: Type.Number(),
  depthTruncatedNodes: Type.Number(),
  ...TrimThreshold,
});

/**
 * The names as the profiles write them, for the rows whose name is `go tool pprof`'s default (short)
 * form: a Go generic's `go.shape` arguments lose their parenthesised lists in the views, as in pprof's
 * output; hover texts and exports show these. Several only when pprof merged full names into one.
 * Absent when no row's name is shortened.
 */
export const FullNames = Type.Record(Type.String(), Type.Array(Type.String()));
export const Flamegraph = Type.Object({
  stageId: Type.String(),
  kind: ProfileKind,
  granularity: Granularity,
  sampleType: Type.String(),
  /** The values' unit: the sample type's, per request ("nanoseconds/request") or `fraction` (share). */
  unit: Type.String(),
  total: Type.Number(),
  ...ViewUnitFields,
  /** The sample types of this kind, for the picker. */
  sampleTypes: Type.Array(SampleTypeInfo),
  /** The profiles merged into the view. */
  profiles: Type.Array(Type.String()),
  /** The call path the tree is rooted at (empty: the whole profile). */
  root: Type.Array(Type.String()),
  tree: FlameNode,
  trim: TreeTrim,
  fullNames: Type.Optional(FullNames),
});
export type Flamegraph = Static<typeof Flamegraph>;

export const TopQuery = Type.Object(
  { stage: StageRef, ...ProfileSelect, ...FilterParams },
  { additionalProperties: false },
);
export const TopRow = Type.Object({ name: Type.String(), flat: Type.Number(), cum: Type.Number() });
export const Top = Type.Object({
  stageId: Type.String(),
  kind: ProfileKind,
  granularity: Granularity,
  sampleType: Type.String(),
  unit: Type.String(),
  total: Type.Number(),
  rows: Type.Array(TopRow),
  fullNames: Type.Optional(FullNames),
});
export type Top = Static<typeof Top>;

export const FoldedQuery = TopQuery;

/** Which of a stage's profiles to download: their kind (default as the views) and sample type. */
export const ProfileDownloadQuery = Type.Object(
  { kind: Type.Optional(ProfileKind), sampleType: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })) },
  { additionalProperties: false },
);
/** Two stages' profiles of one kind, for a pprof -diff_base profile. */
export const DiffProfileQuery = Type.Object(
  {
    base: StageRef,
    target: StageRef,
    kind: Type.Optional(ProfileKind),
    sampleType: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  },
  { additionalProperties: false },
);

export const SandwichQuery = Type.Object(
  {
    stage: StageRef,
    ...ProfileSelect,
    mode: Type.Optional(ViewModeParam),
    fn: Type.String({ minLength: 1, maxLength: 100000 }),
    ...FilterParams,
  },
  { additionalProperties: false },
);
// One cyclic definition holding both trees: a schema may define the recursive node only once.
export const Sandwich = Type.Cyclic(
  {
    SandwichNode: Type.Object({
      name: Type.String(),
      value: Type.Number(),
      children: Type.Array(Type.Ref('SandwichNode')),
    }),
    Sandwich: Type.Object({
      name: Type.String(),
      stageId: Type.String(),
      kind: ProfileKind,
      sampleType: Type.String(),
      unit: Type.String(),
      total: Type.Number(),
      /** The profiles merged into the view. */
      profiles: Type.Array(Type.String()),
      ...ViewUnitFields,
      flat: Type.Number(),
      cum: Type.Number(),
      /** Who calls the function: rooted at it, each child one caller further up. */
      callers: Type.Ref('SandwichNode'),
      /** What the function calls: rooted at it, as in a flame graph. */
      callees: Type.Ref('SandwichNode'),
    }),
  },
  'Sandwich',
);
export type Sandwich = Static<typeof Sandwich>;

/**
 * Diff modes: `absolute` equals `go tool pprof -diff_base`; `normalize` is pprof's -normalize; `share`
 * divides each side by its own total; `per-request` by the requests each stage served during its
 * profiles' windows; `auto` (the default) is per-request when every profile of both stages has its own
 * load run, else absolute.
 */
export const DiffMode = Literals(DIFF_MODES);
export type DiffMode = Static<typeof DiffMode>;
export const DiffModeParam = Literals(DIFF_MODE_PARAMS, { default: DEFAULT_DIFF_MODE });
export type DiffModeParam = Static<typeof DiffModeParam>;

/** Longest search term (as the filters' expressions). */
export const MAX_SEARCH_LENGTH = 512;
export const SearchQuery = Type.Object(
  {
    q: Type.String({
      minLength: 1,
      maxLength: MAX_SEARCH_LENGTH,
      description: 'a Go regular expression, matched case-insensitively anywhere in each frame name',
    }),
    /** One stage's tree; or, with base and target instead, the diff's. */
    stage: Type.Optional(StageRef),
    base: Type.Optional(StageRef),
    target: Type.Optional(StageRef),
    ...ProfileSelect,
    limit: Type.Integer({ minimum: 1, maximum: 200, default: 20, description: 'most matching frames listed' }),
    ...FilterParams,
  },
  { additionalProperties: false },
);
export type SearchQuery = Static<typeof SearchQuery>;
export const Search = Type.Object({
  q: Type.String(),
  kind: ProfileKind,
  granularity: Granularity,
  sampleType: Type.String(),
  unit: Type.String(),
  /** The stages searched: the one stage, or the diff's base and target. Every list below is per stage, in this order. */
  stages: Type.Array(Type.String()),
  /** Each stage's total (the flamegraph's `total`). */
  totals: Type.Array(Type.Number()),
  /** Total of the samples whose stack holds a matching frame (each sample once, however many frames match). */
  matched: Type.Array(Type.Number()),
  /** Call-tree frames whose name matches, drawn or trimmed. */
  frames: Type.Integer(),
  /** Distinct names matching. */
  names: Type.Integer(),
  /** The heaviest matching frames: the call path from the root (the last name is the match) and its values. */
  hits: Type.Array(Type.Object({ path: Type.Array(Type.String()), values: Type.Array(Type.Number()) })),
});
export type Search = Static<typeof Search>;

/** Hot-path rows a diff answer holds when the request names no `limit`. */
export const DIFF_DEFAULT_ROWS = 2000;

export const DiffQuery = Type.Object(
  {
    base: StageRef,
    target: StageRef,
    ...ProfileSelect,
    mode: DiffModeParam,
    minFraction: MinFraction,
    ...TreeSelect,
    limit: Type.Integer({ minimum: 1, maximum: 1_000_000, default: DIFF_DEFAULT_ROWS }),
    sort: Literals(['flat', 'cum'], { default: 'flat' }),
    ...FilterParams,
  },
  { additionalProperties: false },
);
export type DiffQuery = Static<typeof DiffQuery>;

/** A verdict in brief, where thousands of functions carry one. */
export const VerdictBrief = Type.Object({
  status: VerdictStatus,
  /** The function's own U-test p. */
  p: Nullable(Type.Number()),
  /** Its Benjamini–Hochberg adjusted p across the diff's tested functions (null: not in the tested family). */
  q: Nullable(Type.Number()),
});
export type VerdictBrief = Static<typeof VerdictBrief>;

export const DiffNode = Type.Cyclic(
  {
    DiffNode: Type.Object({
      name: Type.String(),
      /** Width: |base| + |target|, so both sides fit and children nest. */
      value: Type.Number(),
      /** target − base. */
      delta: Type.Number(),
      base: Type.Number(),
      target: Type.Number(),
      /** The function's cum tested across the stages' profiles (absent for functions not tested). */
      verdict: Type.Optional(
        Nullable(Type.Object({ status: VerdictStatus, p: Nullable(Type.Number()), q: Nullable(Type.Number()) })),
      ),
      children: Type.Array(Type.Ref('DiffNode')),
    }),
  },
  'DiffNode',
);
export type DiffNode = Static<typeof DiffNode>;

export const DiffStatus = Literals(['new', 'removed', 'changed', 'unchanged']);
export type DiffStatus = Static<typeof DiffStatus>;

export const DiffRow = Type.Object({
  name: Type.String(),
  base: Type.Object({ flat: Type.Number(), cum: Type.Number() }),
  target: Type.Object({ flat: Type.Number(), cum: Type.Number() }),
  deltaFlat: Type.Number(),
  deltaCum: Type.Number(),
  status: DiffStatus,
  /** The function's flat and cum tested across the stages' profiles (absent for functions not tested). */
  verdict: Type.Optional(Nullable(Type.Object({ flat: VerdictBrief, cum: VerdictBrief }))),
});
export type DiffRow = Static<typeof DiffRow>;

/**
 * How the functions of a diff were tested across the stages' profiles: each profile normalised
 * (per request when every profile has its requests, else per second, else raw) and the U test run
 * on the function's flat and cum. `status` is the verdict every function shares when the run counts
 * alone decide it: `too-few-runs` (e.g. 2+2) and `single-run` (a side has one profile); else `tested`.
 */
export const DiffNoise = Type.Object({
  status: Literals(['tested', 'too-few-runs', 'single-run']),
  /**
   * How many functions (or lines) were tested as one family: those whose per-profile cum, over the
   * profiles of both stages pooled, spreads by at least `floor` of a profile's median total. A verdict is
   * significant where its Benjamini–Hochberg q across the family is ≤ alpha (false discovery rate alpha).
   */
  tested: Type.Integer(),
  /** The functions considered (the largest NOISE_MAX_FUNCTIONS by cum); those below the floor are not tested. */
  candidates: Type.Integer(),
  /** The family's floor: spread of a function's pooled per-profile cum as a fraction of the median total. */
  floor: Type.Number(),
  normalisation: Literals(['per-request', 'per-second', 'raw']),
  unit: Type.String(),
  nBase: Type.Integer(),
  nTarget: Type.Integer(),
  alpha: Type.Number(),
  minP: Nullable(Type.Number()),
  runsNeeded: Type.Integer(),
});
export type DiffNoise = Static<typeof DiffNoise>;

export const DiffPerRequest = Type.Object({
  baseRequests: Type.Number(),
  targetRequests: Type.Number(),
  /** In words, how the requests were counted on each side. */
  method: Type.String(),
  /** True when every profile's requests come from its own load run. */
  measured: Type.Boolean(),
});

export const Diff = Type.Object({
  mode: DiffMode,
  /** Why this mode, when the request said `auto`. */
  modeReason: Nullable(Type.String()),
  kind: ProfileKind,
  granularity: Granularity,
  unit: Type.String(),
  sampleType: Type.String(),
  baseTotal: Type.Number(),
  targetTotal: Type.Number(),
  scale: Type.Object({ base: Type.Number(), target: Type.Number() }),
  warnings: Type.Array(Type.String()),
  perRequest: Nullable(DiffPerRequest),
  noise: Nullable(DiffNoise),
  /** The call path the tree is rooted at (empty: the whole profiles); rows and totals are the whole profiles'. */
  root: Type.Array(Type.String()),
  tree: DiffNode,
  trim: Type.Object({
    prunedNodes: Type.Number(),
    /** |base| + |target| of the cut subtrees' roots. */
    prunedValue: Type.Number(),
    nodes: Type.Number(),
    depthTruncatedStacks: Type.Number(),
    ...TrimThreshold,
  }),
  /** The first `limit` rows (by |Δflat|, or |Δcum| with sort=cum) of `rowsTotal`. */
  top: Type.Array(DiffRow),
  rowsTotal: Type.Integer(),
  fullNames: Type.Optional(FullNames),
});
export type Diff = Static<typeof Diff>;

/** One function's source lines in two stages: the query (a diff's, at line granularity, for one function). */
export const SourceQuery = Type.Object(
  {
    base: StageRef,
    target: StageRef,
    /** The function, as the views name it (e.g. `main.appendJSONString`). */
    fn: Type.String({ minLength: 1, maxLength: 4096 }),
    kind: Type.Optional(ProfileKind),
    sampleType: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    mode: DiffModeParam,
    ...FilterParams,
  },
  { additionalProperties: false },
);
export type SourceQuery = Static<typeof SourceQuery>;

const LineFigures = Type.Object({ line: Type.Integer(), flat: Type.Number(), cum: Type.Number() });

/** One stage's side of the source view. */
export const SourceSide = Type.Object({
  stageId: Type.String(),
  stageName: Type.String(),
  /**
   * The function's file, relative to its module: the stored file it matched, or its path in its module
   * version or the standard library; an absolute path nothing places is its file name alone (the
   * capture machine's directories are never answered). Null when no sample of the stage falls in the
   * function.
   */
  file: Nullable(Type.String()),
  /**
   * The file whose text is shown: with `textFrom` 'sources' the stored file it matched (module-relative
   * path), with 'proxy' its path inside `module`'s zip; null when no text was found.
   */
  path: Nullable(Type.String()),
  /** Whether the stage carries source files at all. */
  hasSources: Type.Boolean(),
  /** The commit and dirty flag of those sources ('' and null when unknown). */
  revision: Type.String(),
  dirty: Nullable(Type.Boolean()),
  /**
   * Where the side's text came from: the stage's own sources, a module version's zip from the server's
   * Go module proxy (SOURCE_GOPROXY: a dependency's file, or the standard library's from the toolchain
   * module), or nowhere (`none`: rows without text).
   */
  textFrom: Literals(['sources', 'proxy', 'none']),
  /** With text from the proxy: the module version, and whether it was fetched for this answer (else the store's cache). */
  module: Nullable(Type.Object({ module: Type.String(), version: Type.String(), fetched: Type.Boolean() })),
  /**
   * A standard-library file: the Go release its text is taken from and what said so: the stage's
   * runtime metrics (`go_info`, the binary's own word), the server's SOURCE_GO_VERSION, or the
   * `toolchain` line of the stage's go.mod (the least the build used).
   */
  goVersion: Nullable(
    Type.Object({
      version: Type.String(),
      from: Literals(['metrics', 'setting', 'go.mod']),
    }),
  ),
  /** Why the side has no text although its file names a module version or GOROOT (the proxy's answer, no Go release known). */
  problem: Nullable(Type.String()),
});
export type SourceSide = Static<typeof SourceSide>;

/**
 * A row of the source view. Aligned (both stages have the file): `same` pairs an unchanged line of
 * each version, `removed` is a line of the base only (it keeps its old cost), `added` one of the target
 * only. Without sources on both sides, rows are the function's file:line rows (`unaligned`), each side
 * read at the same file:line. Text is the line's bytes as UTF-8, never markup, cut at
 * SOURCE_VIEW_MAX_LINE_CHARS characters (`clipped`). Like `go tool pprof -list`, only the sampled lines
 * and a few lines of context around them are rows: each stretch left out is one `elided` row counting
 * the lines of each version it stands for (no figures, no text).
 */
export const SourceRow = Type.Object({
  change: Literals(['same', 'removed', 'added', 'unaligned', 'elided']),
  /** An `elided` row: how many lines of each version it leaves out (unaligned: file:line rows left out). */
  elided: Type.Optional(Type.Object({ base: Type.Integer(), target: Type.Integer() })),
  /** A text of the row was longer than SOURCE_VIEW_MAX_LINE_CHARS and is cut there. */
  clipped: Type.Optional(Type.Boolean()),
  /** An unaligned row's file, relative to its module as a side's `file`; null for aligned rows (each side's file is on the side). */
  file: Nullable(Type.String()),
  base: Nullable(LineFigures),
  target: Nullable(LineFigures),
  baseText: Nullable(Type.String()),
  targetText: Nullable(Type.String()),
  /** target − base of flat and cum (a missing side counts 0). */
  deltaFlat: Type.Number(),
  deltaCum: Type.Number(),
  /**
   * The engine's verdict on the line's flat and cum, when the two sides are the same file:line key
   * (the noise test runs per key); null when not tested or when the line moved.
   */
  verdict: Nullable(Type.Object({ flat: VerdictBrief, cum: VerdictBrief })),
});
export type SourceRow = Static<typeof SourceRow>;

export const SourceView = Type.Object({
  fn: Type.String(),
  mode: DiffMode,
  modeReason: Nullable(Type.String()),
  kind: ProfileKind,
  unit: Type.String(),
  sampleType: Type.String(),
  perRequest: Nullable(DiffPerRequest),
  noise: Nullable(DiffNoise),
  base: SourceSide,
  target: SourceSide,
  /** True when both versions' text was found and the rows are their alignment. */
  aligned: Type.Boolean(),
  rows: Type.Array(SourceRow),
  /** Characters of a line the page highlights (SOURCE_VIEW_HIGHLIGHT_CHARS); the rest is shown plain. */
  highlightChars: Type.Integer(),
  /** When SOURCE_VIEW_MAX_ROWS made the view leave out more than unsampled lines: what was left out. */
  limited: Nullable(Type.String()),
});
export type SourceView = Static<typeof SourceView>;

export const TrajectoryQuery = Type.Object(
  { ...ProfileSelect, mode: Type.Optional(ViewModeParam), n: Type.Integer({ minimum: 1, maximum: 100, default: 10 }) },
  { additionalProperties: false },
);
export const ShareSpread = Type.Object({
  n: Type.Integer(),
  min: Type.Number(),
  max: Type.Number(),
  median: Type.Number(),
  lo: Nullable(Type.Number()),
  hi: Nullable(Type.Number()),
});
export type ShareSpread = Static<typeof ShareSpread>;
export const TrajectoryPoint = Type.Object({
  stageId: Type.String(),
  flat: Type.Number(),
  cum: Type.Number(),
  total: Type.Number(),
  /**
   * The function's cum across each of the stage's profiles, when it holds several: each profile's share
   * of its total, or, per request, each profile's cum over its own requests.
   */
  spread: Nullable(ShareSpread),
});
export type TrajectoryPoint = Static<typeof TrajectoryPoint>;
export const Trajectory = Type.Object({
  kind: Nullable(ProfileKind),
  sampleType: Nullable(Type.String()),
  /** The points' unit: the sample type's, per request ("nanoseconds/request") or `fraction` (share). */
  unit: Type.String(),
  /** How the points are counted (the page's one mode control, as a flamegraph's). */
  mode: ViewUnitFields.mode,
  /** Why this mode, when the request said `auto` or `normalize`. */
  modeReason: ViewUnitFields.modeReason,
  /** Each stage, and the requests its points are divided by when per request (else null). */
  stages: Type.Array(Type.Object({ stageId: Type.String(), name: Type.String(), requests: Nullable(Type.Number()) })),
  functions: Type.Array(Type.Object({ name: Type.String(), points: Type.Array(Nullable(TrajectoryPoint)) })),
});
export type Trajectory = Static<typeof Trajectory>;

export const TimelineRun = Type.Object({
  artifactId: Type.String(),
  filename: Type.String(),
  /** 1-based position of the run in a file of several runs (null for a file of one run). */
  runInFile: Nullable(Type.Integer()),
  format: Type.String(),
  summary: Model<LoadTestSummary>('the run’s summary (model/loadtest.ts LoadTestSummary)'),
  timeline: Model<TimelineBucket[] | null>('per-second buckets {t, requests, rps, errors, latencyMs}, or null'),
  latencyDistribution: Model<PercentilePoint[] | null>('[{percentile, ms}] or null'),
});
export type TimelineRun = Static<typeof TimelineRun>;
export const Timeline = Type.Object({
  stages: Type.Array(Type.Object({ stageId: Type.String(), name: Type.String(), runs: Type.Array(TimelineRun) })),
});
export type Timeline = Static<typeof Timeline>;

export const StagePairQuery = Type.Object({ base: StageRef, target: StageRef }, { additionalProperties: false });

const BenchSide = Type.Object({ median: Type.Number(), ci: Nullable(Type.Number()) });
export const BenchmarkRow = Type.Object({
  pkg: Type.String(),
  name: Type.String(),
  unit: Type.String(),
  base: BenchSide,
  target: BenchSide,
  deltaPercent: Nullable(Type.Number()),
  p: Type.Number(),
  n: Type.Union([Type.Number(), Type.String()]),
  nBase: Type.Integer(),
  nTarget: Type.Integer(),
  /** benchstat's own mark: p ≤ alpha (it prints "~" otherwise). */
  significant: Type.Boolean(),
  verdict: Verdict,
});
export type BenchmarkRow = Static<typeof BenchmarkRow>;
/**
 * benchstat's comparison of two stages' `go test -bench` outputs. Rows pair a benchmark only where its
 * configuration (the `key: value` lines in effect, and the unit) is the same on both sides, as benchstat
 * does; `unpaired` lists the configurations that differ, `reason` says why nothing could be compared.
 */
export const Benchmarks = Type.Object({
  kind: Type.Literal('benchmark-diff'),
  alpha: Type.Number(),
  rows: Type.Array(BenchmarkRow),
  unpaired: Type.Object({ base: Type.Integer(), target: Type.Integer() }),
  reason: Nullable(Type.String()),
});
export type Benchmarks = Static<typeof Benchmarks>;

export const GcStages = Type.Object({
  stages: Type.Array(
    Type.Object({
      stageId: Type.String(),
      name: Type.String(),
      traces: Type.Array(
        Type.Object({
          artifactId: Type.String(),
          filename: Type.String(),
          trace: Model<GcTrace>('a parsed GODEBUG=gctrace=1 log (model/gctrace.ts)'),
        }),
      ),
    }),
  ),
});
export type GcStages = Static<typeof GcStages>;

export const ChangesQuery = Type.Object(
  {
    base: StageRef,
    target: StageRef,
    kind: Type.Optional(ProfileKind),
    /** Rank the functions that changed: `auto` skips profiles above the automatic size limit. */
    functions: Literals(FUNCTIONS_OPTIONS, { default: DEFAULT_FUNCTIONS }),
    /** The change-point window, for the change points the pair straddles (as the stage table's `window`). */
    window: ChangePointWindow,
  },
  { additionalProperties: false },
);
export type ChangesQuery = Static<typeof ChangesQuery>;

const ImageWidth = Type.Integer({ minimum: 300, maximum: 4000, default: 1200, description: 'pixels' });
export const FlamegraphImageQuery = Type.Object(
  { stage: StageRef, ...ProfileSelect, minFraction: MinFraction, ...TreeSelect, width: ImageWidth, ...FilterParams },
  { additionalProperties: false },
);
export const DiffImageQuery = Type.Object(
  {
    base: StageRef,
    target: StageRef,
    ...ProfileSelect,
    mode: DiffModeParam,
    minFraction: MinFraction,
    ...TreeSelect,
    width: ImageWidth,
    noise: Type.Number({ minimum: 0, maximum: 1, default: 0.001 }),
    // Accepted so a diff view's address works as is; an image has no table to sort or cut.
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
    sort: Type.Optional(Literals(['flat', 'cum'])),
    ...FilterParams,
  },
  { additionalProperties: false },
);
