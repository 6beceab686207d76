/**
 * GC trace figures per stage (GODEBUG=gctrace=1): the pause summary the stage table and the GC tab show,
 * and the per-cycle series of the GC timeline chart. Pauses are stop-the-world milliseconds
 * (sweep termination + mark termination wall clock), heap sizes MB as the runtime printed them.
 */
import type { GcCycle, GcStages, GcTrace, Stage } from './api.ts';

export interface GcStageSummary {
  stageId: string;
  name: string;
  /** GC trace files behind the figures; above 1 their cycles are pooled. */
  traces: number;
  cycles: number;
  forcedCycles: number;
  stwPauseMs: { total: number; p50: number; p99: number; max: number };
  /** The GC's cumulative CPU share at the last cycle (the runtime's `P%`); with several traces, their mean. */
  cpuPercent: number;
  maxHeapMb: number;
  maxGoalMb: number;
}

/** Nearest-rank percentile of sorted values: the ⌈p/100·n⌉-th smallest (as the server's summary). */
export function nearestRank(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return 0;
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[Math.min(rank, sorted.length) - 1]!;
}

/** One stage's GC figures from its traces (null when it has none). */
export function summarizeTraces(stageId: string, name: string, traces: readonly GcTrace[]): GcStageSummary | null {
  if (traces.length === 0) return null;
  if (traces.length === 1) {
    const s = traces[0]!.summary;
    return {
      stageId,
      name,
      traces: 1,
      cycles: s.cycles,
      forcedCycles: s.forcedCycles,
      stwPauseMs: { ...s.stwPauseMs },
      cpuPercent: s.lastCpuPercent,
      maxHeapMb: s.maxHeapMb,
      maxGoalMb: s.maxGoalMb,
    };
  }
  const cycles = traces.flatMap((t) => t.cycles);
  const pauses = cycles.map((c) => c.stwPauseMs).sort((a, b) => a - b);
  return {
    stageId,
    name,
    traces: traces.length,
    cycles: cycles.length,
    forcedCycles: cycles.filter((c) => c.forced).length,
    stwPauseMs: {
      total: pauses.reduce((a, v) => a + v, 0),
      p50: nearestRank(pauses, 50),
      p99: nearestRank(pauses, 99),
      max: pauses[pauses.length - 1] ?? 0,
    },
    cpuPercent: traces.reduce((a, t) => a + t.summary.lastCpuPercent, 0) / traces.length,
    maxHeapMb: Math.max(...traces.map((t) => t.summary.maxHeapMb)),
    maxGoalMb: Math.max(...traces.map((t) => t.summary.maxGoalMb)),
  };
}

/** Every stage that has a GC trace, in stage order. */
export function gcSummaries(gc: GcStages): GcStageSummary[] {
  return gc.stages.flatMap(
    (s) =>
      summarizeTraces(
        s.stageId,
        s.name,
        s.traces.map((t) => t.trace),
      ) ?? [],
  );
}

/** Whether any stage holds a GC trace (the GC tab and the stage table's GC columns appear then). */
export function hasGcTrace(stages: readonly Stage[]): boolean {
  return stages.some((s) => s.artifacts.some((a) => a.kind === 'gctrace'));
}

/** One line of the GC timeline chart: [seconds since start, value] per cycle. */
export interface GcSeries {
  stageId: string;
  label: string;
  pauses: [number, number][];
  heapStart: [number, number][];
  heapLive: [number, number][];
  goal: [number, number][];
  forced: [number, number][];
}

/** The chart series of each trace (a stage with several traces gets one series per file). */
export function gcSeries(gc: GcStages): GcSeries[] {
  return gc.stages.flatMap((s) =>
    s.traces.map((t) => {
      const pick = (f: (c: GcCycle) => number): [number, number][] => t.trace.cycles.map((c) => [c.atSeconds, f(c)]);
      return {
        stageId: s.stageId,
        label: s.traces.length > 1 ? `${s.name} · ${t.filename}` : s.name,
        pauses: pick((c) => c.stwPauseMs),
        heapStart: pick((c) => c.heapMb.start),
        heapLive: pick((c) => c.heapMb.live),
        goal: pick((c) => c.goalMb),
        forced: t.trace.cycles.filter((c) => c.forced).map((c) => [c.atSeconds, c.stwPauseMs] as [number, number]),
      };
    }),
  );
}
