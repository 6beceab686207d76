import { describe, expect, it } from 'vitest';
import { detect, parse } from '../../src/ingest/gctrace.ts';
import { detect as detectBench } from '../../src/ingest/gobench.ts';
import { fixtureDir, gobenchSamples as samples, ingestError, read, readExpectedJson } from '../helpers/parser-tests.ts';

const ours = fixtureDir('gobench');

interface ExpectedCycle {
  line: number;
  gc: number;
  at_s: number;
  cpu_percent: number;
  clock_ms: { sweep_termination: number; mark_scan: number; mark_termination: number };
  cpu_ms: {
    sweep_termination: number;
    mark_assist: number;
    mark_background: number;
    mark_idle: number;
    mark_termination: number;
  };
  heap_mb: { start: number; end: number; live: number };
  goal_mb: number;
  stacks_mb: number;
  globals_mb: number | null;
  procs: number;
  forced: boolean;
  stw_pause_ms: number;
}

describe.each([
  ['render-before-gctrace.txt', 'render-before.gctrace.json'],
  ['render-after-gctrace.txt', 'render-after.gctrace.json'],
])('GC trace %s against expected/%s', (file, expectedFile) => {
  const bytes = read(samples, file);
  const expected = readExpectedJson(expectedFile);
  const trace = parse(bytes);

  it('is detected from its content alone', () => {
    expect(detect(bytes.subarray(0, 4096))).toBeGreaterThanOrEqual(0.9);
    expect(detectBench(bytes.subarray(0, 4096))).toBe(0);
  });

  it('has every cycle with the printed figures', () => {
    const want = (expected.gc as ExpectedCycle[]).map((c) => ({
      gc: c.gc,
      atSeconds: c.at_s,
      cpuPercent: c.cpu_percent,
      clockMs: {
        sweepTermination: c.clock_ms.sweep_termination,
        markScan: c.clock_ms.mark_scan,
        markTermination: c.clock_ms.mark_termination,
      },
      cpuMs: {
        sweepTermination: c.cpu_ms.sweep_termination,
        markAssist: c.cpu_ms.mark_assist,
        markBackground: c.cpu_ms.mark_background,
        markIdle: c.cpu_ms.mark_idle,
        markTermination: c.cpu_ms.mark_termination,
      },
      heapMb: c.heap_mb,
      goalMb: c.goal_mb,
      stacksMb: c.stacks_mb,
      globalsMb: c.globals_mb,
      procs: c.procs,
      forced: c.forced,
      stwPauseMs: c.stw_pause_ms,
    }));
    expect(trace.cycles).toEqual(want);
    // Lines that are not gc lines (the program's log output) were skipped, not miscounted.
    expect(bytes.toString('utf8').trimEnd().split('\n').length - trace.cycles.length).toBe(expected.non_gc_lines);
  });

  it('summarises cycles, forced cycles and STW pauses as the reference does', () => {
    const s = expected.summary;
    expect(trace.summary).toEqual({
      cycles: s.cycles,
      forcedCycles: s.forced_cycles,
      stwPauseMs: {
        total: s.stw_pause_ms.total,
        p50: s.stw_pause_ms.p50_nearest_rank,
        p99: s.stw_pause_ms.p99_nearest_rank,
        max: s.stw_pause_ms.max,
      },
      lastCpuPercent: s.last_cpu_percent,
      maxHeapMb: s.max_heap_start_mb,
      maxGoalMb: s.max_goal_mb,
    });
  });
});

