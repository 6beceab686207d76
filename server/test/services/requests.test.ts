/**
 * Per-request figures count the requests a stage served during each profile's window: from a load
 * test's own timeline when the run records absolute times and spans the window (vegeta, k6), else the
 * run the profile was captured with (its rps × the profile's duration), else the stage's rps × its
 * duration. A stage of several profiles sums its profiles' windows.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StagediffApp } from '../../src/app.ts';
import { ingest } from '../../src/ingest/detect.ts';
import '../../src/ingest/registry.ts';
import type { LoadTestRun, LoadTestSummary } from '../../src/model/loadtest.ts';
import type { Artifact, StageWithArtifacts } from '../../src/store/index.ts';
import { describeDivisor, profileRequests, requestsInWindow } from '../../src/services/requests.ts';
import { stageRunSet } from '../../src/services/stage-runs.ts';
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
    expect(Math.abs(requestsInWindow(run, first + 1000, 2000)! - inWindow)).toBeLessThanOrEqual(1);
    // A window outside the run, or one the run only touches, is not covered.
    expect(requestsInWindow(run, first - 3_600_000, 2000)).toBeNull();
    expect(requestsInWindow(run, first + 2000, 10_000)).toBeNull();

    // The order of preference, on a stage of one profile, the vegeta run and a wrk run of 7000 req/s.
    const profile = (timeNanos: number, durationNanos: number): Artifact =>
      ({
        id: `p${timeNanos}`,
        kind: 'profile',
        sha256: `${timeNanos}`,
        filename: 'cpu.pb.gz',
        summary: { durationNanos, timeNanos, sampleTypes: [], totals: {} },
      }) as unknown as Artifact;
    const wrk = {
      id: 'w',
      kind: 'loadtest',
      format: 'wrk',
      sha256: 'w',
      filename: 'wrk.txt',
      summary: { rps: 7000, requests: 70_000, latencyMs: {}, meta: {} } as unknown as LoadTestSummary,
    } as unknown as Artifact;
    const stage = (profiles: Artifact[]) =>
      ({ id: 's', name: 's', captures: [], artifacts: [wrk, ...profiles] }) as unknown as StageWithArtifacts;
    const loadTests = [{ artifact: wrk, run }];
    const inside = profile((first + 1000) * 1e6, 2e9);
    const st1 = stage([inside]);
    const [r1] = profileRequests(st1, [inside], loadTests, stageRunSet(st1, 'wrk'));
    expect(r1).toMatchObject({
      method: 'timeline',
      description: "timeline of vegeta-json within the profile's window",
    });
    expect(Math.abs(r1!.requests! - inWindow)).toBeLessThanOrEqual(1);
    // Outside the vegeta run: the profile's own run (the stage's only wrk run pairs with its only profile).
    const outside = profile((first - 3_600_000) * 1e6, 2e9);
    const st2 = stage([outside]);
    expect(profileRequests(st2, [outside], loadTests, stageRunSet(st2, 'wrk'))[0]).toMatchObject({
      requests: 14_000,
      method: 'paired-run',
    });
    // Two profiles for one run: no pairing; the stage's rps stands in, and says so.
    const other = profile((first - 7_200_000) * 1e6, 2e9);
    const st3 = stage([outside, other]);
    const both = profileRequests(st3, [outside, other], loadTests, stageRunSet(st3, 'wrk'));
    expect(both.map((r) => r.method)).toEqual(['stage-rps', 'stage-rps']);
    expect(both[0]).toMatchObject({
      requests: 14_000,
      description: 'stage rps (7000.0/s) × profile duration (2.00 s)',
    });
    // No duration (a heap snapshot): no divisor.
    const snapshot = profile((first + 1000) * 1e6, 0);
    const st4 = stage([snapshot]);
    expect(profileRequests(st4, [snapshot], loadTests, stageRunSet(st4, 'wrk'))[0]!.requests).toBeNull();
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
    const r = await app.ctx.analysis.perRequest(tree, tree.stages[0]!, cpu);
    expect(r.measured).toBe(true);
    expect(r.profiles.map((p) => p.method)).toEqual(['paired-run', 'paired-run', 'paired-run']);
    expect(r.requests).toBeCloseTo(expected, 6);
    // The per-request diff divides by that sum.
    const d = (
      await app.inject({
        url: `/api/comparisons/${id}/diff?base=${st}&target=${st}&sampleType=cpu&mode=per-request&limit=1`,
      })
    ).json() as { perRequest: { baseRequests: number; method: string } };
    expect(d.perRequest.baseRequests).toBeCloseTo(expected, 6);
    expect(d.perRequest.method).toBe(describeDivisor(r));
    expect(d.perRequest.method).toBe("3 profiles, each: its run's rps × the profile's duration");
  });
});
