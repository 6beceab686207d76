import Type, { type Static } from 'typebox';
import {
  BenchmarkChanges,
  ChangePointMark,
  Change,
  CodeChange,
  FigureVerdicts,
  FunctionChanges,
  PerRequest,
  RuntimeChanges,
  TailChange,
  StageChanges,
  StageFigures,
  StageSummaryKind,
} from './changes.ts';
import { ConditionValues, PairConditions } from './conditions.ts';
import { Nullable, Literals } from './kit.ts';
import { DiffRow, ProfileKind } from './views.ts';

/*
 * `stagediff report --format json` (schema "stagediff-report/5"), published as docs/report-schema.json.
 * Every figure and verdict in it is the change engine's (GET …/changes, GET …/stage-table, GET …/diff);
 * the report only selects and arranges them. Numbers are in the unit each object names, ratios are
 * target / base, percentages (ratio − 1) × 100, null where a side has no figure.
 *
 * Version 2 (from 1): every change carries the engine's `verdict` (status significant, no-change,
 * too-few-runs, single-run or missing; p; n; minP) and its sides as `Estimate`s; `sentences` and
 * `functions` say what changed; the stage rows carry every figure, CPU and memory per request included.
 *
 * Version 3 (from 2): `runtime`, the change engine's runtime rows (execution traces and runtime metrics:
 * scheduling wait, GC, blocked time, syscalls, goroutines created, GC CPU and bytes allocated per request,
 * with the allocs profile cross-check), present only when a stage of the pair has a trace or metrics. A
 * report of stages without them differs from version 2 only in `schema`. `summary` still counts `changes`
 * and the benchmark rows only.
 *
 * Version 4 (from 3): `conditions`, the change engine's reading of both stages' conditions (load tool and
 * settings, Go version, GOMAXPROCS, GOGC, GOMEMLIMIT, build, machine) and where they differ; each stage
 * row's `conditions` (the distinct values its files state); the verdict status `not-comparable` (with
 * `verdict.reason`) on the load-test figures of a pair whose load differs in tool or settings, counted in
 * `summary.notComparable`; a figure's `warning` when other conditions differ.
 */

const StageRef = Type.Object({ id: Type.String(), name: Type.String(), note: Type.String() });

export const Report = Type.Object(
  {
    schema: Type.Literal('stagediff-report/5'),
    comparison: Type.Object({ id: Type.String(), title: Type.String(), url: Nullable(Type.String()) }),
    base: StageRef,
    target: StageRef,
    /** Counts over `changes` and the benchmark rows, by verdict and direction. */
    summary: Type.Object({
      improvements: Type.Integer(),
      regressions: Type.Integer(),
      noChange: Type.Integer(),
      tooFewRuns: Type.Integer(),
      singleRun: Type.Integer(),
      notComparable: Type.Integer(),
    }),
    /** Both stages' conditions and where they differ (GET …/changes' `conditions`). */
    conditions: PairConditions,
    /** Load-test figures and the per-request figures measured on both sides. */
    changes: Type.Array(Change),
    /** What changed, in words, most telling first (the dashboard shows the same). */
    sentences: Type.Array(Type.String()),
    functions: FunctionChanges,
    perRequest: Type.Object({ base: PerRequest, target: PerRequest }),
    stages: Type.Array(
      Type.Object({
        id: Type.String(),
        name: Type.String(),
        role: Nullable(Literals(['base', 'target'])),
        summary: StageSummaryKind,
        loadTests: Type.Integer(),
        figures: StageFigures,
        vsPrevious: Nullable(FigureVerdicts),
        conditions: Type.Array(ConditionValues),
      }),
    ),
    /** Change points of QPS, P99 and CPU per request over all the comparison's stages (the stage table's). */
    changePoints: Type.Array(ChangePointMark),
    /** The functions of the diff flamegraph, ranked by |Δ flat| (the diff's own order). */
    topFunctions: Nullable(
      Type.Object({
        kind: ProfileKind,
        sampleType: Type.String(),
        mode: Type.String(),
        unit: Type.String(),
        rowsTotal: Type.Integer(),
        warnings: Type.Array(Type.String()),
        rows: Type.Array(DiffRow),
      }),
    ),
    gc: StageChanges.properties.gc,
    /** What the runtime did (GET …/changes' `runtime`); absent when neither stage has a trace or metrics. */
    runtime: Type.Optional(RuntimeChanges),
    /** The tail of the traced requests (GET …/changes' `tail`); absent unless both stages have traced requests. */
    tail: Type.Optional(TailChange),
    /** The code change (GET …/changes `code`): present when a stage has sources. */
    code: Type.Optional(CodeChange),
    benchmarks: Nullable(BenchmarkChanges),
    images: Type.Object({ diffSvg: Nullable(Type.String()), diffPng: Nullable(Type.String()) }),
    notes: Type.Array(Type.String()),
  },
  { $schema: 'http://json-schema.org/draft-07/schema#', $id: 'urn:stagediff:report:5', title: 'stagediff report' },
);
export type Report = Static<typeof Report>;
