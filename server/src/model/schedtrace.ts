import type { GcTrace } from './gctrace.ts';

/**
 * A Go scheduler trace: the `SCHED` lines the runtime writes to stderr under
 * `GODEBUG=schedtrace=N` (every N ms), with the per-P, per-M and per-G lines of `scheddetail=1`.
 * Figures as the runtime printed them. Plain JSON-serialisable data.
 */

/** One P of a detailed sample (`  P0: status=1 schedtick=… syscalltick=… m=… runqsize=… gfreecnt=… timerslen=…`). */
export interface SchedProc {
  id: number;
  /** The runtime's P status: 0 idle, 1 running, 2 syscall, 3 gcstop, 4 dead. */
  status: number;
  schedtick: number;
  syscalltick: number;
  /** The thread holding it, or null. */
  m: number | null;
  runqsize: number;
  gfreecnt: number;
  /** Absent (null) in Go releases that did not print it. */
  timerslen: number | null;
}

/** What the G lines of a detailed sample say, counted (a busy service prints thousands). */
export interface SchedGoroutines {
  total: number;
  /** By the runtime's status name: idle, runnable, running, syscall, waiting, dead, copystack, preempted, … (scan bit dropped). */
  byStatus: Record<string, number>;
  /** Waiting goroutines by wait reason ("select", "chan receive", "IO wait", …). */
  byWaitReason: Record<string, number>;
}

/**
 * One `SCHED` line. `atMs` counts from the program's start; the runqueue figures are the global queue
 * and each P's local queue; `schedticks` (per P, Go 1.26+) and `needSpinning` (Go 1.21+) are null when
 * the line lacks them.
 */
export interface SchedSample {
  atMs: number;
  gomaxprocs: number;
  idleProcs: number;
  threads: number;
  spinningThreads: number;
  needSpinning: number | null;
  idleThreads: number;
  globalRunqueue: number;
  localRunqueues: number[];
  schedticks: number[] | null;
  /** The scheddetail=1 part: scheduler flags, every P, the threads and the goroutines (counted). */
  detail: {
    gcWaiting: boolean;
    idleLockedThreads: number;
    stopWait: number;
    sysmonWait: boolean;
    procs: SchedProc[];
    /** Threads, those with a P, spinning, blocked. */
    threads: { total: number; withP: number; spinning: number; blocked: number };
    goroutines: SchedGoroutines;
  } | null;
}

/** min / mean / max of a figure over the samples (nearest-rank percentiles where given). */
export interface SchedStat {
  min: number;
  mean: number;
  max: number;
}

/**
 * Over all samples: their span and usual interval (median gap), the last GOMAXPROCS, and per figure
 * min/mean/max; `runqueue.total` is global + local queues, with nearest-rank p50 and p99.
 */
export interface SchedTraceSummary {
  samples: number;
  spanMs: number;
  intervalMs: number;
  gomaxprocs: number;
  detailed: boolean;
  threads: SchedStat;
  idleProcs: SchedStat;
  idleThreads: SchedStat;
  spinningThreads: SchedStat;
  runqueue: { global: SchedStat; local: SchedStat; total: SchedStat & { p50: number; p99: number } };
  /** Largest and last goroutine count (detailed traces only). */
  goroutines: { max: number; last: number } | null;
}

/** A parsed scheduler trace; `gc` holds the same log's `gc N @…` lines when it has any (gctrace=1). */
export interface SchedTrace {
  kind: 'schedtrace';
  samples: SchedSample[];
  summary: SchedTraceSummary;
  gc: GcTrace | null;
}
