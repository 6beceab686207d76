import Type, { type Static } from 'typebox';
import { PairConditions, StageConditions } from './conditions.ts';
import { Nullable, Literals } from './kit.ts';

/*
 * The change engine's vocabulary: what a stage's figure is across its runs, and what a change between
 * two stages is worth. The stage table, GET …/changes, `stagediff report` and `stagediff check` all
 * carry these shapes and nothing else; the statistics behind them are benchstat's (analysis/benchstat.ts).
 */

/**
 * How a change between two sets of runs reads, one vocabulary for every figure:
 * - `significant`: two-sided Mann–Whitney U p ≤ alpha;
 * - `no-change`: enough runs that a real change could have shown (minP ≤ alpha), and p > alpha;
 * - `too-few-runs`: even the most extreme ordering of the runs could not reach alpha (minP > alpha), so
 *   p says nothing: e.g. 2+2 or 2+6 runs; the size of the change is shown, unjudged;
 * - `single-run`: a side has one run: nothing says how much a run varies from the next;
 * - `missing`: a side has no value for this figure;
 * - `not-comparable`: the two sides were measured under different load (another tool, or the same tool
 *   with other settings: see api/conditions.ts PairConditions): no ratio, no test; `reason` names both.
 */
export const VerdictStatus = Literals([
  'significant',
  'no-change',
  'too-few-runs',
  'single-run',
  'missing',
  'not-comparable',
]);
export type VerdictStatus = Static<typeof VerdictStatus>;

export const Verdict = Type.Object({
  status: VerdictStatus,
  ratio: Nullable(Type.Number({ description: 'target median / base median' })),
  p: Nullable(Type.Number({ description: 'two-sided Mann–Whitney U p-value; null for single-run and missing' })),
  q: Type.Optional(
    Nullable(
      Type.Number({
        description:
          'for a function judged among many in one diff: its Benjamini–Hochberg adjusted p across the functions tested, the figure compared with alpha (absent for a figure judged alone)',
      }),
    ),
  ),
  nBase: Type.Integer({ description: 'runs on the base side' }),
  nTarget: Type.Integer({ description: 'runs on the target side' }),
  alpha: Type.Number({ description: 'significance level (benchstat: 0.05)' }),
  minP: Nullable(
    Type.Number({ description: 'the smallest p nBase+nTarget runs can give (2 / C(nBase+nTarget, nBase))' }),
  ),
  runsNeeded: Type.Integer({ description: 'runs per stage at which the test can reach alpha (4 at 0.05)' }),
  reason: Type.Optional(
    Type.String({ description: 'not-comparable only: each side’s load tool and settings ("a: wrk, … · b: k6, …")' }),
  ),
});
export type Verdict = Static<typeof Verdict>;

/** The median of per-run values with benchstat's distribution-free 95 % interval of the median. */
export const Estimate = Type.Object({
  n: Type.Integer({ description: 'runs with this figure' }),
  values: Type.Array(Type.Number(), { description: 'one value per run, in run order' }),
  median: Type.Number(),
  lo: Nullable(Type.Number({ description: 'interval bound; null below 6 runs (benchstat’s ± ∞)' })),
  hi: Nullable(Type.Number()),
  ci: Nullable(Type.Number({ description: 'benchstat’s ± as a fraction of the median (0.05 = ± 5 %)' })),
});
export type Estimate = Static<typeof Estimate>;

/**
 * The figures the engine judges for every stage. Load-test figures are per run (req/s; ms; error
 * rate = errors ÷ requests); the per-request figures are per profile: the profile's total ÷ the requests
 * served during its window (see PerRequest), CPU in nanoseconds and allocated bytes per request.
 */
export const FigureKey = Literals(['rps', 'p50', 'p95', 'p99', 'errorRate', 'cpuPerRequest', 'allocPerRequest']);
export type FigureKey = Static<typeof FigureKey>;
export const FIGURE_KEYS: readonly FigureKey[] = [
  'rps',
  'p50',
  'p95',
  'p99',
  'errorRate',
  'cpuPerRequest',
  'allocPerRequest',
];

const perFigure = <T extends Parameters<typeof Type.Object>[0][string]>(t: T) =>
  Type.Object({
    rps: t,
    p50: t,
    p95: t,
    p99: t,
    errorRate: t,
    cpuPerRequest: t,
    allocPerRequest: t,
  });

