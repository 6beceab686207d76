/**
 * Per-request figures count the requests a stage served during each profile's window: from a load
 * test's own timeline when the run records absolute times and spans the window (vegeta, k6), else the
 * profile's own run's rps × its duration, else the stage's rps × its duration. A stage of several
 * profiles sums its profiles' windows.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StagediffApp } from '../../src/app.ts';
import { ingest } from '../../src/ingest/detect.ts';
import '../../src/ingest/registry.ts';
import type { LoadTestRun } from '../../src/model/loadtest.ts';
import { requestsForProfile } from '../../src/services/analysis.ts';
import { addStage, createComparison, testApp, upload } from '../helpers/app.ts';
import { fixturesDir } from '../helpers/paths.ts';

const log = `${fixturesDir}demo/baseline/fixed-rate/vegeta.jsonl`;

/** RFC 3339 with nanoseconds (as vegeta writes it) → epoch milliseconds, keeping sub-ms digits. */
function epochMs(ts: string): number {
  const m = /^(.*T\d\d:\d\d:\d\d)(?:\.(\d+))?(Z|[+-]\d\d:\d\d)$/.exec(ts)!;
  const frac = (m[2] ?? '').padEnd(9, '0');
  return Date.parse(`${m[1]}${m[3]}`) + Number(frac) / 1e6;
}

describe('requests during one profile', () => {
  it('counts the requests that started inside the profile window, from the run timeline', async () => {
    const parsed = await ingest({ name: 'vegeta.jsonl', path: log });
    if (parsed.kind !== 'loadtest') throw new Error('not a load test');
    expect(parsed.runs).toHaveLength(1);
    const run: LoadTestRun = parsed.runs[0]!;
    // Independent count from the raw log: requests whose start falls in [first + 1 s, first + 3 s).
    const starts = readFileSync(log, 'utf8')
      .trim()
      .split('\n')
      .map((l) => epochMs(JSON.parse(l).timestamp as string));
    const first = Math.min(...starts);
    const inWindow = starts.filter((t) => t >= first + 1000 && t < first + 3000).length;
    expect(inWindow).toBeGreaterThan(700);
    const p = { timeNanos: (first + 1000) * 1e6, durationNanos: 2e9 };
    const r = requestsForProfile(p, [run], null, 400)!;
    expect(r.method).toMatch(/timeline of vegeta-json within the profile's window/);
    expect(Math.abs(r.requests - inWindow)).toBeLessThanOrEqual(1);
    // A window outside the run, or one the run only touches, falls back and says so.
    const outside = { ...p, timeNanos: (first - 3_600_000) * 1e6 };
    expect(requestsForProfile(outside, [run], null, 400)).toEqual({
      requests: 800,
      method: 'stage rps (400.0/s) × profile duration (2.00 s)',
    });
    const overhanging = { timeNanos: (first + 2000) * 1e6, durationNanos: 10e9 };
    expect(requestsForProfile(overhanging, [run], 7000, 400)).toEqual({
      requests: 70_000,
      method: "its run's rps × the profile's duration",
    });
    // No duration (a heap snapshot), or nothing to divide by: no figure.
    expect(requestsForProfile({ timeNanos: p.timeNanos, durationNanos: 0 }, [run], 7000, 400)).toBeNull();
    expect(requestsForProfile(outside, [], null, null)).toBeNull();
  });
});

describe('requests during the profiles of a stage of several runs', () => {
  let app: StagediffApp;
  beforeAll(async () => {
    app = await testApp();
  });
  afterAll(async () => app.close());

  it("sums each CPU profile's own run, not the fixed-rate run captured between them", async () => {
    const { id, auth } = await createComparison(app, 'runs');
    const st = await addStage(app, id, auth, 'baseline');
    const dir = `${fixturesDir}demo/baseline/`;
    // As the demo is seeded: run 1 (wrk, then its profile), the fixed-rate vegeta run, runs 2 and 3.
    const files = [
      'run-1/wrk.txt',
      'run-1/cpu.pb.gz',
      'fixed-rate/vegeta.jsonl',
      'run-2/wrk.txt',
      'run-2/cpu.pb.gz',
      'run-3/wrk.txt',
      'run-3/cpu.pb.gz',
    ];
    for (const f of files) expect((await upload(app, id, st, auth, [dir + f])).statusCode).toBe(200);
    const tree = (await app.ctx.store.getComparisonTree(id))!;
    const cpu = tree.stages[0]!.artifacts.filter((a) => a.kind === 'profile');
    expect(cpu).toHaveLength(3);
    // Independently: wrk's printed Requests/sec × the profile's own duration, per run.
    const expected = [1, 2, 3].reduce((sum, k) => {
      const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(readFileSync(`${dir}run-${k}/wrk.txt`, 'utf8'))![1]);
      const seconds = (cpu[k - 1]!.summary as { durationNanos: number }).durationNanos / 1e9;
      return sum + rps * seconds;
    }, 0);
    const r = await app.ctx.analysis.requestsDuring(tree, st, cpu);
    expect(r.method).toBe("3 profiles, each: its run's rps × the profile's duration");
    expect(r.requests).toBeCloseTo(expected, 6);
    // The per-request diff divides by that sum.
    const d = (
      await app.inject({
        url: `/api/comparisons/${id}/diff?base=${st}&target=${st}&sampleType=cpu&mode=per-request&limit=1`,
      })
    ).json() as { perRequest: { baseRequests: number; method: string } };
    expect(d.perRequest.baseRequests).toBeCloseTo(expected, 6);
    expect(d.perRequest.method).toBe(r.method);
  });
});
