/**
 * Change points on a real 20-stage series of the demo service (fixtures/demo-series, recorded by
 * fixtures/demo-service/series.sh): one wrk run per stage, the fast-json version for stages 1–10 and the
 * pooled version (upstream connections reused) for 11–20. The stage table finds the QPS change point at
 * stage 11, for the better, and every figure's change points are Apache Otava's on the same series
 * (fixtures/demo-series/otava.json, recorded by scripts/demo-series-otava.py): same stages, same p-values
 * and means, the same decision where otava finds none.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StagediffApp } from '../../src/app.ts';
import { addStage, createComparison, testApp, upload } from '../helpers/app.ts';
import { fixturesDir } from '../helpers/paths.ts';

const dir = join(fixturesDir, 'demo-series');
/** The two stages around the QPS change point in this recording (see fixtures/demo-series/README.md). */
const BOUNDARY: readonly [string, string] = ['10-fast-json', '11-pooled'];
interface OtavaPoint {
  index: number;
  stage: string;
  pValue: number;
  meanBefore: number;
  meanAfter: number;
  forwardChangePercent: number;
}
const otava = JSON.parse(readFileSync(join(dir, 'otava.json'), 'utf8')) as {
  tool: string;
  stages: string[];
  series: { rps: number[]; p99: number[] };
  changePoints: { rps: OtavaPoint[]; p99: OtavaPoint[] };
};

interface Mark {
  figure: string;
  stageName: string;
  previousStageName: string;
  pValue: number;
  meanBefore: number;
  meanAfter: number;
  changePercent: number;
  direction: string;
}

let app: StagediffApp;
let id: string;
let table: { rows: { name: string; figures: Record<string, { median: number } | null> }[]; changePoints: Mark[] };
beforeAll(async () => {
  app = await testApp();
  const c = await createComparison(app, 'twenty stages of the demo service');
  id = c.id;
  for (const stage of otava.stages) {
    const st = await addStage(app, id, c.auth, stage);
    const r = await upload(app, id, st, c.auth, [join(dir, stage, 'wrk.txt')]);
    expect(r.statusCode, r.body).toBe(200);
  }
  table = (await app.inject({ url: `/api/comparisons/${id}/stage-table` })).json();
}, 300_000);
afterAll(async () => {
  await app?.close();
});

/** Relative difference (p-values and means are computed the same way, summed in the same order). */
const rel = (got: number, want: number) => Math.abs(got - want) / Math.abs(want);

describe('change points of the 20-stage demo series', () => {
  it('the recording is twenty stages, ten of each version, by apache-otava 0.8.0', () => {
    expect(otava.tool).toBe('apache-otava 0.8.0');
    expect(otava.stages).toHaveLength(20);
    expect(otava.stages.filter((s) => s.endsWith('-fast-json'))).toEqual(otava.stages.slice(0, 10));
    expect(otava.stages.filter((s) => s.endsWith('-pooled'))).toEqual(otava.stages.slice(10));
  });

  it("the stage table's series is the one otava read (wrk's printed figures, stage by stage)", () => {
    expect(table.rows.map((r) => r.name)).toEqual(otava.stages);
    expect(table.rows.map((r) => r.figures.rps?.median)).toEqual(otava.series.rps);
    table.rows.forEach((r, i) => {
      expect(rel(r.figures.p99!.median, otava.series.p99[i]!)).toBeLessThan(1e-12);
    });
  });

  it('QPS has one change point, at stage 11 where the pooled version took over, for the better (as otava says)', () => {
    const rps = table.changePoints.filter((m) => m.figure === 'rps');
    expect(BOUNDARY[1]).toBe('11-pooled');
    expect(otava.changePoints.rps.map((c) => c.stage)).toEqual([BOUNDARY[1]]);
    expect(rps.map((m) => [m.previousStageName, m.stageName, m.direction])).toEqual([[...BOUNDARY, 'better']]);
    expect(rps[0]!.changePercent).toBeGreaterThan(100);
  });

  for (const figure of ['rps', 'p99'] as const) {
    it(`${figure}: the same change points as otava (stages, p-values, means)`, () => {
      const ours = table.changePoints.filter((m) => m.figure === figure);
      const theirs = otava.changePoints[figure];
      expect(ours.map((m) => m.stageName)).toEqual(theirs.map((c) => c.stage));
      ours.forEach((m, i) => {
        const o = theirs[i]!;
        expect(m.previousStageName).toBe(otava.stages[o.index - 1]);
        expect(rel(m.pValue, o.pValue)).toBeLessThan(1e-9);
        expect(m.pValue).toBeLessThanOrEqual(0.001);
        expect(rel(m.meanBefore, o.meanBefore)).toBeLessThan(1e-12);
        expect(rel(m.meanAfter, o.meanAfter)).toBeLessThan(1e-12);
        expect(m.changePercent).toBeCloseTo(o.forwardChangePercent, 9);
      });
    });
  }

  it('the pair around the change says so in /changes; a pair on one side does not', async () => {
    const get = async (b: string, t: string) =>
      (await app.inject({ url: `/api/comparisons/${id}/changes?base=${b}&target=${t}&functions=off` })).json();
    const around = await get(...BOUNDARY);
    expect(around.changePoints.map((m: Mark) => m.figure)).toContain('rps');
    expect(around.sentences.join('\n')).toContain(
      `Change point: QPS shifts for the better between ${BOUNDARY[0]} and ${BOUNDARY[1]}`,
    );
    // The whole series' ends straddle it too; two stages of one version straddle none.
    expect((await get('01-fast-json', '20-pooled')).changePoints).toEqual(table.changePoints);
    expect((await get('02-fast-json', '09-fast-json')).changePoints).toBeUndefined();
    expect((await get('11-pooled', '20-pooled')).changePoints).toBeUndefined();
  });
});
