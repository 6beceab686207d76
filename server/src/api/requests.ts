import Type, { type Static } from 'typebox';
import type { Durations } from '../model/trace.ts';
import type { PartNanos, PathSegment, RequestPart, SlowRequest } from '../model/trace-requests.ts';
import { Change } from './changes.ts';
import { Model, Nullable } from './kit.ts';

/*
 * GET …/requests: the requests of a pair of stages' execution traces, side by side (the Requests tab).
 * Every figure is one trace's own (model/trace-requests.ts, as the trace was read); the verdicts are the
 * change engine's request rows (the same as GET …/changes' runtime rows `request-*`).
 */

/** How a trace's requests were found (model/trace-requests.ts): annotated tasks, connection goroutines, or none. */
export const RequestMethod = Type.Union([
  Type.Literal('tasks'),
  Type.Literal('http-connections'),
  Type.Literal('none'),
]);

/**
 * One trace's requests:
 * - `ok`: its figures;
 * - `too-large`: it had more goroutine states than the request analysis keeps (TRACE_MAX_REQUEST_STATES):
 *   no figures, `reason` says why;
 * - `unread`: the record was made before the request analysis kept what this view draws (re-upload it).
 */
export const RequestsTrace = Type.Object({
  artifactId: Type.String(),
  filename: Type.String(),
  status: Type.Union([Type.Literal('ok'), Type.Literal('too-large'), Type.Literal('unread')]),
  reason: Type.String(),
  method: RequestMethod,
  /** The request group shown (the task's name, or the handler function), the one with the most time. */
  name: Type.String(),
  /** Requests past the analysis' bound (not counted). */
  omitted: Type.Integer(),
  duration: Model<Durations>('the requests latency distribution (ns): count, total, mean, P50, P90, P99, max'),
  parts: Model<Record<RequestPart, Durations>>("each part's distribution over the requests (ns)"),
  median: Model<PartNanos & { durationNanos: number; requests: number }>(
    'mean parts (ns) of the requests around the median (ranks 45–55 %)',
  ),
  tail: Model<PartNanos & { durationNanos: number; requests: number }>('mean parts (ns) of the slowest 1 %'),
  /** Its requests per bin of the pair's `edgesNanos` (sums to `duration.count`). */
  histogram: Type.Array(Type.Integer()),
  /** The wait stacks the slowest requests' segments name by index (functions, leaf first). */
  waitStacks: Type.Array(Type.Array(Type.String())),
  slowest: Model<ViewSlowRequest[]>(
    'the slowest requests (at most 10), slowest first: span, parts, the goroutines their critical path went through, and (the 5 slowest) the path as segments (goroutine, entry function, start and end offset in ns from the request start, part, index of its wait stack in waitStacks or -1; at most 48)',
  ),
});
export type RequestsTrace = Static<typeof RequestsTrace>;

/**
 * One of the slowest requests (model/trace-requests.ts SlowRequest) with its critical path as segments in
 * time order (the few slowest only: empty for the others and in records made before).
 */
export type ViewSlowRequest = Omit<SlowRequest, 'path'> & { segments: PathSegment[]; segmentsOmitted: number };

/**
 * Where the slowest requests of a stage spent their critical path: one goroutine entry function, part and
 * wait stack (the stack the goroutine blocked or entered a syscall at, leaf first, the runtime's own
 * frames above the first other one left out, at most 8; [] for running and scheduler wait).
 */
export const TailWait = Type.Object({
  /** The entry function of the goroutine the path was in ("" when the trace showed none). */
  entry: Type.String(),
  part: Type.String(),
  stack: Type.Array(Type.String()),
  /** Time (ns) summed over the slowest requests of every trace of the stage. */
  nanos: Type.Number(),
  /** How many of those requests spent time there. */
  requests: Type.Integer(),
});
export type TailWait = Static<typeof TailWait>;

export const RequestsStage = Type.Object({
  stageId: Type.String(),
  name: Type.String(),
  /** The method its traces used (`mixed` when they differ; `none` without traced requests). */
  method: Type.Union([RequestMethod, Type.Literal('mixed')]),
  /**
   * Every trace's figures; `slowest` and `waitStacks` only for the shown trace (empty for the others, so
   * the answer stays bounded however many traces a stage has).
   */
  traces: Type.Array(RequestsTrace),
  /** The trace whose P99 is the (lower) median of the stage's traces': the one its parts and slowest requests are drawn from. */
  shownTrace: Nullable(Type.String()),
  /** The traced requests of every `ok` trace, per bin of `edgesNanos`. */
  histogram: Type.Array(Type.Integer()),
  requests: Type.Integer(),
  /** The slowest requests' critical paths (the 5 slowest of every trace) by goroutine entry, part and wait stack: waits first, most time first (at most 20). */
  tailWaits: Type.Array(TailWait),
});
export type RequestsStage = Static<typeof RequestsStage>;

/**
 * The pair: `ok` when both stages have traced requests, else `too-large` (a stage's traces were all
 * too large for the request analysis) or `no-requests` (a stage has no trace, or none with requests);
 * `reason` names the stage.
 */
export const RequestsView = Type.Object({
  status: Type.Union([Type.Literal('ok'), Type.Literal('too-large'), Type.Literal('no-requests')]),
  reason: Type.String(),
  /** The part names, in the order the figures list them. */
  parts: Type.Array(Type.String()),
  /** The histograms' bin edges (ns, log scale, shared by both stages): bin i is [edgesNanos[i], edgesNanos[i+1]). */
  edgesNanos: Type.Array(Type.Number()),
  base: RequestsStage,
  target: RequestsStage,
  /** The change engine's request rows of the pair (GET …/changes' runtime rows `request-*`). */
  figures: Type.Array(Change),
});
export type RequestsView = Static<typeof RequestsView>;
