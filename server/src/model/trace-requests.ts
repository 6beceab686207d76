import type { Durations } from './trace.ts';

/** The parts of a request's time a reason names, in the critical path's order (each a `request-tail-PART` row). */
export const NAMED_REQUEST_PARTS = [
  'running',
  'runnable',
  'syscall',
  'network',
  'sync',
  'channel',
  'select',
  'sleep',
  'gcWait',
] as const;
/**
 * All the parts a request's time is split into along its critical path (ingest/trace/critical-path.ts,
 * whose part numbers index this list): the named ones, then what no reason names and what the trace
 * did not see.
 */
export const REQUEST_PART_NAMES = [...NAMED_REQUEST_PARTS, 'other', 'unknown'] as const;
export type RequestPart = (typeof REQUEST_PART_NAMES)[number];

/** Time by part (ns). */
export type PartNanos = Record<RequestPart, number>;

/** A goroutine other than the request's own that its critical path went through. */
export interface PathGoroutineFigures {
  goroutine: number;
  /** Its entry function ("" when the trace showed none). */
  entry: string;
  parts: PartNanos;
}

/**
 * The latency histogram's bin edges (ns), shared by every trace so that stages overlay: ten bins a
 * decade from 1 µs to 100 s, each edge rounded to a whole nanosecond. Bin i holds the durations in
 * [edge i, edge i+1); a duration below the first edge counts in the first bin, one at or past the
 * last edge in the last.
 */
export const REQUEST_LATENCY_EDGES: readonly number[] = Array.from({ length: 81 }, (_, i) =>
  Math.round(10 ** (3 + i / 10)),
);

/** The bin of REQUEST_LATENCY_EDGES a duration (ns) counts in. */
export function latencyBin(nanos: number): number {
  const e = REQUEST_LATENCY_EDGES;
  let lo = 0;
  let hi = e.length - 2;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (nanos >= e[mid]!) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** Segments kept at most per slow request's critical path (the longest; the rest are counted). */
export const MAX_PATH_SEGMENTS = 48;
/** The slowest requests whose critical path is kept as segments. */
export const PATH_SEGMENT_REQUESTS = 5;
/** Wait stacks kept per trace (of the kept segments), at most, and functions kept per stack. */
export const MAX_WAIT_STACKS = 64;
export const WAIT_STACK_FRAMES = 8;

/**
 * A stretch of a request's critical path: which goroutine it was in and what that goroutine was doing,
 * as offsets (ns) from the request's start.
 */
export interface PathSegment {
  goroutine: number;
  /** That goroutine's entry function ("" when the trace showed none). */
  entry: string;
  startNanos: number;
  endNanos: number;
  part: RequestPart;
  /**
   * Where the goroutine waited (a wait, a syscall): the index of its stack in the trace's `waitStacks`
   * (functions, leaf first, the runtime's own frames above the first other one left out, at most
   * WAIT_STACK_FRAMES); -1 when running or unseen.
   */
  stack: number;
}

/**
 * A request's critical path as stored (compact: it sits in every trace's summary): `goroutines[i]`
 * with entry function `entries[i]`; `segments` quadruples (goroutine index, part index in
 * REQUEST_PART_NAMES, start and end offset in ns from the request's start), in time order. Adjacent
 * stretches of one goroutine and part are merged; the longest MAX_PATH_SEGMENTS kept, `omitted` the others.
 */
export interface StoredPath {
  goroutines: number[];
  entries: string[];
  segments: number[];
  omitted: number;
}

/** A stored path's segments, one object each. */
export function pathSegments(p: StoredPath): PathSegment[] {
  const out: PathSegment[] = [];
  for (let i = 0; i + 4 < p.segments.length; i += 5)
    out.push({
      goroutine: p.goroutines[p.segments[i]!] ?? 0,
      entry: p.entries[p.segments[i]!] ?? '',
      startNanos: p.segments[i + 2]!,
      endNanos: p.segments[i + 3]!,
      part: REQUEST_PART_NAMES[p.segments[i + 1]!] ?? 'unknown',
      stack: p.segments[i + 4] ?? -1,
    });
  return out;
}

/** One of the slowest requests of a trace, with its critical path. */
export interface SlowRequest {
  goroutine: number;
  startNanos: number;
  durationNanos: number;
  parts: PartNanos;
  /** Of the span, time followed into other goroutines, and those goroutines (most time first, ≤ 8). */
  viaOthersNanos: number;
  others: PathGoroutineFigures[];
  /** The critical path (the PATH_SEGMENT_REQUESTS slowest only; absent in records made before). */
  path?: StoredPath;
}

/**
 * The requests of one execution trace and where their time went (every time in ns of trace time).
 * `method` says how they were found: `tasks` (top-level runtime/trace tasks begun and ended on one
 * goroutine), `http-connections` (a plain net/http server's connection goroutines: from the end of the
 * wait for a request's bytes to the start of the keep-alive wait for the next; a connection opened
 * inside the trace has its first request from its goroutine's start, or from the arrival of the
 * request's bytes if it waited for them; requests in progress at the trace's start or end are not
 * counted), or `none`.
 * Requests are grouped by name (the task's name, or the handler function); the figures are those of
 * `name`, the group with the most time. A request's parts follow its critical path: a wait another
 * goroutine ended (mutex, channel, select, sync.Cond) counts as that goroutine's running, runnable
 * and blocked time, recursively (bounded); network, sleep and syscall waits count as such.
 */
export interface TraceRequestFigures {
  method: 'tasks' | 'http-connections' | 'none';
  /**
   * `ok`; `too-large` when the trace had more goroutine states than the analysis keeps
   * (TRACE_MAX_REQUEST_STATES): then there are no figures, `reason` says why.
   */
  status: 'ok' | 'too-large';
  reason: string;
  name: string;
  /** Every group, most time first (at most 20). */
  groups: { name: string; count: number; totalNanos: number }[];
  /**
   * The durations of `name`'s group binned on REQUEST_LATENCY_EDGES: `counts[k]` is bin `first + k`
   * (the bins from the first to the last non-empty one; their sum is `duration.count`). Absent in
   * records made before.
   */
  histogram?: { first: number; counts: number[] };
  /** Requests of `name`'s group; the durations' distribution. */
  duration: Durations;
  /** Each part's distribution over the requests of the group. */
  parts: Record<RequestPart, Durations>;
  /** Mean parts of the requests around the median (ranks 45–55 %, at least one) and of the slowest 1 % (at least one). */
  median: PartNanos & { durationNanos: number; requests: number };
  tail: PartNanos & { durationNanos: number; requests: number };
  /** Of the running time on the critical path, GC mark assist; of the spans, stop-the-world (means over the group). */
  gcAssistMeanNanos: number;
  stwMeanNanos: number;
  /** Of the spans, time followed into other goroutines (mean over the group). */
  viaOthersMeanNanos: number;
  /** The slowest requests (at most 10), slowest first. */
  slowest: SlowRequest[];
  /**
   * Of the slowest 1 %: the mean time their critical paths spent in other goroutines, by those
   * goroutines' entry function ("" unseen), most time first (at most 8). Absent in records made before.
   */
  tailVia?: { entry: string; nanos: number }[];
  /**
   * The trace's total of net/http connection goroutines' keep-alive waits on the network (between a
   * response and the client's next request), counted as the summary counts blocked time; null when
   * the analysis did not run (too large); absent in records made before.
   */
  keepAliveWaitNanos?: number | null;
  /** The wait stacks the kept paths' segments name (StoredPath; absent in records made before). */
  waitStacks?: string[][];
  /** Requests past the analysis' bound (not counted). */
  omitted: number;
}
