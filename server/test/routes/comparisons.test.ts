import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StagediffApp } from '../../src/app.ts';
import { mannWhitneyU, summarizeMedian } from '../../src/analysis/benchstat.ts';
import { addStage, createComparison, testApp, upload } from '../helpers/app.ts';
import { PRINTED_RPS, runFiles, uploadRepeatedRuns } from '../helpers/repeated-runs.ts';

/* The stage table on real repeated runs of the demo service (fixtures/repeated-runs). */
let app: StagediffApp;
beforeAll(async () => {
  app = await testApp();
});
afterAll(async () => {
  await app.close();
});

describe('stage table on repeated runs', () => {
  it('medians across runs, intervals, and benchstat verdicts: pooled gains for real, its re-run is ~', async () => {
    const { id } = await uploadRepeatedRuns(app, undefined, { profiles: false });
    const c = (await app.inject({ url: `/api/comparisons/${id}` })).json();
    const [fast, pooled, rerun] = c.stageTable;
    for (const [row, name] of [
      [fast, 'fast-json'],
      [pooled, 'pooled'],
      [rerun, 'pooled-rerun'],
    ] as const) {
      expect(row).toMatchObject({ summary: 'median', loadTests: 5, aggregated: false });
      expect(row.runs.map((r: { rps: number }) => r.rps)).toEqual(PRINTED_RPS[name]);
      expect(row.rps).toBe(summarizeMedian(PRINTED_RPS[name]).median);
      // 5 runs: benchstat's "± ∞" (its interval needs 6); the upper order statistic is the largest run.
      expect(row.estimates.rps).toMatchObject({
        n: 5,
        median: row.rps,
        lo: null,
        hi: Math.max(...PRINTED_RPS[name]),
        ci: null,
      });
    }
    // benchstat fixtures/repeated-runs/benchstat/expected/fast-json--pooled.csv: 4087.94 → 9742.1, p=0.008 n=5
    expect(fast.rps).toBe(4087.94);
    expect(pooled.rps).toBe(9742.1);
    const gain = pooled.significance.vsPrevious.rps;
    expect(gain).toMatchObject({ status: 'significant', significant: true, nBase: 5, nTarget: 5 });
    expect(gain.p).toBeCloseTo(0.007936507936507936, 15);
    expect(gain.ratio).toBe(pooled.vsPrevious.rps);
    // P50 falls significantly too; P99's fall is within the noise (benchstat: ~ p=0.056).
    expect(pooled.significance.vsPrevious.p50.status).toBe('significant');
    expect(pooled.significance.vsPrevious.p99).toMatchObject({ status: 'no-change', significant: false });
    expect(pooled.significance.vsPrevious.p99.p).toBeCloseTo(0.056, 3);
    // wrk prints no P95: nothing to compare.
    expect(pooled.significance.vsPrevious.p95.status).toBe('missing');
    // The same code measured again: a 8 % lower median, and benchstat's ~ (p=0.151 n=5).
    const same = rerun.significance.vsPrevious.rps;
    expect(same).toMatchObject({ status: 'no-change', significant: false });
    expect(same.p).toBeCloseTo(mannWhitneyU(PRINTED_RPS.pooled, PRINTED_RPS['pooled-rerun']).p, 15);
    expect(same.p.toFixed(3)).toBe('0.151');
    // vs the baseline (fast-json) the re-run still gains significantly.
    expect(rerun.significance.vsBaseline.rps.status).toBe('significant');
    expect(fast.significance).toEqual({ vsPrevious: null, vsBaseline: null });
  });

  it('one run per stage: figures as printed, no noise estimate; three runs: "need more runs"', async () => {
    const one = await uploadRepeatedRuns(app, ['fast-json', 'pooled'], { profiles: false, runs: 1 });
    const t1 = (await app.inject({ url: `/api/comparisons/${one.id}` })).json().stageTable;
    expect(t1[1]).toMatchObject({ summary: 'single-run', estimates: null, rps: PRINTED_RPS.pooled[0] });
    expect(t1[1].significance.vsPrevious.rps).toMatchObject({ status: 'single-run', p: null, significant: false });
    const three = await uploadRepeatedRuns(app, ['fast-json', 'pooled'], { profiles: false, runs: 3 });
    const t3 = (await app.inject({ url: `/api/comparisons/${three.id}` })).json().stageTable;
    // every pooled run beats every fast-json run, yet 3+3 runs can never reach p ≤ 0.05
    expect(t3[1].significance.vsPrevious.rps).toMatchObject({ status: 'need-more-runs', runsNeeded: 4 });
    expect(t3[1].significance.vsPrevious.rps.p).toBeCloseTo(0.1, 12);
  });

  it('runs with different settings are aggregated, never tested', async () => {
    const { id, auth } = await createComparison(app, 'mixed');
    const st = await addStage(app, id, auth, 'mixed');
    // pooled and pooled-rerun hit different ports: different targets
    await upload(app, id, st, auth, [runFiles('pooled', 'wrk.txt')[0]!, runFiles('pooled-rerun', 'wrk.txt')[0]!]);
    const row = (await app.inject({ url: `/api/comparisons/${id}` })).json().stageTable[0];
    expect(row).toMatchObject({ summary: 'aggregate', aggregated: true, estimates: null, loadTests: 2 });
  });

  it('the OpenAPI document describes runs, estimates and verdicts', async () => {
    const doc = (await app.inject({ url: '/api/openapi.json' })).json();
    const item =
      doc.paths['/api/comparisons/{id}'].get.responses['200'].content['application/json'].schema.properties.stageTable
        .items.properties;
    expect(Object.keys(item)).toEqual(expect.arrayContaining(['runs', 'estimates', 'significance', 'summary']));
    expect(item.significance.properties.vsPrevious.properties.rps.properties.status.enum).toContain('need-more-runs');
  });
});