/** One stage's figures across its runs (null where no run has the figure). */
export const StageFigures = perFigure(Nullable(Estimate));
export type StageFigures = Static<typeof StageFigures>;

/** Verdicts of one stage against another, per figure. */
export const FigureVerdicts = perFigure(Verdict);
export type FigureVerdicts = Static<typeof FigureVerdicts>;

/** One load-test run behind a stage row, with its own figures (req/s, ms). */
export const StageRun = Type.Object({
  artifactId: Type.String(),
  filename: Type.String(),
  /** 1-based position of the run in a file of several runs (null for a file of one run). */
  runInFile: Nullable(Type.Integer()),
  rps: Nullable(Type.Number()),
  requests: Nullable(Type.Number()),
  errors: Nullable(Type.Number()),
  latencyMs: Type.Object({ p50: Nullable(Type.Number()), p95: Nullable(Type.Number()), p99: Nullable(Type.Number()) }),
});
export type StageRun = Static<typeof StageRun>;

/**
 * How a row's load-test figures summarise its runs:
 * - `single-run`: one run, its figures as the tool printed them (no noise estimate);
 * - `median`: several runs of one tool and settings: medians across runs, with intervals and verdicts;
 * - `aggregate`: runs with different settings: request-weighted figures, no noise estimate;
 * - `none`: the stage has no load test.
 */
export const StageSummaryKind = Literals(['single-run', 'median', 'aggregate', 'none']);
export type StageSummaryKind = Static<typeof StageSummaryKind>;

/**
 * The requests a profile's figures are divided by, one rule everywhere (the engine's `requestsForProfile`):
 * for each profile with a duration, in order of preference,
 * 1. `paired-run`: the load-test run the profile was captured with — by its capture record (the same
 *    `stagediff capture` run), else by names that say so (`cpu-5.pb.gz` with `wrk-5.txt`, `run-5-…`
 *    with `run-5-…`: one headline run carries the profile's run number), else the stage's only run:
 *    that run's req/s × the profile's duration (never upload order);
 * 2. `timeline`: a load test with absolute times whose per-second timeline covers the profile's window:
 *    the requests of the seconds inside the window (partial seconds pro rata);
 * else none: no per-request value, and the description says why no run was the profile's own (the
 * stage's median req/s would be a guess, never a divisor).
 * A stage of several profiles is divided by the sum over its profiles.
 */
export const DivisorMethod = Literals(['timeline', 'paired-run']);
export type DivisorMethod = Static<typeof DivisorMethod>;

export const ProfileRequests = Type.Object({
  artifactId: Type.String(),
  requests: Nullable(Type.Number({ description: 'requests served during the profile’s window' })),
  method: Nullable(DivisorMethod),
  /** In words, e.g. "timeline of vegeta-json within the profile's window". */
  description: Nullable(Type.String()),
  /** The profile's file name, and the load-test file it is divided by (paired-run, timeline), if any. */
  filename: Type.Optional(Type.String()),
  run: Type.Optional(Nullable(Type.Object({ artifactId: Type.String(), filename: Type.String() }))),
});
export type ProfileRequests = Static<typeof ProfileRequests>;

/** A stage's per-request divisor: each profile's, the sum, and whether every profile has its own run. */
export const PerRequest = Type.Object({
  requests: Nullable(Type.Number({ description: 'sum over the profiles; null when a profile has none' })),
  /**
   * True when every profile's requests come from its own load run (timeline or paired-run): then the
   * diff opens per request by default.
   */
  measured: Type.Boolean(),
  profiles: Type.Array(ProfileRequests),
});
export type PerRequest = Static<typeof PerRequest>;

