/**
 * A file of several runs (a real shell loop appending wrk's and hey's reports to one file) uploaded
 * to a stage: the upload says how many runs it read, and the stage table counts each as a run, with
 * its own figures, exactly as a stage of one file per run would.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StagediffApp } from '../../src/app.ts';
import { addStage, createComparison, testApp, upload } from '../helpers/app.ts';
import { fixturesDir } from '../helpers/paths.ts';

const wrkRuns = `${fixturesDir}loadtests/wrk/three-runs.txt`;
// what wrk printed for each of the three runs
const PRINTED = [19925.47, 18360.0, 21217.19];

let app: StagediffApp;
beforeAll(async () => {
  app = await testApp();
});
afterAll(async () => {
  await app.close();
});

describe('a file of several runs in a stage', () => {
  it('the upload says how many runs it read; the stage table counts each run as a run', async () => {
    const { id, auth } = await createComparison(app);
    const st = await addStage(app, id, auth, 'loop');
    const res = await upload(app, id, st, auth, [wrkRuns]);
    expect(res.statusCode).toBe(200);
    const [r] = res.json().results;
    expect(r.ok).toBe(true);
    expect(r.runs).toBe(3);
    expect(r.note).toBe('3 runs read from one file');
    expect(r.artifact.summary.runs.map((s: { rps: number }) => s.rps)).toEqual(PRINTED);

    const row = (await app.inject({ url: `/api/comparisons/${id}/stage-table` })).json().rows[0];
    expect(row.loadTests).toBe(3);
    expect(row.summary).toBe('median');
    expect(row.runs.map((x: { rps: number }) => x.rps)).toEqual(PRINTED);
    expect(row.runs.map((x: { runInFile: number }) => x.runInFile)).toEqual([1, 2, 3]);
    expect(row.figures.rps).toMatchObject({ n: 3, median: 19925.47, values: PRINTED });
    expect(row.source.artifactIds).toEqual([r.artifact.id]);

    // each run its own time window in the timelines, in the file's order
    const tl = (await app.inject({ url: `/api/comparisons/${id}/timeline` })).json();
    const runs = tl.stages[0].runs;
    expect(runs.map((x: { runInFile: number }) => x.runInFile)).toEqual([1, 2, 3]);
    expect(runs.map((x: { summary: { rps: number } }) => x.summary.rps)).toEqual(PRINTED);
  });

  it('a file of one run says nothing of runs and counts once', async () => {
    const { id, auth } = await createComparison(app);
    const st = await addStage(app, id, auth, 'one');
    const res = await upload(app, id, st, auth, [`${fixturesDir}loadtests/wrk/errors-latency.txt`]);
    const [r] = res.json().results;
    expect(r.runs).toBe(1);
    expect(r.note).toBeUndefined();
    const row = (await app.inject({ url: `/api/comparisons/${id}/stage-table` })).json().rows[0];
    expect(row.loadTests).toBe(1);
    expect(row.runs[0].runInFile).toBeNull();
  });
});
