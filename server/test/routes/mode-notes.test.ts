/**
 * A deletion that changes a pair's mode says so: deleting the load test a profile was paired with (by its
 * capture record, or by the run its name says) turns the pair from per request to absolute, and GET
 * …/changes names the profile, the run it lost and the mode the pair reads in now.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StagediffApp } from '../../src/app.ts';
import { addStage, createComparison, testApp, upload } from '../helpers/app.ts';
import { fixturesDir } from '../helpers/paths.ts';

let app: StagediffApp;
beforeAll(async () => {
  app = await testApp();
});
afterAll(async () => app.close());

const DEMO = `${fixturesDir}demo/`;

/** Two stages of the demo's first three runs, named `name(stage, k, file)`, with the runs' capture records when `records`. */
async function pair(name: (k: number, file: string) => string, records: boolean) {
  const { id, auth } = await createComparison(app, 'mode notes');
  const stages: string[] = [];
  for (const stage of ['baseline', 'fast-json']) {
    const st = await addStage(app, id, auth, stage);
    stages.push(st);
    for (const k of [1, 2, 3]) {
      const dir = `${DEMO}${stage}/run-${k}/`;
      const r = await upload(
        app,
        id,
        st,
        auth,
        [`${dir}cpu.pb.gz`, `${dir}wrk.txt`],
        [name(k, 'cpu.pb.gz'), name(k, 'wrk.txt')],
      );
      expect(r.statusCode, r.body).toBe(200);
      if (records) {
        const c = await app.inject({
          method: 'POST',
          url: `/api/comparisons/${id}/stages/${st}/captures`,
          headers: auth,
          payload: JSON.parse(readFileSync(`${dir}capture.json`, 'utf8')),
        });
        expect(c.statusCode, c.body).toBe(201);
      }
    }
  }
  return { id, auth, base: stages[0]!, target: stages[1]! };
}

async function changes(id: string, base: string, target: string) {
  const r = await app.inject({ url: `/api/comparisons/${id}/changes?base=${base}&target=${target}&functions=off` });
  expect(r.statusCode, r.body).toBe(200);
  return r.json();
}

async function diffMode(id: string, base: string, target: string): Promise<string> {
  const r = await app.inject({ url: `/api/comparisons/${id}/diff?base=${base}&target=${target}&limit=1` });
  expect(r.statusCode, r.body).toBe(200);
  return r.json().mode;
}

/** Deletes the artifact of `stage` named `filename`. */
async function remove(id: string, auth: Record<string, string>, stage: string, filename: string) {
  const c = (await app.inject({ url: `/api/comparisons/${id}` })).json();
  const a = c.stages
    .find((s: { id: string }) => s.id === stage)
    .artifacts.find((x: { filename: string }) => x.filename === filename);
  const r = await app.inject({ method: 'DELETE', url: `/api/comparisons/${id}/artifacts/${a.id}`, headers: auth });
  expect(r.statusCode).toBe(204);
}

describe('a deletion that changes a pair’s mode', () => {
  it('deleting the load test a capture record paired a profile with: a run-deleted note, the pair absolute', async () => {
    const { id, auth, base, target } = await pair((k, f) => `run-${k}-${f}`, true);
    const before = await changes(id, base, target);
    expect(before.modeNotes).toEqual([]);
    expect(before.perRequest.target.measured).toBe(true);
    expect(await diffMode(id, base, target)).toBe('per-request');

    await remove(id, auth, target, 'run-2-wrk.txt');
    const after = await changes(id, base, target);
    expect(after.perRequest.target.measured).toBe(false);
    expect(after.modeNotes).toHaveLength(1);
    expect(after.modeNotes[0]).toMatchObject({
      kind: 'run-deleted',
      side: 'target',
      stage: 'fast-json',
      profile: { filename: 'run-2-cpu.pb.gz' },
      run: 'wrk.txt',
      mode: 'absolute',
    });
    expect(after.modeNotes[0].message).toMatch(
      /^fast-json: run-2-cpu\.pb\.gz was captured with wrk\.txt, which was deleted from the stage: .*absolute/,
    );
    expect(await diffMode(id, base, target)).toBe('absolute');
  });

  it('deleting the run a profile’s name points at: a run-missing note, the pair absolute', async () => {
    const { id, auth, base, target } = await pair((k, f) => f.replace('.', `-${k}.`), false);
    const before = await changes(id, base, target);
    expect(before.modeNotes).toEqual([]);
    expect(before.perRequest.base.profiles.map((p: { run: { filename: string } }) => p.run.filename).sort()).toEqual([
      'wrk-1.txt',
      'wrk-2.txt',
      'wrk-3.txt',
    ]);
    expect(await diffMode(id, base, target)).toBe('per-request');

    await remove(id, auth, base, 'wrk-3.txt');
    const after = await changes(id, base, target);
    expect(after.modeNotes).toEqual([
      expect.objectContaining({
        kind: 'run-missing',
        side: 'base',
        stage: 'baseline',
        profile: expect.objectContaining({ filename: 'cpu-3.pb.gz' }),
        run: 'run 3',
        mode: 'absolute',
      }),
    ]);
    expect(await diffMode(id, base, target)).toBe('absolute');
    // A stage of profiles alone (no load test named by run) gets no such note.
    const { id: id2, auth: auth2 } = await createComparison(app, 'profiles only');
    const s1 = await addStage(app, id2, auth2, 'one');
    const s2 = await addStage(app, id2, auth2, 'two');
    for (const [st, stage] of [
      [s1, 'baseline'],
      [s2, 'fast-json'],
    ] as const)
      expect((await upload(app, id2, st, auth2, [`${DEMO}${stage}/run-1/cpu.pb.gz`], ['cpu-1.pb.gz'])).statusCode).toBe(
        200,
      );
    expect((await changes(id2, s1, s2)).modeNotes).toEqual([]);
  });
});
