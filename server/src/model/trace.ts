import type { Profile } from './profile.ts';
import type { TraceRequestFigures } from './trace-requests.ts';

/**
 * A Go execution trace (`runtime/trace`, `/debug/pprof/trace?seconds=N`, `go test -trace`) as
 * stagediff reads it: a summary of what the runtime did over the trace's span, and the blocking and
 * scheduling profiles Go derives from it (`go tool trace -pprof=net|sync|syscall|sched`). Plain
 * JSON-serialisable data apart from the profiles. Every time is in nanoseconds of the trace's clock;
 * "trace time" t is counted from the trace's first event (t = 0 is its start).
 */
export interface TraceModel {
  kind: 'trace';
  summary: TraceSummary;
  /** The derived profiles, `kind` trace-net, trace-sync, trace-syscall, trace-sched; duration = the span. */
  profiles: { net: Profile; sync: Profile; syscall: Profile; sched: Profile };
  /** Its requests and where their time went (model/trace-requests.ts); absent in models read before it existed. */
  requests?: TraceRequestFigures;
}

/** Count and total of a set of intervals, in ns. */
export interface SpanTotals {
  count: number;
  totalNanos: number;
}

/**
 * A distribution of durations (ns): count, total, mean and nearest-rank percentiles (the ⌈p/100·n⌉-th
 * smallest), all 0 when count is 0.
 */
export interface Durations extends SpanTotals {
  meanNanos: number;
  p50Nanos: number;
  p90Nanos: number;
  p99Nanos: number;
  maxNanos: number;
}

/** Time goroutines spent blocked (state Waiting) for one reason, as the runtime names it. */
export interface BlockReason extends SpanTotals {
  /** The runtime's reason string: "chan receive", "select", "sync", "network", "sleep", … */
  reason: string;
  /** The category it is counted under in `blocked`. */
  category: BlockCategory;
}

export type BlockCategory = 'channel' | 'select' | 'sync' | 'network' | 'sleep' | 'other';

/** Goroutines by the function they started in (the root frame of their stack). */
export interface EntryFunction {
  /** Function name; "" when the trace showed no stack of the goroutine. */
  name: string;
  /** Goroutines of this function seen in the trace (alive at its start or created during it). */
  goroutines: number;
  /** Of those, created during the trace. */
  created: number;
  /** Lifetimes (creation to end) of the goroutines both created and ended during the trace. */
  lifetime: Durations;
  /** Time all its goroutines spent, within the trace, running, runnable, blocked and in syscalls. */
  runningNanos: number;
  runnableNanos: number;
  blockedNanos: number;
  syscallNanos: number;
}

/** One bucket of the timeline: [startNanos, startNanos + bucketNanos) of trace time. */
export interface TimelineBucket {
  startNanos: number;
  /** Goroutines running, and runnable (waiting for a P), averaged over the bucket. */
  running: number;
  runnable: number;
  /** Share of the bucket (0–1) with the GC's concurrent mark phase on. */
  gcMark: number;
  /** Stop-the-world time inside the bucket, in ns. */
  stwNanos: number;
  /** Largest live heap the runtime reported in the bucket (bytes), null when it reported none. */
  heapBytes: number | null;
}

/** An interval of trace time, e.g. a GC mark phase, and what it was. */
export interface TimeSpan {
  startNanos: number;
  endNanos: number;
  /** For stop-the-world spans, the runtime's kind (e.g. "GC mark termination"); else "". */
  kind: string;
}

/**
 * The per-trace summary. Semantics (shared with scripts/trace-reference, whose figures it equals):
 * - a goroutine's state holds from the transition into it until the next transition out of it; an
 *   interval still open at the trace's end ends there (`…Nanos` totals include it); an interval whose
 *   start precedes the trace (a goroutine already in that state when tracing began) is not counted;
 * - `schedWait` is every Runnable→Running delay whose runnable start was observed;
 * - `blocked` sums Waiting intervals by the reason of the transition into Waiting; `syscall` sums
 *   Syscall intervals;
 * - `gc.cycles` counts mark phases that began in the trace; `gc.markNanos` is mark-phase time in the
 *   trace (a phase running at its start counts from there); `gc.stw` are the stop-the-world pauses
 *   (all kinds; `byKind` splits them); `gc.assist` the goroutines' mark-assist intervals.
 */
export interface TraceSummary {
  /** `go 1.NN` of the header: 1.22, 1.23 (also Go 1.24), 1.25, 1.26. */
  goVersion: string;
  /** First to last event. */
  spanNanos: number;
  /** Wall-clock time of the trace's start (ISO 8601), from the clock snapshot Go 1.25+ writes; null before. */
  startTime: string | null;
  generations: number;
  events: number;
  /** GOMAXPROCS (the last value the trace reported). */
  gomaxprocs: number | null;
  /** Set when the trace's tail could not be read: the figures cover the complete generations before it. */
  incomplete: { reason: string; validBytes: number } | null;
  goroutines: { atStart: number; created: number; ended: number; maxAlive: number };
  schedWait: Durations;
  blocked: {
    channel: SpanTotals;
    select: SpanTotals;
    sync: SpanTotals;
    network: SpanTotals;
    sleep: SpanTotals;
    other: SpanTotals;
    /** Every reason, largest total first. */
    byReason: BlockReason[];
  };
  syscall: SpanTotals;
  gc: {
    cycles: number;
    markNanos: number;
    stw: Durations & { byKind: (SpanTotals & { kind: string; maxNanos: number })[] };
    assist: SpanTotals;
  };
  /** By entry function, most goroutines first (then name); at most 100, the rest counted in `omitted`. */
  entryFunctions: { functions: EntryFunction[]; omitted: number };
  timeline: {
    bucketNanos: number;
    buckets: TimelineBucket[];
    /** GC mark phases and stop-the-world pauses, in order; at most 10,000 of each (`truncated` past it). */
    gcSpans: TimeSpan[];
    stwSpans: TimeSpan[];
    truncated: boolean;
  };
}