/** One row of the stage table. */
export const StageRow = Type.Object({
  stageId: Type.String(),
  name: Type.String(),
  note: Type.String(),
  summary: StageSummaryKind,
  /** Load-test runs behind the load-test figures. */
  loadTests: Type.Integer(),
  /** Requests and errors summed over those runs. */
  requests: Nullable(Type.Number()),
  errors: Nullable(Type.Number()),
  /** Each figure across the stage's runs; a single run has n = 1. */
  figures: StageFigures,
  /** The load-test runs behind the figures, each with its own figures, in upload order. */
  runs: Type.Array(StageRun),
  /** Which runs the load-test figures come from. */
  source: Type.Object({
    format: Nullable(Type.String()),
    artifactIds: Type.Array(Type.String()),
    /** Load tests of other tools or settings in the stage, kept out of the row (they stay in the timelines). */
    otherRuns: Type.Integer(),
    /** False when the stage has no run of the tool the other rows use, and shows its own largest one. */
    headline: Type.Boolean(),
  }),
  /** Verdicts against the previous stage and the first one (null for the first stage). */
  vsPrevious: Nullable(FigureVerdicts),
  vsBaseline: Nullable(FigureVerdicts),
  /** What the stage's files and capture records say about how it was measured. */
  conditions: StageConditions,
  /** Against the previous stage and the first one: conditions that differ, in words (null: none, or first). */
  conditionsVsPrevious: Nullable(Type.String()),
  conditionsVsBaseline: Nullable(Type.String()),
});
export type StageRow = Static<typeof StageRow>;

/**
 * A change point of one figure over the stages in order (E-Divisive with a t-test, as Apache Otava
 * computes it, over each stage's median): the figure's level shifts between `previousStageId` and
 * `stageId`. Only comparisons of at least `CHANGE_POINT_MIN_STAGES` stages with the figure get them.
 */
export const ChangePointMark = Type.Object({
  figure: FigureKey,
  /** The first stage after the change, and the one before it (the pair whose diff shows it). */
  stageId: Type.String(),
  stageName: Type.String(),
  previousStageId: Type.String(),
  previousStageName: Type.String(),
  pValue: Type.Number(),
  /** Means of the stage medians between the neighbouring change points (or the ends), before and after. */
  meanBefore: Type.Number(),
  meanAfter: Type.Number(),
  changePercent: Type.Number(),
  /** Whether the shift is for the better, by the figure's own sense (QPS higher, latency and cost lower). */
  direction: Literals(['better', 'worse']),
});
export type ChangePointMark = Static<typeof ChangePointMark>;

/** The change-point window when a request names none: Apache Otava's default `window_len`. */
export const CHANGE_POINT_DEFAULT_WINDOW = 50;
/** The largest window a request may ask for: the split step's work and memory grow with its square. */
export const CHANGE_POINT_MAX_WINDOW = 500;

/**
 * How many stages the change-point search looks at around a candidate (Otava's `window_len`): each window
 * of that many consecutive stages is split on its own, windows overlapping by half.
 */
export const ChangePointWindow = Type.Integer({
  minimum: 2,
  maximum: CHANGE_POINT_MAX_WINDOW,
  default: CHANGE_POINT_DEFAULT_WINDOW,
  description: `stages per change-point window (2–${CHANGE_POINT_MAX_WINDOW}, default ${CHANGE_POINT_DEFAULT_WINDOW})`,
});

export const StageTableQuery = Type.Object({ window: ChangePointWindow }, { additionalProperties: false });
export type StageTableQuery = Static<typeof StageTableQuery>;

export const StageTable = Type.Object({
  alpha: Type.Number(),
  runsNeeded: Type.Integer(),
  rows: Type.Array(StageRow),
  /** Change points of QPS, P99 and CPU per request over the stages (empty below the minimum of stages). */
  changePoints: Type.Array(ChangePointMark),
});
export type StageTable = Static<typeof StageTable>;

/** How a figure moves when it gets better. */
export const Better = Literals(['higher', 'lower']);

/**
 * One figure compared between the base and the target stage.
 * - `metric`: `rps`, `p50`, `p95`, `p99`, `error-rate`, `cpu-per-request`, `alloc-per-request`,
 *   `bench:UNIT` (with `subject` naming the benchmark), or a runtime row's (see RuntimeChanges) — the
 *   names `stagediff check --fail-on` takes;
 * - `base`/`target`: the figure across each side's runs (null: the side lacks it);
 * - `deltaPercent`: (ratio − 1) · 100; `direction` only for significant changes.
 */
