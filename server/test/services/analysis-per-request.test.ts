/**
 * Per-request figures count the requests a stage served during the profile's window: from a load
 * test's own timeline when the run records absolute times (vegeta, k6), else rps × duration.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { StagediffApp } from '../../src/app.ts';
import { profileFromText } from '../../src/model/profile-builder.ts';
import { fixturesDir } from '../helpers/paths.ts';
import { addStage, createComparison, testApp, upload } from '../helpers/app.ts';

const log = `${fixturesDir}demo/baseline/fixed-rate/vegeta.jsonl`;
let app: StagediffApp;
beforeAll(async () => {
  app = await testApp();
});
afterAll(async () => app.close());

it('counts the requests that started inside the profile window, from the run timeline', async () => {
  const { id, auth } = await createComparison(app, 'window');
  const st = await addStage(app, id, auth, 's');
  expect((await upload(app, id, st, auth, [log])).statusCode).toBe(200);
  const tree = (await app.ctx.store.getComparisonTree(id))!;
  // Independent count from the raw log: requests whose start falls in [first + 1 s, first + 4 s) (the run lasts 4 s).
  const starts = readFileSync(log, 'utf8')
    .trim()
    .split('\n')
    .map((l) => epochMs(JSON.parse(l).timestamp as string));
  const first = Math.min(...starts);
  const inWindow = starts.filter((t) => t >= first + 1000 && t < first + 4000).length;
  expect(inWindow).toBeGreaterThan(1000);
  const p = { ...profileFromText('main;work 1'), timeNanos: (first + 1000) * 1e6, durationNanos: 3e9 };
  const r = await app.ctx.analysis.requestsDuring(tree, st, p);
  expect(r.method).toMatch(/timeline of vegeta-json within the profile's window/);
  expect(Math.abs(r.requests - inWindow)).toBeLessThanOrEqual(1);
  // A window outside the run falls back to rps × duration, and says so.
  const outside = { ...p, timeNanos: (first - 3_600_000) * 1e6 };
  const f = await app.ctx.analysis.requestsDuring(tree, st, outside);
  expect(f.method).toMatch(/stage rps .* × profile duration/);
});

/** RFC 3339 with nanoseconds (as vegeta writes it) → epoch milliseconds, keeping sub-ms digits. */
function epochMs(ts: string): number {
  const m = /^(.*T\d\d:\d\d:\d\d)(?:\.(\d+))?(Z|[+-]\d\d:\d\d)$/.exec(ts)!;
  const frac = (m[2] ?? '').padEnd(9, '0');
  return Date.parse(`${m[1]}${m[3]}`) + Number(frac) / 1e6;
}
