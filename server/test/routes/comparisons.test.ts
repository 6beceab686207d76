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
  const table = async (id: string) => (await app.inject({ url: `/api/comparisons/${id}/stage-table` })).json().rows;

  it('medians across runs, intervals, and benchstat verdicts: pooled gains for real, its re-run is ~', async () => {
    const { id } = await uploadRepeatedRuns(app, undefined, { profiles: false });
    const [fast, pooled, rerun] = await table(id);
    for (const [row, name] of [
      [fast, 'fast-json'],
      [pooled, 'pooled'],
      [rerun, 'pooled-rerun'],
    ] as const) {
      expect(row).toMatchObject({ summary: 'median', loadTests: 5 });
      expect(row.runs.map((r: { rps: number }) => r.rps)).toEqual(PRINTED_RPS[name]);
      // 5 runs: benchstat's "± ∞" (its interval needs 6); the upper order statistic is the largest run.
      expect(row.figures.rps).toMatchObject({
        n: 5,
        values: PRINTED_RPS[name],
        median: summarizeMedian(PRINTED_RPS[name]).median,
        lo: null,
        hi: Math.max(...PRINTED_RPS[name]),
        ci: null,
      });
    }
    // benchstat fixtures/repeated-runs/benchstat/expected/fast-json--pooled.csv: 4087.94 → 9742.1, p=0.008 n=5
    expect(fast.figures.rps.median).toBe(4087.94);
    expect(pooled.figures.rps.median).toBe(9742.1);
    const gain = pooled.vsPrevious.rps;
    expect(gain).toMatchObject({ status: 'significant', nBase: 5, nTarget: 5, minP: 2 / 252 });
    expect(gain.p).toBeCloseTo(0.007936507936507936, 15);
    expect(gain.ratio).toBe(9742.1 / 4087.94);
    // P50 falls significantly too; P99's fall is within the noise (benchstat: ~ p=0.056).
    expect(pooled.vsPrevious.p50.status).toBe('significant');
    expect(pooled.vsPrevious.p99).toMatchObject({ status: 'no-change' });
    expect(pooled.vsPrevious.p99.p).toBeCloseTo(0.056, 3);
    // wrk prints no P95: nothing to compare.
    expect(pooled.vsPrevious.p95.status).toBe('missing');
    // No profile: no CPU per request.
    expect(pooled.figures.cpuPerRequest).toBeNull();
    expect(pooled.vsPrevious.cpuPerRequest.status).toBe('missing');
    // The same code measured again: a 8 % lower median, and benchstat's ~ (p=0.151 n=5).
    const same = rerun.vsPrevious.rps;
    expect(same).toMatchObject({ status: 'no-change' });
    expect(same.p).toBeCloseTo(mannWhitneyU(PRINTED_RPS.pooled, PRINTED_RPS['pooled-rerun']).p, 15);
    expect(same.p.toFixed(3)).toBe('0.151');
    // vs the baseline (fast-json) the re-run still gains significantly.
    expect(rerun.vsBaseline.rps.status).toBe('significant');
    expect([fast.vsPrevious, fast.vsBaseline]).toEqual([null, null]);
  });

  it('one run per stage: figures as printed, no noise estimate; three runs: too few to test', async () => {
    const one = await uploadRepeatedRuns(app, ['fast-json', 'pooled'], { profiles: false, runs: 1 });
    const t1 = await table(one.id);
    expect(t1[1]).toMatchObject({ summary: 'single-run' });
    expect(t1[1].figures.rps).toMatchObject({ n: 1, median: PRINTED_RPS.pooled[0], ci: null });
    expect(t1[1].vsPrevious.rps).toMatchObject({ status: 'single-run', p: null });
    const three = await uploadRepeatedRuns(app, ['fast-json', 'pooled'], { profiles: false, runs: 3 });
    const t3 = await table(three.id);
    // every pooled run beats every fast-json run, yet 3+3 runs can never reach p ≤ 0.05
    expect(t3[1].vsPrevious.rps).toMatchObject({ status: 'too-few-runs', runsNeeded: 4, minP: 0.1 });
    expect(t3[1].vsPrevious.rps.p).toBeCloseTo(0.1, 12);
  });

  it('runs with different settings are aggregated, never tested as repeats', async () => {
    const { id, auth } = await createComparison(app, 'mixed');
    const st = await addStage(app, id, auth, 'mixed');
    // pooled and pooled-rerun hit different ports: different targets
    await upload(app, id, st, auth, [runFiles('pooled', 'wrk.txt')[0]!, runFiles('pooled-rerun', 'wrk.txt')[0]!]);
    const row = (await table(id))[0];
    expect(row).toMatchObject({ summary: 'aggregate', loadTests: 2 });
    // One request-weighted value: the row stands alone, like a single run.
    expect(row.figures.rps.n).toBe(1);
  });

  it('the OpenAPI document describes the stage table: figures, runs and verdicts', async () => {
    const doc = (await app.inject({ url: '/api/openapi.json' })).json();
    const rows =
      doc.paths['/api/comparisons/{id}/stage-table'].get.responses['200'].content['application/json'].schema.properties
        .rows.items.properties;
    expect(Object.keys(rows)).toEqual(expect.arrayContaining(['runs', 'figures', 'vsPrevious', 'summary']));
    const status = JSON.stringify(rows.vsPrevious);
    for (const s of ['significant', 'no-change', 'too-few-runs', 'single-run', 'missing']) expect(status).toContain(s);
    expect(Object.keys(rows.figures.properties)).toContain('cpuPerRequest');
  });
});
