import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StagediffApp } from '../../src/app.ts';
import { mannWhitneyU } from '../../src/analysis/benchstat.ts';
import { flatCum } from '../../src/analysis/flat-cum.ts';
import { parsePprof } from '../../src/ingest/pprof/index.ts';
import { testApp, addStage, createComparison, upload } from '../helpers/app.ts';
import { PRINTED_RPS, runFiles, uploadRepeatedRuns } from '../helpers/repeated-runs.ts';
import { join } from 'node:path';
import { fixturesDir } from '../helpers/paths.ts';

/* Profile noise on real repeated runs (fixtures/repeated-runs: a CPU profile taken during each wrk run). */
let app: StagediffApp;
let id: string;
let stageIds: string[];
beforeAll(async () => {
  app = await testApp();
  ({ id, stageIds } = await uploadRepeatedRuns(app));
});
afterAll(async () => {
  await app.close();
});

type Row = {
  name: string;
  base: { cum: number };
  target: { cum: number };
  verdict: { cum: { status: string; p: number | null } } | null;
};

async function diff(b: number, t: number) {
  const r = await app.inject({
    url: `/api/comparisons/${id}/diff?base=${stageIds[b]}&target=${stageIds[t]}&sort=cum&limit=100000`,
  });
  expect(r.statusCode).toBe(200);
  return r.json();
}

/** CPU nanoseconds per request of `fn` (cum) in each run's profile, computed here from the files. */
function cumPerRequest(stage: 'fast-json' | 'pooled' | 'pooled-rerun', fn: string): number[] {
  const files = runFiles(stage, 'cpu.pb.gz');
  const out: number[] = [];
  for (const [i, f] of files.entries()) {
    const p = parsePprof(readFileSync(f));
    const idx = p.sampleTypes.findIndex((t) => t.type === 'cpu');
    const cum = flatCum(p, idx).find((r) => r.name === fn)?.cum ?? 0;
    out.push(cum / (PRINTED_RPS[stage][i]! * (p.durationNanos / 1e9)));
  }
  return out;
}