export const Change = Type.Object({
  metric: Type.String(),
  label: Type.String(),
  subject: Nullable(Type.String()),
  unit: Type.String(),
  better: Better,
  base: Nullable(Estimate),
  target: Nullable(Estimate),
  verdict: Verdict,
  deltaPercent: Nullable(Type.Number()),
  direction: Nullable(Literals(['improvement', 'regression'])),
  /** Why there is no verdict, in words (too-few-runs, single-run, missing, not-comparable). */
  reason: Nullable(Type.String()),
  /**
   * Set when the pair was measured under different conditions (Go version, GOMAXPROCS, machine, build,
   * load) that do not take the figure's verdict away: the per-request and runtime figures keep theirs
   * and carry this sentence (PairConditions.warning).
   */
  warning: Type.Optional(Nullable(Type.String())),
});
export type Change = Static<typeof Change>;

/**
 * A function whose cost changed, named where the change starts (see analysis/change-origins.ts):
 * - `removed`/`added`: the highest frame of a call subtree that disappeared or appeared whole;
 * - `shrank`/`grew`: a call path whose change is its own, not explained by one of its callees.
 * Figures are per request (else per second, else as recorded: see `normalisation`), of the function's
 * call paths that start the change: `base` and `target` are those paths' whole values (cum), `delta` the
 * change named — for `shrank`/`grew`, the part its followed callees do not explain (so it differs from
 * target − base when a callee's change is named on its own); `verdict` tests the function's cum across
 * the stages' profiles.
 */
export const FunctionChange = Type.Object({
  name: Type.String(),
  change: Literals(['removed', 'added', 'shrank', 'grew']),
  base: Type.Number(),
  target: Type.Number(),
  delta: Type.Number(),
  /** |delta| as a fraction of the base stage's total. */
  ofBaseTotal: Type.Number(),
  /** The call path of its largest occurrence, root first (at most 12 frames, the outermost elided). */
  path: Type.Array(Type.String()),
  verdict: Verdict,
});
export type FunctionChange = Static<typeof FunctionChange>;

export const FunctionChanges = Type.Object({
  /** `ok`; `no-profiles` (a side has none of the kind); `too-large` (above the automatic limit: ask with functions=on). */
  status: Literals(['ok', 'no-profiles', 'too-large']),
  message: Nullable(Type.String()),
  kind: Nullable(Type.String()),
  sampleType: Nullable(Type.String()),
  normalisation: Literals(['per-request', 'per-second', 'absolute']),
  unit: Type.String(),
  baseTotal: Type.Number(),
  targetTotal: Type.Number(),
  changes: Type.Array(FunctionChange),
});
export type FunctionChanges = Static<typeof FunctionChanges>;

/** benchstat's comparison of the stages' `go test -bench` outputs, when both have some. */
export const BenchmarkChanges = Type.Object({
  /** False when no benchmark can be paired (benchstat would print separate tables); `reason` says why. */
  comparable: Type.Boolean(),
  reason: Nullable(Type.String()),
  /**
   * Per package and unit, as benchstat prints a table for each: the geomean change over the paired
   * benchmarks and how many changed significantly. `pkg` is the `pkg:` header's package ('' for none).
   */
  units: Type.Array(
    Type.Object({
      pkg: Type.String(),
      unit: Type.String(),
      benchmarks: Type.Integer(),
      significant: Type.Integer(),
      geomeanDeltaPercent: Nullable(Type.Number()),
      better: Better,
    }),
  ),
  rows: Type.Array(Change),
});
export type BenchmarkChanges = Static<typeof BenchmarkChanges>;

/**
 * What the Go runtime did, judged like every other figure: one value per window (an execution trace, a
 * runtime-metrics series), each window a run. Rows (`metric`):
 * - from execution traces: `sched-wait-mean`, `sched-wait-p99` (Runnable→Running delay, as measured),
 *   `gc-stw`, `blocked-channel`, `blocked-select`, `blocked-sync`, `blocked-network`, `syscall`,
 *   `goroutines-created` (totals over the trace, normalised; totals of every goroutine, idle ones too);
 * - from the requests found in execution traces (model/trace-requests.ts; only traces with requests):
 *   `request-p50`, `request-p90`, `request-p99` (latency of the traced requests) and `request-tail-PART`
 *   (the mean of PART — running, runnable, syscall, network, sync, channel, select, sleep, gcWait — over
 *   the slowest 1 % of the trace's requests, along their critical paths), as measured;
 * - from runtime metrics (`stagediff capture --metrics`): `gc-cpu` (GC CPU time) and `allocated-bytes`
 *   (bytes allocated), window deltas normalised; `sched-latency-p99` (the window's `/sched/latencies` p99).
 * Totals are per request when every window of both stages has its own load run (the per-request divisor's
 * `timeline` or `paired-run`), else per second of window (`normalisation`); the unit says which.
 */
