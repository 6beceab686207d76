/**
 * One unit on every tab: a stage's flamegraph and sandwich read per request wherever its profiles have
 * their runs (the diff's divisor), as recorded with mode=absolute, and say which.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StagediffApp } from '../../src/app.ts';
import { flatCum, percentageBase } from '../../src/analysis/flat-cum.ts';
import { parsePprof } from '../../src/ingest/pprof/index.ts';
import { seedDemo } from '../../src/services/seed.ts';
import { addStage, createComparison, testApp, upload } from '../helpers/app.ts';
import { fixturesDir } from '../helpers/paths.ts';

const SERVE = 'main.(*service).serveOrders';

/**
 * A function the trajectory's top 100 (by flat) holds in every stage: the system-call entry, where the demo
 * spends most of its CPU at every stage.
 */
const SYSCALL = 'internal/runtime/syscall/linux.Syscall6';

/** The demo baseline's six runs, read here from the files: each CPU profile's total, cum of `fn` and requests. */
function baselineRuns(fn = SERVE) {
  return [1, 2, 3, 4, 5, 6].map((k) => {
    const dir = `${fixturesDir}demo/baseline/run-${k}/`;
    const p = parsePprof(readFileSync(`${dir}cpu.pb.gz`));
    const idx = p.sampleTypes.findIndex((t) => t.type === 'cpu');
    // wrk's own printed rate times the profile's window: the requests served while it was taken.
    const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(readFileSync(`${dir}wrk.txt`, 'utf8'))![1]);
    return {
      total: percentageBase(p, idx),
      cum: flatCum(p, idx).find((r) => r.name === fn)?.cum ?? 0,
      requests: rps * (p.durationNanos / 1e9),
    };
  });
}

const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