describe('diff noise across several profiles per stage', () => {
  it('fast-json → pooled: the per-request test flags the dialling that pooling removed', async () => {
    const d = await diff(0, 1);
    expect(d.noise).toEqual({
      status: 'tested',
      // Functions whose per-request cum spreads by ≥ 1 % of the median total over the 10 profiles, non-zero
      // in at least 5 of them; the other 545 of the 835 considered are not tested.
      tested: 290,
      candidates: 835,
      floor: 0.01,
      normalisation: 'per-request',
      unit: 'nanoseconds/request',
      nBase: 5,
      nTarget: 5,
      alpha: 0.05,
      minP: 2 / 252,
      runsNeeded: 4,
    });
    // Every profile has its own run: the diff opens per request.
    expect(d.mode).toBe('per-request');
    const dial = d.top.find((r: Row) => r.name === 'net.(*Dialer).DialContext') as Row;
    expect(dial.target.cum).toBe(0);
    expect(dial.verdict!.cum).toMatchObject({ status: 'significant' });
    // The same p from the files themselves: each profile's cum over the requests its run served in it.
    const ref = mannWhitneyU(
      cumPerRequest('fast-json', 'net.(*Dialer).DialContext'),
      cumPerRequest('pooled', 'net.(*Dialer).DialContext'),
    );
    expect(dial.verdict!.cum.p).toBeCloseTo(ref.p, 15);
    // The tree carries each node's function verdict for the tooltips.
    const stack = [d.tree];
    let found = null;
    while (stack.length > 0 && !found) {
      const n = stack.pop();
      if (n.name === 'net.(*Dialer).DialContext') found = n;
      stack.push(...n.children);
    }
    expect(found?.verdict).toEqual(dial.verdict!.cum);
  });

  it('pooled → its re-run: almost nothing moves beyond the noise', async () => {
    const sig = (d: { top: Row[]; baseTotal: number; targetTotal: number }) => {
      const big = d.top.filter((r) => Math.max(r.base.cum / d.baseTotal, r.target.cum / d.targetTotal) > 0.01);
      return { big: big.length, significant: big.filter((r) => r.verdict?.cum.status === 'significant').length };
    };
    const real = sig(await diff(0, 1));
    const same = sig(await diff(1, 2));
    // Recorded: 127 of 204 functions above 1 % change significantly for fast-json → pooled, 5 of 160 for
    // the re-run — about what α = 0.05 lets through by chance.
    expect(real.significant / real.big).toBeGreaterThan(0.5);
    expect(same.significant / same.big).toBeLessThan(0.1);
    // The same build recorded twice, both ways round: with the false discovery rate held across the
    // functions tested, at most one function is significant, none is called removed or new, and no
    // frame of the tree (the root, the stage total tested alone, included) carries a significant verdict.
    for (const [b, t] of [
      [1, 2],
      [2, 1],
    ] as const) {
      const d = await diff(b, t);
      expect(d.noise.status).toBe('tested');
      expect(d.noise.tested).toBeGreaterThan(100);
      const significant = d.top.filter(
        (r: Row & { verdict: { flat: { status: string } } | null }) =>
          r.verdict?.cum.status === 'significant' || r.verdict?.flat.status === 'significant',
      );
      expect(significant.length).toBeLessThanOrEqual(1);
      expect(d.top.filter((r: { status: string }) => r.status === 'removed' || r.status === 'new')).toEqual([]);
      const nodes = [d.tree];
      let drawnSignificant = 0;
      let withVerdict = 0;
      while (nodes.length > 0) {
        const n = nodes.pop();
        if (n.verdict) withVerdict++;
        if (n.verdict?.status === 'significant') drawnSignificant++;
        for (const c of n.children) nodes.push(c);
      }
      expect(withVerdict).toBeGreaterThan(100);
      expect(drawnSignificant).toBe(0);
      expect(d.tree.verdict).toMatchObject({ status: 'no-change', q: null });
    }
    const handler = (await diff(1, 2)).top.find((r: Row) => r.name === 'main.(*service).handleOrders') as Row;
    expect(handler.verdict!.cum).toMatchObject({ status: 'no-change' });
  });

  it('the trajectory shows the spread of each function across a stage’s profiles', async () => {
    const t = (await app.inject({ url: `/api/comparisons/${id}/trajectory` })).json();
    for (const f of t.functions)
      for (const p of f.points) {
        expect(p.spread.n).toBe(5);
        expect(p.spread.min).toBeLessThanOrEqual(p.spread.median);
        expect(p.spread.median).toBeLessThanOrEqual(p.spread.max);
      }
  });
});
const CACHE_MAX_BYTES = 4 * 1024 * 1024;