export const RuntimeChanges = Type.Object({
  normalisation: Literals(['per-request', 'per-second']),
  /** Windows per side: execution traces and metrics series. */
  windows: Type.Object({
    base: Type.Object({ traces: Type.Integer(), metrics: Type.Integer() }),
    target: Type.Object({ traces: Type.Integer(), metrics: Type.Integer() }),
  }),
  /** Rows a side has no window for are left out (a row is kept when either side has it). */
  figures: Type.Array(Change),
  /**
   * Bytes allocated per request by the runtime's own count (metrics) ÷ the allocs profile's alloc_space per
   * request, stage medians: a cross-check of the sampled profile (≈ 1). Null without both figures.
   */
  allocsCrossCheck: Type.Object({ base: Nullable(Type.Number()), target: Nullable(Type.Number()) }),
});
export type RuntimeChanges = Static<typeof RuntimeChanges>;

/*
 * "The code change" of a pair of stages: from the two stages' sources, the Go functions edited, added
 * and removed, each with its cost change and verdict from the engine's per-function diff; then the
 * functions whose cost changed significantly although their code did not (the indirect effects).
 */

/** Where a function's code stands between the two stages' sources. */
export const CodeStatus = Literals(['edited', 'added', 'removed', 'same', 'outside']);
export type CodeStatus = Static<typeof CodeStatus>;

const Lines = Type.Object({ start: Type.Integer(), end: Type.Integer() });

/**
 * One function of the code change. `code`: `edited` (its declaration's text differs), `added`/`removed`
 * (declared on one side only), `same` (the same text on both sides), `outside` (not in the stages'
 * sources: the standard library or a dependency, whose code the sources do not hold). `base`/`target`
 * are its cum in the pair's normalisation (null: no sample on that side), `verdict` the engine's test
 * of its cum across the stages' profiles (null when it was not among the functions tested).
 */
export const CodeFunction = Type.Object({
  name: Type.String(),
  code: CodeStatus,
  /** The file declaring it, module-relative (the target's, else the base's); null for `outside`. */
  file: Nullable(Type.String()),
  baseLines: Nullable(Lines),
  targetLines: Nullable(Lines),
  /**
   * False when the other stage's sources do not hold the function's file at all: then `added`/`removed`
   * means "new, or its file was never named by the other stage's profiles" (a capture keeps only the
   * files its profiles name).
   */
  fileOnBothSides: Type.Boolean(),
  /** Lines of the declaration that differ, counted by the line diff (edited only; else 0). */
  linesAdded: Type.Integer(),
  linesRemoved: Type.Integer(),
  base: Nullable(Type.Number()),
  target: Nullable(Type.Number()),
  delta: Type.Number(),
  /** (target − base) / base · 100; null when the base has no sample. */
  deltaPercent: Nullable(Type.Number()),
  verdict: Nullable(Verdict),
});
export type CodeFunction = Static<typeof CodeFunction>;

const SourcesRef = Type.Object({
  modulePath: Type.String(),
  revision: Type.String(),
  dirty: Nullable(Type.Boolean()),
  /** Go files read for functions (not tests). */
  goFiles: Type.Integer(),
});

/**
 * GET …/changes `code`: `status` `ok` (two stages of the same revision, both clean, have no changed
 * function: files one side's capture did not keep are not read as added or removed); `no-sources` (a stage has no sources: `message` names it);
 * `no-profiles` (no per-function diff to take costs from). `changed` lists the edited, added and
 * removed functions (largest cost change first, functions never sampled last); `indirect` the
 * functions whose code did not change (`same` or `outside`) and whose cost did, significantly;
 * when there is none, `closest` gives the unchanged-code functions nearest to it (smallest p), so the
 * "none" can be read with its p-values.
 */
export const CodeChange = Type.Object({
  status: Literals(['ok', 'no-sources', 'no-profiles']),
  message: Nullable(Type.String()),
  base: Nullable(SourcesRef),
  target: Nullable(SourcesRef),
  kind: Nullable(Type.String()),
  normalisation: Literals(['per-request', 'per-second', 'absolute']),
  unit: Type.String(),
  /** Functions whose code changed: edited, added, removed. */
  changed: Type.Array(CodeFunction),
  /** Functions tested across the profiles (the diff's family), and how many of them were significant. */
  tested: Type.Integer(),
  indirect: Type.Array(CodeFunction),
  closest: Type.Array(CodeFunction),
});
export type CodeChange = Static<typeof CodeChange>;

