import Type, { type Static } from 'typebox';
import { Nullable, Literals } from './kit.ts';

/*
 * A stage's conditions: what its own files and capture records say about how it was measured — the
 * load and its settings, the Go runtime's version and settings, the build, the machine. Nothing here is
 * guessed: a condition no file states is null. The change engine compares two stages' conditions before
 * it compares their figures (see PairConditions).
 */

/**
 * What a pair may differ in, the keys `stagediff check --allow-different` takes:
 * - `load`: the load tool and its settings (threads, connections or VUs, rate, duration, method, path);
 * - `go`: the Go version; `gomaxprocs`, `gogc`, `gomemlimit`: the runtime's settings;
 * - `build`: build settings (`-pgo`, and the like, from build info);
 * - `machine`: CPU model, cores, operating system and architecture, kernel, host.
 */
export const ConditionKey = Literals(['load', 'go', 'gomaxprocs', 'gogc', 'gomemlimit', 'build', 'machine']);
export type ConditionKey = Static<typeof ConditionKey>;
export const CONDITION_KEYS: readonly ConditionKey[] = [
  'load',
  'go',
  'gomaxprocs',
  'gogc',
  'gomemlimit',
  'build',
  'machine',
];

/** One load-test run's tool and settings, as its file states them (null: the file does not say). */
export const LoadSettings = Type.Object({
  tool: Type.String(),
  format: Type.String(),
  version: Nullable(Type.String()),
  threads: Nullable(Type.Number()),
  connections: Nullable(Type.Number()),
  vus: Nullable(Type.Number({ description: 'virtual users (k6 max VUs)' })),
  rate: Nullable(Type.Number({ description: 'requests per second asked for (open loop)' })),
  iterationRate: Nullable(Type.Number({ description: 'k6 iterations per second asked for' })),
  duration: Nullable(Type.String({ description: 'as configured, as the tool printed it (8s)' })),
  method: Nullable(Type.String()),
  path: Nullable(Type.String({ description: 'the target URL’s path and query, without scheme and host' })),
  /** In words: "wrk, 2 threads, 32 connections, 8s, /api/orders?n=20". */
  text: Type.String(),
});
export type LoadSettings = Static<typeof LoadSettings>;

/** What one file or capture run says about its conditions; null where it says nothing. */
export const RunConditions = Type.Object({
  /** Where these were read: a file's name (with its run in the file), or "capture run N". */
  source: Type.String(),
  artifactId: Nullable(Type.String()),
  /** For load-test runs: whether the stage's load-test figures come from this run. */
  inFigures: Type.Boolean(),
  load: Nullable(LoadSettings),
  goVersion: Nullable(Type.String({ description: 'go1.26, go1.26.8; from a trace header, go_info or a capture' })),
  gomaxprocs: Nullable(Type.Number()),
  gogc: Nullable(Type.String({ description: 'GOGC percent, or "off"' })),
  gomemlimit: Nullable(Type.String({ description: 'GOMEMLIMIT in bytes, or "none" for math.MaxInt64' })),
  build: Type.Array(Type.String(), { description: 'build settings, e.g. -pgo=default.pgo' }),
  cpu: Nullable(Type.String({ description: 'CPU model' })),
  cores: Nullable(Type.Number()),
  os: Nullable(Type.String({ description: 'operating system/architecture, e.g. linux/amd64' })),
  kernel: Nullable(Type.String()),
  host: Nullable(Type.String()),
});
export type RunConditions = Static<typeof RunConditions>;

/** A stage's distinct values of one condition across its files (load: of the runs behind its figures). */
export const ConditionValues = Type.Object({
  key: ConditionKey,
  label: Type.String(),
  values: Type.Array(Type.String()),
});
export type ConditionValues = Static<typeof ConditionValues>;

export const StageConditions = Type.Object({
  /** Per file and capture run, in upload order, captures last. */
  runs: Type.Array(RunConditions),
  /** Per condition key, the distinct values the stage's files state (keys no file states are left out). */
  summary: Type.Array(ConditionValues),
});
export type StageConditions = Static<typeof StageConditions>;

/** A condition the two stages of a pair state differently. */
export const ConditionDifference = Type.Object({
  key: ConditionKey,
  label: Type.String(),
  base: Type.Array(Type.String()),
  target: Type.Array(Type.String()),
  /** "Go version: baseline go1.22 · pooled go1.26". */
  text: Type.String(),
});
export type ConditionDifference = Static<typeof ConditionDifference>;

/**
 * The change engine's reading of a pair's conditions. A condition counts as different only when both
 * stages state it and their values differ; one a side does not state is not guessed.
 * - `loadComparable`: false when the runs behind the two stages' load-test figures differ in tool or
 *   settings: those figures then get the `not-comparable` verdict, no ratio, and `loadReason` names each
 *   side's tool and settings ("pooled: wrk, 32 connections · async-log: k6, 10 VUs");
 * - `warning`: every other difference (Go version, GOMAXPROCS, GOGC, GOMEMLIMIT, build, machine) in one
 *   sentence, shown over the pair; the figures keep their verdicts and carry it.
 */
export const PairConditions = Type.Object({
  base: StageConditions,
  target: StageConditions,
  loadComparable: Type.Boolean(),
  loadReason: Nullable(Type.String()),
  differences: Type.Array(ConditionDifference),
  warning: Nullable(Type.String()),
});
export type PairConditions = Static<typeof PairConditions>;
