/// <reference types="node" />
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { CaptureRecord } from './api.ts';
import {
  busyStages,
  captureCommandLine,
  groupCaptures,
  loadText,
  readableCaptures,
  runText,
  windowText,
} from './capture-format.ts';

// Real records written by `stagediff capture` for the demo (fixtures/demo).
const demo = new URL('../../../fixtures/demo/', import.meta.url);
const wrkPath = new URL('baseline/run-1/capture.json', demo);
const vegetaPath = new URL('baseline/fixed-rate/capture.json', demo);
const have = existsSync(wrkPath) && existsSync(vegetaPath);
const read = (u: URL) => JSON.parse(readFileSync(u, 'utf8')) as CaptureRecord;

describe.skipIf(!have)('capture records in words', () => {
  it('names the load command, its version and the window of each run', () => {
    const c = read(wrkPath);
    expect(loadText(c)).toEqual({
      what: 'wrk',
      command: c.load.kind === 'command' ? c.load.command : '',
      version: 'wrk debian/4.1.0-3+b2 [epoll]',
    });
    const run = c.runs[0]!;
    const secs = (Date.parse(run.window!.end) - Date.parse(run.window!.start)) / 1000;
    expect(windowText(run)).toBe(
      `${secs.toFixed(1)} s, ${run.window!.start.slice(11, 19)} → ${run.window!.end.slice(11, 19)} UTC`,
    );
    const line = runText(run);
    expect(line).toMatch(/^run 1 · [\d,]+(\.\d)? req\/s · p99 \d+\.\d\d ms · \d+\.\d µs CPU\/request · /);
    expect(line).toContain(`${run.machine.cpuIdlePercent}% idle before`);
    // The demo was recorded with --wait-quiet: a wait is part of the story, no wait is not mentioned.
    if (run.machine.waitedForQuietSeconds) {
      expect(line).toContain(`waited ${run.machine.waitedForQuietSeconds} s for a quiet machine`);
    } else {
      expect(line).not.toContain('waited');
    }
    const waited = runText({ ...run, machine: { ...run.machine, waitedForQuietSeconds: 42 } });
    expect(waited).toContain('waited 42 s for a quiet machine');
  });

  it('a run without profiles has no window; the vegeta run names vegeta and its module version', () => {
    const c = read(vegetaPath);
    expect(windowText(c.runs[0]!)).toBeNull();
    expect(loadText(c).what).toBe('vegeta');
    expect(loadText(c).version).toMatch(/^vegeta v12\.\d+\.\d+/);
    expect(runText(c.runs[0]!)).not.toContain('µs CPU/request');
  });

  it("groups a stage's run-by-run captures into one block of numbered runs", () => {
    const runs = [1, 2, 3, 4, 5, 6].map((k) => read(new URL(`baseline/run-${k}/capture.json`, demo)));
    const vegeta = read(vegetaPath);
    const groups = groupCaptures([...runs, vegeta]);
    expect(groups).toHaveLength(2);
    const [wrk, fixed] = groups;
    expect(wrk!.record).toBe(runs[0]);
    expect(wrk!.commands).toEqual(runs.map((r) => r.command));
    expect(new Set(wrk!.commands).size).toBe(6); // each names its own --out run-K folder
    expect(wrk!.runs.map((r) => r.run)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(wrk!.runs.map((r) => r.summary?.rps)).toEqual(runs.map((r) => r.runs[0]!.summary?.rps));
    expect(wrk!.errors).toEqual([]);
    expect(fixed!.record).toBe(vegeta);
    expect(fixed!.runs).toHaveLength(1);
    // A capture that stopped early keeps its reason in the group.
    const failed = { ...runs[1]!, error: 'pprof endpoint unreachable' };
    expect(groupCaptures([runs[0]!, failed])[0]!.errors).toEqual(['pprof endpoint unreachable']);
    // Different loads stay apart, in order of first appearance.
    const other = { ...runs[0]!, load: { ...runs[0]!.load, command: 'wrk -t4 -c64 -d8s URL' } } as (typeof runs)[0];
    expect(groupCaptures([runs[0]!, other, runs[1]!]).map((g) => g.runs.length)).toEqual([2, 1]);
  });

  it('lists the stages captured on a busy machine with the lowest idle share', () => {
    const c = read(wrkPath);
    const quiet = { ...c, runs: c.runs.map((r) => ({ ...r, machine: { ...r.machine, busy: false } })) };
    const busy = {
      ...c,
      runs: [
        { ...c.runs[0]!, machine: { ...c.runs[0]!.machine, busy: true, cpuIdlePercent: 40 } },
        { ...c.runs[0]!, run: 2, machine: { ...c.runs[0]!.machine, busy: true, cpuIdlePercent: 12.5 } },
      ],
    };
    expect(
      busyStages([{ name: 'a', captures: [quiet] }, { name: 'b', captures: [quiet, busy] }, { name: 'c' }]),
    ).toEqual([{ stage: 'b', idle: 12.5 }]);
  });
});

it('the home page command targets the server it is served from', () => {
  expect(captureCommandLine('https://perf.example.com')).toBe(
    'npx stagediff capture --pprof http://127.0.0.1:6060 --stage baseline --server https://perf.example.com -- wrk -t2 -c32 -d30s --latency http://127.0.0.1:8080/',
  );
});

describe.skipIf(!have)('records the page cannot read', () => {
  it('are left out, and never break the busy-machine warning', () => {
    const good = read(wrkPath);
    const built = read(vegetaPath);
    const bad: unknown[] = [
      { schema: 'stagediff-capture/1', runs: [{}] },
      { ...good, runs: [{ ...good.runs[0], machine: null }] },
      { ...good, runs: [{ ...good.runs[0], machine: { ...good.runs[0]!.machine, loadAverage: [1] } }] },
      { ...good, load: null },
      { ...good, load: { kind: 'later' } },
      { ...good, runs: 'x' },
      null,
      'text',
      7,
    ];
    expect(readableCaptures([good, ...bad, built])).toEqual([good, built]);
    expect(readableCaptures('not a list')).toEqual([]);
    expect(readableCaptures(undefined)).toEqual([]);
    const stages = [{ name: 'b', captures: bad as CaptureRecord[] }];
    expect(busyStages(stages)).toEqual([]);
  });
});