/**
 * A profile that lost its own run: the run it was captured with (its capture record names the file) or
 * the run its name points at is not in the stage any more, so its requests are an estimate and the
 * pair's per-request figures, diff and tabs read absolute (`auto`). What a deletion of a load test did.
 */
export const ModeNote = Type.Object({
  kind: Type.Union([
    /** The capture record names the load test the profile was taken with; that file was deleted from the stage. */
    Type.Literal('run-deleted'),
    /** The profile's name says run N; no load test of the stage is run N (deleted, or never uploaded). */
    Type.Literal('run-missing'),
  ]),
  side: Literals(['base', 'target']),
  stage: Type.String(),
  profile: Type.Object({ artifactId: Type.String(), filename: Type.String() }),
  /** The load test the profile was paired with: the capture record's file path, or the run its name says. */
  run: Type.String(),
  /** The pair's mode now (`auto`): absolute while any profile lacks its own run. */
  mode: Literals(['per-request', 'absolute']),
  message: Type.String(),
});
export type ModeNote = Static<typeof ModeNote>;

/**
 * The tail of the traced requests between two stages (only when both have execution traces with
 * requests): the `request-p99` row, the `request-tail-PART` rows ranked by their change (|target median −
 * base median|, largest first), and the goroutines their critical paths went through (metric
 * `request-tail-via`, `subject` the goroutine's entry function: the mean time the slowest 1 % spent in
 * goroutines of that entry, one value per trace), judged like every figure, largest change first (at
 * most 8). `sentence` says it in words: only significant changes are named as changes.
 */
export const TailChange = Type.Object({
  p99: Change,
  parts: Type.Array(Change),
  goroutines: Type.Array(Change),
  sentence: Type.String(),
});
export type TailChange = Static<typeof TailChange>;

/** GET …/changes: everything the engine judges about one base → target pair. */
export const StageChanges = Type.Object({
  base: Type.Object({ id: Type.String(), name: Type.String(), note: Type.String() }),
  target: Type.Object({ id: Type.String(), name: Type.String(), note: Type.String() }),
  alpha: Type.Number(),
  runsNeeded: Type.Integer(),
  /** Load-test figures and the per-request figures, in FIGURE_KEYS order. */
  figures: Type.Array(Change),
  perRequest: Type.Object({ base: PerRequest, target: PerRequest }),
  /** Profiles that lost their own run (a deleted load test), and what that did to the pair's mode. */
  modeNotes: Type.Array(ModeNote),
  functions: FunctionChanges,
  benchmarks: Nullable(BenchmarkChanges),
  /** GC figures of each side's GODEBUG=gctrace=1 logs (first trace of each), with the STW p99 change. */
  gc: Nullable(
    Type.Object({
      base: Nullable(Type.Object({ cycles: Type.Integer(), stwP99Ms: Type.Number(), maxHeapMb: Type.Number() })),
      target: Nullable(Type.Object({ cycles: Type.Integer(), stwP99Ms: Type.Number(), maxHeapMb: Type.Number() })),
    }),
  ),
  /** The code change: functions edited, added, removed, and costs that moved in unchanged code. */
  code: Type.Optional(CodeChange),
  /** The runtime's figures; absent when neither stage has an execution trace or runtime metrics. */
  runtime: Type.Optional(RuntimeChanges),
  /** The tail of the traced requests; absent unless both stages have traces with requests. */
  tail: Type.Optional(TailChange),
  /**
   * The change points of the comparison's stages (as on the stage table) that fall between base and target:
   * the pair straddles a shift of that figure's level. Absent when none does.
   */
  changePoints: Type.Optional(Type.Array(ChangePointMark)),
  /** Both stages' conditions, and where they differ (load: no verdict on load-test figures). */
  conditions: PairConditions,
  /** "What changed", in words, most telling first: only significant changes are worded as changes. */
  sentences: Type.Array(Type.String()),
});
export type StageChanges = Static<typeof StageChanges>;
