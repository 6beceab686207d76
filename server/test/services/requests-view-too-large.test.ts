/**
 * GET …/requests when the traces had more goroutine states than the request analysis keeps
 * (TRACE_MAX_REQUEST_STATES, read from the environment when the first trace is parsed: set here before
 * any): the typed `too-large` status naming the stage and the file, never figures from half a trace.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StagediffApp } from '../../src/app.ts';
import type { RequestsView } from '../../src/api/requests.ts';
import { addStage, createComparison, testApp, upload } from '../helpers/app.ts';
import { fixturesDir } from '../helpers/paths.ts';

describe('the Requests view of traces too large for the request analysis', () => {
  let app: StagediffApp;
  const before = process.env.TRACE_MAX_REQUEST_STATES;
  beforeAll(async () => {
    process.env.TRACE_MAX_REQUEST_STATES = '1000';
    app = await testApp({ TRACE_MAX_REQUEST_STATES: '1000' });
  });
  afterAll(async () => {
    await app.close();
    if (before === undefined) delete process.env.TRACE_MAX_REQUEST_STATES;
    else process.env.TRACE_MAX_REQUEST_STATES = before;
  });

  it('answers too-large, naming the stage, the file and the setting', async () => {
    const c = await createComparison(app);
    const a = await addStage(app, c.id, c.auth, 'a');
    const b = await addStage(app, c.id, c.auth, 'b');
    expect((await upload(app, c.id, a, c.auth, [`${fixturesDir}demo/pooled/run-1/trace.out`])).statusCode).toBe(200);
    expect((await upload(app, c.id, b, c.auth, [`${fixturesDir}demo/baseline/run-1/trace.out`])).statusCode).toBe(200);
    const r = await app.inject({ url: `/api/comparisons/${c.id}/requests?base=a&target=b` });
    expect(r.statusCode).toBe(200);
    const v = r.json() as RequestsView;
    expect(v.status).toBe('too-large');
    expect(v.reason).toBe(
      'stage "a": trace.out is too large for the request analysis (more than 1000 goroutine states (TRACE_MAX_REQUEST_STATES))',
    );
    expect(v.base.traces.map((t) => t.status)).toEqual(['too-large']);
    expect(v.target.traces.map((t) => t.status)).toEqual(['too-large']);
    expect(v.base.requests).toBe(0);
    expect(v.edgesNanos).toEqual([]);
    expect(v.figures).toEqual([]);
  }, 60_000);
});
