/**
 * POST /api/comparisons/:id/stages/:stageId/captures: how a stage was captured, attached by
 * `stagediff capture`. Needs the edit token, accepts only capture records, bounded in size, and the
 * records come back with the comparison.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { StagediffApp } from '../../src/app.ts';
import { addStage, createComparison, testApp } from '../helpers/app.ts';
import { fixturesDir } from '../helpers/paths.ts';

let app: StagediffApp;
beforeAll(async () => {
  app = await testApp();
});
afterAll(async () => app.close());

/** A record `stagediff capture` wrote (fixtures/demo). */
const record = JSON.parse(readFileSync(join(fixturesDir, 'demo/baseline/run-1/capture.json'), 'utf8'));

it('appends a capture record to a stage, with the edit token only', async () => {
  const { id, auth } = await createComparison(app, 'captures');
  const st = await addStage(app, id, auth, 'pooled');
  const url = `/api/comparisons/${id}/stages/${st}/captures`;
  expect((await app.inject({ method: 'POST', url, payload: record })).statusCode).toBe(401);
  expect(
    (await app.inject({ method: 'POST', url, headers: { authorization: 'Bearer wrong' }, payload: record })).statusCode,
  ).toBe(403);
  const ok = await app.inject({ method: 'POST', url, headers: auth, payload: record });
  expect(ok.statusCode).toBe(201);
  expect(ok.json().captures).toEqual([record]);
  const c = (await app.inject({ url: `/api/comparisons/${id}` })).json();
  expect(c.stages[0].captures).toEqual([record]);
});

it('refuses what is not a capture record, and records over the size limit', async () => {
  const { id, auth } = await createComparison(app, 'bad captures');
  const st = await addStage(app, id, auth, 's');
  const url = `/api/comparisons/${id}/stages/${st}/captures`;
  const notRecord = await app.inject({ method: 'POST', url, headers: auth, payload: { schema: 'other', runs: [] } });
  expect(notRecord.statusCode).toBe(400);
  const huge = await app.inject({
    method: 'POST',
    url,
    headers: auth,
    payload: { ...record, padding: 'x'.repeat(300 * 1024) },
  });
  expect(huge.statusCode).toBe(413);
  const missing = await app.inject({
    method: 'POST',
    url: `/api/comparisons/${id}/stages/nope/captures`,
    headers: auth,
    payload: record,
  });
  expect(missing.statusCode).toBe(404);
  expect((await app.inject({ url: `/api/comparisons/${id}` })).json().stages[0].captures).toEqual([]);
});

it('checks the whole record: runs:[{}] is a 400 naming what is missing, and nothing is stored', async () => {
  const { id, auth } = await createComparison(app, 'partial captures');
  const st = await addStage(app, id, auth, 's');
  const url = `/api/comparisons/${id}/stages/${st}/captures`;
  const post = (payload: unknown) => app.inject({ method: 'POST', url, headers: auth, payload: payload as object });
  const empty = await post({ ...record, runs: [{}] });
  expect(empty.statusCode).toBe(400);
  expect(empty.json().error.message).toMatch(/^body\/runs\/0 must have required property '\w+'/);
  const minimal = await post({ schema: 'stagediff-capture/1', runs: [{}] });
  expect(minimal.statusCode).toBe(400);
  expect(minimal.json().error.message).toMatch(/must have required property/);
  // A wrong type deep inside: a run's machine without its load averages.
  const run = record.runs[0];
  const bad = await post({ ...record, runs: [{ ...run, machine: { ...run.machine, loadAverage: 'high' } }] });
  expect(bad.statusCode).toBe(400);
  expect(bad.json().error.message).toContain('body/runs/0/machine/loadAverage');
  expect((await app.inject({ url: `/api/comparisons/${id}` })).json().stages[0].captures).toEqual([]);
});

it('answers 400 for a record nested past the bound (400 levels), never a 500', async () => {
  const { id, auth } = await createComparison(app, 'deep captures');
  const st = await addStage(app, id, auth, 's');
  const url = `/api/comparisons/${id}/stages/${st}/captures`;
  for (const depth of [1_000, 100_000]) {
    // An extra field (allowed, for later CLIs) holding a deep array: well under the byte bound.
    const deep = `${JSON.stringify({ ...record, extra: null }).slice(0, -5)}${'['.repeat(depth)}${']'.repeat(depth)}}`;
    const r = await app.inject({
      method: 'POST',
      url,
      headers: { ...auth, 'content-type': 'application/json' },
      payload: deep,
    });
    expect(r.statusCode, r.body).toBe(400);
    expect(r.json().error.message).toMatch(/nested deeper than 400/);
  }
  // 300 levels is within the bound.
  const ok = `${JSON.stringify({ ...record, extra: null }).slice(0, -5)}${'['.repeat(300)}${']'.repeat(300)}}`;
  const r = await app.inject({
    method: 'POST',
    url,
    headers: { ...auth, 'content-type': 'application/json' },
    payload: ok,
  });
  expect(r.statusCode, r.body).toBe(201);
});
