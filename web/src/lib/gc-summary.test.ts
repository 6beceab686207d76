import { describe, expect, it } from 'vitest';
import type { GcCycle, GcStages, GcTrace } from './api.ts';
import { gcSeries, gcSummaries, nearestRank, summarizeTraces } from './gc-summary.ts';

function cycle(gc: number, at: number, pause: number, forced = false): GcCycle {
  return {
    gc,
    atSeconds: at,
    cpuPercent: gc,
    clockMs: { sweepTermination: pause / 2, markScan: 1, markTermination: pause / 2 },
    cpuMs: { sweepTermination: 0, markAssist: 0, markBackground: 0, markIdle: 0, markTermination: 0 },
    heapMb: { start: 10 * gc, end: 10 * gc + 2, live: 5 * gc },
    goalMb: 12 * gc,
    stacksMb: 0,
    globalsMb: 2,
    procs: 2,
    forced,
    stwPauseMs: pause,
  };
}

function trace(cycles: GcCycle[]): GcTrace {
  const p = cycles.map((c) => c.stwPauseMs).sort((a, b) => a - b);
  return {
    kind: 'gctrace',
    cycles,
    summary: {
      cycles: cycles.length,
      forcedCycles: cycles.filter((c) => c.forced).length,
      stwPauseMs: {
        total: p.reduce((a, v) => a + v, 0),
        p50: nearestRank(p, 50),
        p99: nearestRank(p, 99),
        max: p[p.length - 1]!,
      },
      lastCpuPercent: cycles[cycles.length - 1]!.cpuPercent,
      maxHeapMb: Math.max(...cycles.map((c) => c.heapMb.start)),
      maxGoalMb: Math.max(...cycles.map((c) => c.goalMb)),
    },
  };
}

describe('GC summaries', () => {
  it('nearest rank', () => {
    const s = [0.1, 0.2, 0.3, 0.4];
    expect(nearestRank(s, 50)).toBe(0.2);
    expect(nearestRank(s, 99)).toBe(0.4);
    expect(nearestRank([], 50)).toBe(0);
    expect(nearestRank([7], 1)).toBe(7);
  });

  it('takes one trace as the server summarised it, and pools the cycles of several', () => {
    const a = trace([cycle(1, 0.01, 0.3), cycle(2, 0.02, 1.5, true), cycle(3, 0.5, 0.5)]);
    const b = trace([cycle(1, 0.01, 4), cycle(2, 0.03, 0.2)]);
    expect(summarizeTraces('s', 'one', [a])).toEqual({
      stageId: 's',
      name: 'one',
      traces: 1,
      cycles: 3,
      forcedCycles: 1,
      stwPauseMs: a.summary.stwPauseMs,
      cpuPercent: 3,
      maxHeapMb: 30,
      maxGoalMb: 36,
    });
    const both = summarizeTraces('s', 'two', [a, b])!;
    expect(both.cycles).toBe(5);
    expect(both.forcedCycles).toBe(1);
    expect(both.stwPauseMs).toEqual({ total: 0.3 + 1.5 + 0.5 + 4 + 0.2, p50: 0.5, p99: 4, max: 4 });
    expect(both.cpuPercent).toBe(2.5);
    expect(summarizeTraces('s', 'none', [])).toBeNull();
  });

  it('lists stages with traces and their chart series', () => {
    const gc: GcStages = {
      stages: [
        {
          stageId: 'a',
          name: 'before',
          traces: [{ artifactId: 'x', filename: 'gc.txt', trace: trace([cycle(1, 0.1, 1), cycle(2, 0.2, 2, true)]) }],
        },
        { stageId: 'b', name: 'no trace', traces: [] },
      ],
    };
    expect(gcSummaries(gc).map((s) => s.stageId)).toEqual(['a']);
    const [s] = gcSeries(gc);
    expect(s!.label).toBe('before');
    expect(s!.pauses).toEqual([
      [0.1, 1],
      [0.2, 2],
    ]);
    expect(s!.heapStart).toEqual([
      [0.1, 10],
      [0.2, 20],
    ]);
    expect(s!.forced).toEqual([[0.2, 2]]);
  });
});
