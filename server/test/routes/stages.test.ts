/**
 * POST /api/comparisons/:id/stages/:stageId/captures: how a stage was captured, attached by
 * `stagediff capture`. Needs the edit token, accepts only capture records, bounded in size, and the
 * records come back with the comparison.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { StagediffApp } from '../../src/app.ts';
import { addStage, createComparison, testApp } from '../helpers/app.ts';

let app: StagediffApp;
beforeAll(async () => {
  app = await testApp();
});
afterAll(async () => app.close());

const record = {
  schema: 'stagediff-capture/1',
  stage: 'pooled',
  command: 'stagediff capture --pprof http://127.0.0.1:6060 --stage pooled -- wrk -d10s http://127.0.0.1:8080/',
  runs: [{ run: 1, window: { start: '2026-01-01T00:00:01.000Z', end: '2026-01-01T00:00:06.000Z', seconds: 5 } }],
};

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
