/**
 * Analysis runs on worker threads: while a large diff is being computed, the server still answers
 * other requests at once.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { StagediffApp } from '../../src/app.ts';
import { addStage, createComparison, testApp, upload } from '../helpers/app.ts';
import { syntheticProfilePath } from '../../../scripts/testdata/index.ts';

let app: StagediffApp;
beforeAll(async () => {
  app = await testApp({ ANALYSIS_WORKERS: '1' });
});
afterAll(async () => app.close());

it('answers /healthz within 250 ms while a 1M-sample profile is parsed and its tree built', async () => {
  expect(app.ctx.pool.size).toBe(1);
  const { id, auth } = await createComparison(app, 'large');
  const a = await addStage(app, id, auth, 'a');
  expect((await upload(app, id, a, auth, [syntheticProfilePath()])).statusCode).toBe(200);
  const t0 = performance.now();
  const diff = app.inject({ url: `/api/comparisons/${id}/flamegraph?stage=${a}&sampleType=cpu&minFraction=0.001` });
  let done = false;
  void diff.then(() => (done = true));
  const probes: number[] = [];
  while (!done && performance.now() - t0 < 60_000) {
    const p0 = performance.now();
    expect((await app.inject({ url: '/healthz' })).statusCode).toBe(200);
    probes.push(performance.now() - p0);
    await new Promise((r) => setTimeout(r, 20));
  }
  const r = await diff;
  expect(r.statusCode).toBe(200);
  expect(r.json().total).toBeGreaterThan(0);
  // The parse and tree took seconds; every probe during them was answered promptly.
  expect(probes.length).toBeGreaterThan(3);
  expect(Math.max(...probes)).toBeLessThan(250);
}, 120_000);