describe('analysis views under hostile query strings and concurrent changes', () => {
  let app: StagediffApp;
  let c: { id: string; auth: Record<string, string> };
  let base: string;
  let target: string;

  beforeAll(async () => {
    // One client asks for 1,000 distinct views here: the per-client budget is not what this suite tests.
    app = await testApp({ CACHE_MAX_BYTES: String(CACHE_MAX_BYTES), ANALYSIS_CLIENT_JOBS_PER_MINUTE: '0' });
    c = await createComparison(app, 'views');
    base = await addStage(app, c.id, c.auth, 'baseline');
    target = await addStage(app, c.id, c.auth, 'fast-json');
    expect(
      (await upload(app, c.id, base, c.auth, [join(fixturesDir, 'demo/baseline/run-1/cpu.pb.gz')])).statusCode,
    ).toBe(200);
    expect(
      (await upload(app, c.id, target, c.auth, [join(fixturesDir, 'demo/fast-json/run-1/cpu.pb.gz')])).statusCode,
    ).toBe(200);
  }, 60_000);
  afterAll(async () => {
    await app.close();
  });

  it('refuses Infinity and overflowing numbers with a 400 naming the parameter', async () => {
    for (const [q, name] of [
      [`flamegraph?stage=${base}&minFraction=Infinity`, 'minFraction'],
      [`flamegraph?stage=${base}&minFraction=-Infinity`, 'minFraction'],
      [`diff?base=${base}&target=${target}&limit=1e999`, 'limit'],
      ['trajectory?n=Infinity', 'n'],
    ] as const) {
      const r = await app.inject({ url: `/api/comparisons/${c.id}/${q}` });
      expect(r.statusCode, q).toBe(400);
      expect(r.json().error.message).toContain(name);
    }
  });

  it('serves a restarted server from the compact form in the store, never re-reading the raw bytes', async () => {
    const url = `/api/comparisons/${c.id}/diff?base=${base}&target=${target}&mode=share&minFraction=0.003`;
    const first = await app.inject({ url });
    expect(first.statusCode).toBe(200);
    // Another server on the same data, computing in process so its store can be watched.
    const other = await testApp({ DATA_DIR: app.ctx.config.dataDir, ANALYSIS_WORKERS: '0' });
    try {
      let rawReads = 0;
      const store = other.ctx.store;
      const open = store.openBlobStream.bind(store);
      store.openBlobStream = async (sha) => {
        rawReads++;
        return open(sha);
      };
      const r = await other.inject({ url: url.replace('0.003', '0.004') });
      expect(r.statusCode).toBe(200);
      expect(rawReads).toBe(0);
      // the same view computed by the first server from its own models (a distinct cache key: limit spelled out)
      const again = await app.inject({ url: `${url.replace('0.003', '0.004')}&limit=2000` });
      expect(r.json()).toEqual(again.json());
      expect((await other.inject({ url: '/metrics' })).body).toMatch(/^stagediff_derived_model_hits_total 2$/m);
    } finally {
      await other.close();
    }
  });

  it('keeps the shared result cache within CACHE_MAX_BYTES over 1,000 distinct query strings', async () => {
    const metric = async (name: string) =>
      Number(new RegExp(`^${name} (\\d+)$`, 'm').exec((await app.inject({ url: '/metrics' })).body)?.[1]);
    for (let i = 0; i < 1000; i++) {
      const r = await app.inject({
        url: `/api/comparisons/${c.id}/diff?base=${base}&target=${target}&minFraction=${(i / 1e5).toFixed(5)}&limit=${1 + (i % 50)}`,
      });
      expect(r.statusCode).toBe(200);
    }
    const s = await app.ctx.store.stats();
    expect(s.cacheEntries).toBeGreaterThan(10);
    expect(s.cacheBytes).toBeGreaterThan(CACHE_MAX_BYTES / 2);
    expect(s.cacheBytes).toBeLessThanOrEqual(CACHE_MAX_BYTES);
    expect(await metric('stagediff_result_cache_bytes')).toBe(s.cacheBytes);
    expect(await metric('stagediff_result_cache_max_bytes')).toBe(CACHE_MAX_BYTES);
    // 1,000 analyses, each compressed twice (br, gzip) and written as two entries: minutes on a busy machine.
  }, 400_000);

  it('answers a view racing the deletion of its file with a 409 naming the file, never a 500', async () => {
    const own = await createComparison(app, 'race');
    const st = await addStage(app, own.id, own.auth, 'one');
    const up = await upload(app, own.id, st, own.auth, [join(fixturesDir, 'demo/pooled/run-1/heap.pb.gz')]);
    const artifactId = up.json().results[0].artifact.id as string;
    // A second server on the same data (its workers have not parsed the file yet) reads the
    // comparison, then the file is deleted before its worker opens the bytes.
    const other = await testApp({ DATA_DIR: app.ctx.config.dataDir });
    const pool = other.ctx.pool;
    const run = pool.run.bind(pool);
    pool.run = async (...args) => {
      const del = await app.inject({
        method: 'DELETE',
        url: `/api/comparisons/${own.id}/artifacts/${artifactId}`,
        headers: own.auth,
      });
      expect(del.statusCode).toBe(204);
      return run(...args);
    };
    try {
      const r = await other.inject({ url: `/api/comparisons/${own.id}/flamegraph?stage=${st}` });
      expect(r.statusCode).toBe(409);
      expect(r.json().error.code).toBe('blob-missing');
      expect(r.json().error.message).toMatch(/heap\.pb\.gz was removed while it was being analysed/);
    } finally {
      pool.run = run;
      await other.close();
    }
    // afterwards the stage simply has no profile
    const after = await app.inject({ url: `/api/comparisons/${own.id}/flamegraph?stage=${st}` });
    expect(after.statusCode).toBe(404);
  });
});
