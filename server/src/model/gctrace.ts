/**
 * A Go GC trace (`GODEBUG=gctrace=1` on stderr): one entry per GC cycle, figures as the runtime printed
 * them. Plain JSON-serialisable data; the shape is part of the API contract (server/src/api/).
 */

/** Wall-clock durations of one cycle's phases, in milliseconds (`a+b+c ms clock`). */
export interface GcClockMs {
  /** Stop-the-world sweep termination. */
  sweepTermination: number;
  /** Concurrent mark and scan. */
  markScan: number;
  /** Stop-the-world mark termination. */
  markTermination: number;
}

/** CPU time of one cycle's phases, in milliseconds (`a+b/c/d+e ms cpu`). */
export interface GcCpuMs {
  sweepTermination: number;
  /** Mark assists done by allocating goroutines. */
  markAssist: number;
  /** Dedicated and fractional background mark workers. */
  markBackground: number;
  /** Idle-time mark workers. */
  markIdle: number;
  markTermination: number;
}

/**
 * One GC cycle (`gc N @Ts P%: …`).
 * - `atSeconds`: seconds since program start when the cycle began;
 * - `cpuPercent`: the share of CPU spent in GC since program start, cumulative, as printed (an integer);
 * - `heapMb`: heap size at GC start, at GC end, and live heap after marking, in MB (MiB, truncated by
 *   the runtime);
 * - `goalMb`, `stacksMb`, `globalsMb`: heap goal and scannable stack/global sizes in MB (`null` when the
 *   Go version that wrote the line did not print stacks/globals);
 * - `procs`: GOMAXPROCS; `forced`: the cycle was forced by `runtime.GC()` (`(forced)`);
 * - `stwPauseMs`: the stop-the-world pause, sweep termination + mark termination wall clock, in ms.
 */
export interface GcCycle {
  gc: number;
  atSeconds: number;
  cpuPercent: number;
  clockMs: GcClockMs;
  cpuMs: GcCpuMs;
  heapMb: { start: number; end: number; live: number };
  goalMb: number;
  stacksMb: number | null;
  globalsMb: number | null;
  procs: number;
  forced: boolean;
  stwPauseMs: number;
}

/**
 * Totals over a trace. Percentiles of the per-cycle STW pause are nearest-rank (the ⌈p/100·n⌉-th
 * smallest). Besides the design's fields: `lastCpuPercent` (the last cycle's cumulative GC CPU %),
 * `maxHeapMb` (largest heap at GC start) and `maxGoalMb`.
 */
export interface GcTraceSummary {
  cycles: number;
  forcedCycles: number;
  stwPauseMs: { total: number; p50: number; p99: number; max: number };
  lastCpuPercent: number;
  maxHeapMb: number;
  maxGoalMb: number;
}

/** A parsed GC trace: cycles in the order printed. Lines other than gc cycle lines are ignored. */
export interface GcTrace {
  kind: 'gctrace';
  cycles: GcCycle[];
  summary: GcTraceSummary;
}
