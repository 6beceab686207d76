import Type, { type Static } from 'typebox';
import type { MetricSeries, MetricsHighlights } from '../model/metrics.ts';
import type { SchedTraceSummary } from '../model/schedtrace.ts';
import type { TraceSummary } from '../model/trace.ts';
import type { TraceRequestFigures } from '../model/trace-requests.ts';
import type { GcTraceSummary } from '../model/gctrace.ts';
import { Change, DivisorMethod, RuntimeChanges } from './changes.ts';
import { Model, Nullable, Literals } from './kit.ts';

/*
 * What the Go runtime did in a pair of stages: each stage's execution traces (one per run), runtime-metric
 * series and scheduler traces, and the change engine's verdicts on the trace figures across the runs.
 */

/**
 * Where a window sits on the wall clock, so the timelines of a stage share one time axis:
 * - `trace-clock`: the trace's own clock snapshot (Go 1.25+ writes one), exact to the millisecond;
 * - `capture`: when `stagediff capture` asked the service for the trace (capture.json): the trace starts
 *   when the service receives the request, a few milliseconds later at most on loopback;
 * - `none`: neither (a trace before Go 1.25 uploaded without its capture record): drawn from its own zero.
 */
export const WallClock = Type.Object({
  start: Nullable(Type.String({ description: 'ISO 8601' })),
  source: Literals(['trace-clock', 'capture', 'none']),
});
export type WallClock = Static<typeof WallClock>;

/** One execution trace of a stage: its summary, its timeline, and the requests served during it. */
export const RuntimeTrace = Type.Object({
  artifactId: Type.String(),
  filename: Type.String(),
  summary: Model<Omit<TraceSummary, 'timeline'> & { requests?: TraceRequestFigures | null }>(
    'the trace summary (model/trace.ts TraceSummary without its timeline): goroutines, schedWait, blocked, syscall, gc, entryFunctions; requests: the traced requests, their latency and parts along their critical paths (model/trace-requests.ts; null or absent in records made before)',
  ),
  timeline: Model<TraceSummary['timeline']>(
    'running and runnable goroutines, GC mark share, STW time and heap per bucket, and the GC and STW spans',
  ),
  /** Requests served during the trace (the per-request divisor's rule); null when unknown. */
  requests: Nullable(Type.Number()),
  /** How `requests` was counted (the per-request divisor's method); null when unknown. */
  divisor: Nullable(DivisorMethod),
  /** Where the trace sits on the wall clock (see WallClock). */
  wallClock: WallClock,
});
export type RuntimeTrace = Static<typeof RuntimeTrace>;

/** A runtime-metric series file (`stagediff capture --metrics`): the few series the timeline draws. */
export const RuntimeMetrics = Type.Object({
  artifactId: Type.String(),
  filename: Type.String(),
  /** Wall-clock time of the first scrape (ISO 8601); `times` are seconds after it. */
  start: Type.String(),
  times: Type.Array(Type.Number()),
  /** Goroutines, heap bytes, GC CPU share and GC pause (as rates: s/s), scheduling latency p99 (s); by series name. */
  series: Model<MetricSeries[]>('the series of model/metrics.ts that the timeline draws'),
  /** The window: from the first successful scrape (wall clock, ISO 8601), seconds to the last. */
  windowStart: Type.String(),
  windowSeconds: Type.Number(),
  /** Window deltas the engine judges (model/metrics.ts MetricsHighlights). */
  highlights: Model<MetricsHighlights>(
    'goroutines, heap, GC cycles, GC CPU and pause seconds, allocated bytes, scheduling latency p99 over the window',
  ),
  /** Requests served during the window (the per-request divisor's rule) and how they were counted. */
  requests: Nullable(Type.Number()),
  divisor: Nullable(DivisorMethod),
});
export type RuntimeMetrics = Static<typeof RuntimeMetrics>;

export const RuntimeSchedTrace = Type.Object({
  artifactId: Type.String(),
  filename: Type.String(),
  summary: Model<SchedTraceSummary & { gc: GcTraceSummary | null }>(
    'run queues, idle procs and threads over a GODEBUG=schedtrace log (model/schedtrace.ts)',
  ),
});

export const RuntimeStage = Type.Object({
  stageId: Type.String(),
  name: Type.String(),
  traces: Type.Array(RuntimeTrace),
  metrics: Type.Array(RuntimeMetrics),
  schedtraces: Type.Array(RuntimeSchedTrace),
});
export type RuntimeStage = Static<typeof RuntimeStage>;

/**
 * GET …/runtime: base and target side by side, with the change engine's runtime rows (the rows of
 * GET …/changes' `runtime`: one value per trace or metrics window; totals per request when every window
 * of both stages has its own load run, else per second of window — `normalisation`).
 */
export const StageRuntime = Type.Object({
  alpha: Type.Number(),
  runsNeeded: Type.Integer(),
  normalisation: RuntimeChanges.properties.normalisation,
  base: RuntimeStage,
  target: RuntimeStage,
  /** The same rows as GET …/changes' `runtime.figures` (api/changes.ts RuntimeChanges). */
  figures: Type.Array(Change),
  allocsCrossCheck: RuntimeChanges.properties.allocsCrossCheck,
  /** The figures in words, significant changes first. */
  sentences: Type.Array(Type.String()),
});
export type StageRuntime = Static<typeof StageRuntime>;
