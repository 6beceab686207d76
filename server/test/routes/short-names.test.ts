/**
 * The API names functions as `go tool pprof` prints them by default and keeps the names as written
 * beside them: a diff of real profiles of generic code (the demo's runs 2 and 3, whose JSON encoder
 * calls `reflect.TypeAssert[go.shape.interface { MarshalJSON() ([]uint8, error) }]`) lists the full
 * name of each shortened row in `fullNames` (the page's hover text), a sandwich found by either name
 * is the same, and the stage's pprof download writes the full names back.
 */
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StagediffApp } from '../../src/app.ts';
import type { Diff } from '../../src/api/views.ts';
import { addStage, createComparison, testApp, upload } from '../helpers/app.ts';
import { fixturesDir, samplePath } from '../helpers/paths.ts';

const run = (k: number) => `${fixturesDir}demo/baseline/run-${k}/cpu.pb.gz`;
const short = 'reflect.TypeAssert[go.shape.interface { MarshalJSON  }]';
const full = 'reflect.TypeAssert[go.shape.interface { MarshalJSON() ([]uint8, error) }]';
let app: StagediffApp;
let c: { id: string; a: string; b: string; before: string; after: string };

beforeAll(async () => {
  app = await testApp();
  const x = await createComparison(app, 'short names');
  const a = await addStage(app, x.id, x.auth, 'two');
  const b = await addStage(app, x.id, x.auth, 'three');
  const before = await addStage(app, x.id, x.auth, 'before');
  const after = await addStage(app, x.id, x.auth, 'after');
  expect((await upload(app, x.id, a, x.auth, [run(2)])).statusCode).toBe(200);
  expect((await upload(app, x.id, b, x.auth, [run(3)])).statusCode).toBe(200);
  expect(
    (await upload(app, x.id, before, x.auth, [samplePath('pprof/go_httpserver_before_cpu.pb.gz')])).statusCode,
  ).toBe(200);
  expect((await upload(app, x.id, after, x.auth, [samplePath('pprof/go_httpserver_after_cpu.pb.gz')])).statusCode).toBe(
    200,
  );
  c = { id: x.id, a, b, before, after };
});
afterAll(async () => {
  await app?.close();
});

describe('short names over the API', () => {
  it('a diff shows the short names and lists the full ones of its shortened rows', async () => {
    const r = await app.inject({ url: `/api/comparisons/${c.id}/diff?base=${c.a}&target=${c.b}&limit=1000` });
    expect(r.statusCode, r.body.slice(0, 300)).toBe(200);
    const d = r.json() as Diff;
    const names = new Set(d.top.map((x) => x.name));
    expect(names.has(short)).toBe(true);
    expect(names.has(full)).toBe(false);
    expect(d.fullNames?.[short]).toEqual([full]);
    for (const k of Object.keys(d.fullNames ?? {})) expect(names.has(k)).toBe(true);
  });

  it('the diff’s fullNames also cover its drawn tree (the diff flame graph’s hover)', async () => {
    const r = await app.inject({ url: `/api/comparisons/${c.id}/diff?base=${c.a}&target=${c.b}&limit=1` });
    const d = r.json() as Diff;
    expect(d.top.length).toBe(1);
    expect(d.fullNames?.[short]).toEqual([full]);
  });

  it('a stage’s flame graph and top table show short names and list the full ones', async () => {
    const f = await app.inject({ url: `/api/comparisons/${c.id}/flamegraph?stage=${c.b}&minFraction=0` });
    expect(f.statusCode, f.body.slice(0, 300)).toBe(200);
    const fg = f.json() as { fullNames?: Record<string, string[]> };
    expect(fg.fullNames?.[short]).toEqual([full]);
    const t = await app.inject({ url: `/api/comparisons/${c.id}/top?stage=${c.b}` });
    expect(t.statusCode, t.body.slice(0, 300)).toBe(200);
    const top = t.json() as { rows: { name: string }[]; fullNames?: Record<string, string[]> };
    expect(top.rows.some((x) => x.name === short)).toBe(true);
    expect(top.rows.some((x) => x.name === full)).toBe(false);
    expect(top.fullNames?.[short]).toEqual([full]);
    const plain = await app.inject({ url: `/api/comparisons/${c.id}/top?stage=${c.before}` });
    expect('fullNames' in (plain.json() as object)).toBe(false);
  });

  it('a diff of profiles without such names has no fullNames', async () => {
    const r = await app.inject({ url: `/api/comparisons/${c.id}/diff?base=${c.before}&target=${c.after}` });
    expect(r.statusCode).toBe(200);
    expect('fullNames' in (r.json() as object)).toBe(false);
  });

  it('a sandwich asked by the full name is the one asked by the short name', async () => {
    const get = async (fn: string) => {
      const r = await app.inject({
        url: `/api/comparisons/${c.id}/sandwich?stage=${c.b}&fn=${encodeURIComponent(fn)}`,
      });
      expect(r.statusCode, r.body.slice(0, 300)).toBe(200);
      return r.json() as { name: string; cum: number };
    };
    const byShort = await get(short);
    expect(byShort.cum).toBeGreaterThan(0);
    expect(await get(full)).toEqual(byShort);
  });

  it('the stage’s pprof download keeps the full name', async () => {
    const r = await app.inject({ url: `/api/comparisons/${c.id}/stages/${c.b}/profile.pb.gz?kind=cpu` });
    expect(r.statusCode).toBe(200);
    const bytes = gunzipSync(r.rawPayload).toString('latin1');
    expect(bytes.includes(full)).toBe(true);
  });
});