describe('GC trace of our own gcchurn run', () => {
  const bytes = read(ours, 'gcchurn-gctrace.txt');
  const trace = parse(bytes);
  const memstats = Object.fromEntries(
    [
      ...read(ours, 'gcchurn-memstats.txt')
        .toString('utf8')
        .matchAll(/(\w+)=(\d+)/g),
    ].map((m) => [m[1]!, Number(m[2])]),
  );

  it("agrees with the runtime's own counters: NumGC, NumForcedGC, PauseTotalNs", () => {
    expect(detect(bytes.subarray(0, 2048))).toBeGreaterThanOrEqual(0.9);
    expect(trace.summary.cycles).toBe(memstats.NumGC);
    expect(trace.summary.forcedCycles).toBe(memstats.NumForcedGC);
    expect(trace.cycles.map((c) => c.gc)).toEqual(Array.from({ length: memstats.NumGC! }, (_, i) => i + 1));
    // The runtime truncates each printed duration to its last digit, so the printed pauses sum to at
    // most the true total and at least the true total minus one last-digit unit per printed figure.
    let slack = 0;
    for (const m of bytes.toString('utf8').matchAll(/: ([\d.]+)\+[\d.]+\+([\d.]+) ms clock/g)) {
      for (const v of [m[1]!, m[2]!]) slack += 10 ** -(v.split('.')[1]?.length ?? 0);
    }
    const trueMs = memstats.PauseTotalNs! / 1e6;
    expect(trace.summary.stwPauseMs.total).toBeLessThanOrEqual(trueMs);
    expect(trace.summary.stwPauseMs.total).toBeGreaterThanOrEqual(trueMs - slack);
  });

  it('is JSON-serialisable in the design shape', () => {
    const back = JSON.parse(JSON.stringify(trace));
    expect(back).toEqual(trace);
    expect(back.kind).toBe('gctrace');
    expect(Object.keys(back.cycles[0]).sort()).toEqual(
      [
        'atSeconds',
        'clockMs',
        'cpuMs',
        'cpuPercent',
        'forced',
        'gc',
        'globalsMb',
        'goalMb',
        'heapMb',
        'procs',
        'stacksMb',
        'stwPauseMs',
      ].sort(),
    );
    expect(trace.cycles[trace.cycles.length - 1]!.forced).toBe(true);
  });
});

describe('GC trace grammar variants and errors', () => {
  it('reads lines without stacks/globals (Go < 1.19), with a log prefix, and the goroutine-leak marker', () => {
    const text = [
      'gc 1 @0.004s 2%: 0.010+1.2+0.020 ms clock, 0.040+0.5/1.0/0+0.080 ms cpu, 4->4->0 MB, 5 MB goal, 4 P',
      '2026-01-01T00:00:00Z app[1]: gc 2 @1.500s 1%: 12+30+1.5 ms clock, 48+0/20/5+6.0 ms cpu, 9->10->5 MB, 10 MB goal, 1 MB stacks, 0 MB globals, 4 P (forced)',
      'gc 3 @2.000s 1% (checking for goroutine leaks): 0.1+0.2+0.3 ms clock, 0.1+0/0.2/0+0.3 ms cpu, 5->5->1 MB, 10 MB goal, 0 MB stacks, 0 MB globals, 4 P',
      'GC forced',
    ].join('\n');
    const t = parse(Buffer.from(text));
    expect(t.cycles.map((c) => [c.gc, c.stacksMb, c.globalsMb, c.forced, c.stwPauseMs])).toEqual([
      [1, null, null, false, 0.03],
      [2, 1, 0, true, 13.5],
      [3, 0, 0, false, 0.4],
    ]);
    expect(t.summary).toMatchObject({
      cycles: 3,
      forcedCycles: 1,
      stwPauseMs: { total: 13.93, p50: 0.4, p99: 13.5, max: 13.5 },
    });
  });

  it('reports bad input as typed errors with the line number', () => {
    expect(ingestError(() => parse(Buffer.from('  \n'))).code).toBe('empty');
    expect(ingestError(() => parse(Buffer.from('hello\nworld\n'))).code).toBe('no-run');
    const e = ingestError(() => parse(Buffer.from('starting\ngc 1 @0.004s 2%: 0.010+1.2 ms clock\n')));
    expect(e).toMatchObject({ code: 'malformed', line: 2 });
  });
});