describe('flamegraph and sandwich units', () => {
  let app: StagediffApp;
  beforeAll(async () => {
    app = await testApp();
    await seedDemo(app.ctx);
  });
  afterAll(async () => app.close());

  const get = async (path: string) => {
    const r = await app.inject({ url: `/api/comparisons/${path}` });
    return { status: r.statusCode, body: r.json() };
  };

  it("the demo's flamegraph reads per request by default: the files' total over their runs' requests", async () => {
    const runs = baselineRuns();
    const requests = sum(runs.map((r) => r.requests));
    const f = (await get('demo/flamegraph?stage=baseline&kind=cpu')).body;
    expect(f.mode).toBe('per-request');
    expect(f.unit).toBe('nanoseconds/request');
    expect(f.modeReason).toMatch(/own load run/);
    expect(f.perRequest.measured).toBe(true);
    expect(f.perRequest.profiles).toHaveLength(6);
    expect(f.perRequest.requests / requests).toBeCloseTo(1, 12);
    expect(f.total / (sum(runs.map((r) => r.total)) / requests)).toBeCloseTo(1, 12);
    // The root frame is the same figure.
    expect(f.tree.value / f.total).toBeCloseTo(1, 12);
    // Each profile's own figure: runs 5 and 6 read what their capture records state.
    const own = new Map<string, number>(
      f.perRequest.profiles.map((p: { filename: string; total: number; requests: number }) => [
        p.filename,
        p.total / p.requests / 1000,
      ]),
    );
    for (const k of [5, 6]) {
      const rec = JSON.parse(readFileSync(join(fixturesDir, 'demo', 'baseline', `run-${k}`, 'capture.json'), 'utf8'));
      expect(own.get(`run-${k}-cpu.pb.gz`)!.toFixed(1)).toBe(rec.runs[0].summary.cpuMicrosPerRequest.toFixed(1));
    }
    for (const p of f.perRequest.profiles) expect(p.run.filename).toBe(p.filename.replace('cpu.pb.gz', 'wrk.txt'));
  });

  it('mode=absolute is the profile as recorded (go tool pprof), and says so', async () => {
    const runs = baselineRuns();
    const a = (await get('demo/flamegraph?stage=baseline&kind=cpu&mode=absolute')).body;
    expect(a).toMatchObject({ mode: 'absolute', modeReason: null, perRequest: null, unit: 'nanoseconds' });
    expect(a.total).toBe(sum(runs.map((r) => r.total)));
    const s = (await get('demo/flamegraph?stage=baseline&kind=cpu&mode=share')).body;
    expect(s.unit).toBe('fraction');
    expect(s.total).toBe(1);
  });

  it("the demo's sandwich reads per request: the function's cum over the runs' requests", async () => {
    const runs = baselineRuns();
    const requests = sum(runs.map((r) => r.requests));
    const fn = encodeURIComponent(SERVE);
    const s = (await get(`demo/sandwich?stage=baseline&kind=cpu&fn=${fn}`)).body;
    expect(s.mode).toBe('per-request');
    expect(s.unit).toBe('nanoseconds/request');
    const cum = sum(runs.map((r) => r.cum));
    expect(cum).toBeGreaterThan(0);
    expect(s.cum / (cum / requests)).toBeCloseTo(1, 12);
    expect(s.callees.value / s.cum).toBeCloseTo(1, 12);
    const a = (await get(`demo/sandwich?stage=baseline&kind=cpu&fn=${fn}&mode=absolute`)).body;
    expect(a.mode).toBe('absolute');
    expect(a.cum).toBe(cum);
    expect(s.cum * s.perRequest.requests).toBeCloseTo(a.cum, 0);
  });

  it("the demo's trajectory reads per request, each stage over its own runs, the spread per profile too", async () => {
    const runs = baselineRuns(SYSCALL);
    const t = (await get('demo/trajectory?kind=cpu&n=100')).body;
    expect(t.mode).toBe('per-request');
    expect(t.unit).toBe('nanoseconds/request');
    expect(t.stages.map((s: { name: string }) => s.name)).toEqual(['baseline', 'fast-json', 'pooled', 'async-log']);
    expect(t.stages[0].requests / sum(runs.map((r) => r.requests))).toBeCloseTo(1, 12);
    const a = (await get('demo/trajectory?kind=cpu&n=100&mode=absolute')).body;
    expect(a.mode).toBe('absolute');
    expect(a.stages.every((s: { requests: number | null }) => s.requests === null)).toBe(true);
    const serve = t.functions.find((f: { name: string }) => f.name === SYSCALL);
    const serveAbs = a.functions.find((f: { name: string }) => f.name === SYSCALL);
    expect(serve).toBeTruthy();
    for (const [i, p] of serve.points.entries())
      expect((p.cum * t.stages[i].requests) / serveAbs.points[i].cum).toBeCloseTo(1, 12);
    // The baseline's six profiles, each its cum over its own run's requests.
    const own = runs.map((r) => r.cum / r.requests);
    expect(serve.points[0].spread.n).toBe(6);
    expect(serve.points[0].spread.min / Math.min(...own)).toBeCloseTo(1, 9);
    expect(serve.points[0].spread.max / Math.max(...own)).toBeCloseTo(1, 9);
    // As recorded, the spread stays the profiles' shares.
    expect(serveAbs.points[0].spread.max).toBeLessThanOrEqual(1);
  });

  it('a stage without load runs reads as recorded, and refuses per-request naming mode', async () => {
    const { id, auth } = await createComparison(app, 'no runs');
    const st = await addStage(app, id, auth, 'profile only');
    const r = await upload(app, id, st, auth, [`${fixturesDir}reference/pprof/go_bench_encoding_json_cpu.pb.gz`]);
    expect(r.statusCode, r.body).toBe(200);
    const f = (await get(`${id}/flamegraph?stage=${st}`)).body;
    expect(f.mode).toBe('absolute');
    expect(f.modeReason).toMatch(/not every profile of the stage has its own load run/);
    const refused = await get(`${id}/flamegraph?stage=${st}&mode=per-request`);
    expect(refused.status).toBe(400);
    expect(JSON.stringify(refused.body)).toMatch(/mode/);
    expect(JSON.stringify(refused.body)).toMatch(/profile only/);
    const traj = (await get(`${id}/trajectory`)).body;
    expect(traj.mode).toBe('absolute');
    expect((await get(`${id}/trajectory?mode=per-request`)).status).toBe(400);
  });
});
