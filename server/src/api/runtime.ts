import Type, { type Static } from 'typebox';
import type { MetricSeries } from '../model/metrics.ts';
import type { SchedTraceSummary } from '../model/schedtrace.ts';
import type { TraceSummary } from '../model/trace.ts';
import type { GcTraceSummary } from '../model/gctrace.ts';
import { Change } from './changes.ts';
import { Model, Nullable } from './kit.ts';

/*
 * What the Go runtime did in a pair of stages: each stage's execution traces (one per run), runtime-metric
 * series and scheduler traces, and the change engine's verdicts on the trace figures across the runs.
 */

/** One execution trace of a stage: its summary, its timeline, and the requests served during it. */
export const RuntimeTrace = Type.Object({
  artifactId: Type.String(),
  filename: Type.String(),
  summary: Model<Omit<TraceSummary, 'timeline'>>(
    'the trace summary (model/trace.ts TraceSummary without its timeline): goroutines, schedWait, blocked, syscall, gc, entryFunctions',
  ),
  timeline: Model<TraceSummary['timeline']>(
    'running and runnable goroutines, GC mark share, STW time and heap per bucket, and the GC and STW spans',
  ),
  /** Requests served during the trace (the per-request divisor's rule); null when unknown. */
  requests: Nullable(Type.Number()),
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
 * GET …/runtime: base and target side by side. `figures` compare the traces' figures run by run (one
 * value per trace): scheduling wait mean and p99 as measured; GC stop-the-world time, time blocked by
 * reason, time in syscalls and goroutines created per request when every trace of both stages has its
 * requests, else per second of trace (`normalisation`).
 */
export const StageRuntime = Type.Object({
  alpha: Type.Number(),
  runsNeeded: Type.Integer(),
  normalisation: Type.Union([Type.Literal('per-request'), Type.Literal('per-second')]),
  base: RuntimeStage,
  target: RuntimeStage,
  figures: Type.Array(Change),
  /** The figures in words, significant changes first. */
  sentences: Type.Array(Type.String()),
});
export type StageRuntime = Static<typeof StageRuntime>;
