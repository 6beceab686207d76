/**
 * The change engine on real files: the seeded demo (six wrk runs per stage, six profiles of each kind),
 * and comparisons uploaded from fixtures/repeated-runs. Figures are checked against what the tools
 * printed and against `go tool pprof`, read independently of the parsers where that is cheap.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StagediffApp } from '../../src/app.ts';
import { parsePprof } from '../../src/ingest/pprof/index.ts';
import { total } from '../../src/analysis/flat-cum.ts';
import { verdict } from '../../src/analysis/significance.ts';
import { seedDemo } from '../../src/services/seed.ts';
import { addStage, createComparison, testApp, upload } from '../helpers/app.ts';
import { runFileName } from '../helpers/repeated-runs.ts';
import { findGo, fixturesDir } from '../helpers/paths.ts';
import { parseTopAll } from '../helpers/pprof-text.ts';

const demo = `${fixturesDir}demo/`;
const STAGES = ['baseline', 'fast-json', 'pooled', 'async-log'];
const go = findGo();

function wrkRps(path: string): number {
  return Number(/Requests\/sec:\s+([\d.]+)/.exec(readFileSync(path, 'utf8'))![1]);
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

describe('the change engine on the demo', () => {
  let app: StagediffApp;
  beforeAll(async () => {
    app = await testApp();
    await seedDemo(app.ctx);
  });
  afterAll(async () => app.close());

  const changes = async (base: string, target: string, extra = '') => {
    const r = await app.inject({ url: `/api/comparisons/demo/changes?base=${base}&target=${target}${extra}` });
    expect(r.statusCode, r.body).toBe(200);
    return r.json();
  };

  it('"what changed" names where each stage’s change starts, never the ancestors whose share grew', async () => {
    // Each function's p is adjusted over the diff's tested functions (Benjamini–Hochberg, q ≤ 0.05).
    const expected: Record<string, RegExp | null> = {
      'fast-json': /^Removed encoding\/json\.\(\*Encoder\)\.Encode: .* → 0 \(p=0\.002, q=0\.0\d\d, n=6\+6\)$/,
      pooled: /^Removed net\/http\.\(\*Transport\)\.dialConnFor: .* → 0 \(p=0\.002, q=0\.0\d\d, n=6\+6\)$/,
      // The logger's removal is a change's origin, but with 6+6 runs its p (0.002, the smallest 6+6 runs
      // can give) is not enough among the functions tested: q ≈ 0.146 > 0.05, so it is not worded.
      'async-log': null,
    };
    for (let i = 1; i < STAGES.length; i++) {
      const c = await changes(STAGES[i - 1]!, STAGES[i]!);
      expect(c.functions).toMatchObject({ status: 'ok', normalisation: 'per-request', kind: 'cpu' });
      const want = expected[STAGES[i]!];
      if (want)
        expect(
          c.sentences.some((s: string) => want.test(s)),
          c.sentences.join('\n'),
        ).toBe(true);
      else {
        const log = c.functions.changes.find((f: { name: string }) => f.name === 'main.(*syncLogger).Log');
        expect(log).toMatchObject({ name: 'main.(*syncLogger).Log', change: 'removed' });
        expect(log.verdict).toMatchObject({ status: 'no-change', p: 2 / 924 });
        expect(log.verdict.q).toBeGreaterThan(0.05);
        expect(c.sentences.join('\n')).not.toContain('syncLogger');
      }
      // The request path's ancestors are never named for what their callees did: at most for a change of
      // their own spread thinly over small callees, and then worded apart from the whole call's figures.
      // One exception, a path that vanished whole: each version names the closure of the tracing
      // middleware inlined into main.run by its place there (main.run.traceRequests.func7 in fast-json,
      // .func8 in pooled), so the mux below it reads as removed from one path and added on another.
      for (const s of c.sentences as string[])
        if (/ServeHTTP|\(\*conn\)\.serve\b/.test(s) && !/^Removed net\/http\.\(\*ServeMux\)\.ServeHTTP: /.test(s))
          expect(s).toMatch(/ in its own code and small callees \(whole call /);
      // Only significant function changes are worded (a change inside the noise is not news).
      for (const f of c.functions.changes)
        if (c.sentences.some((s: string) => s.includes(f.name))) expect(f.verdict.status).not.toBe('no-change');
    }
  });

  it('fast-json → pooled: the removed dialling and rate lookup stay significant with the false discovery rate held', async () => {
    const r = await app.inject({
      url: '/api/comparisons/demo/diff?base=fast-json&target=pooled&sort=cum&limit=100000',
    });
    expect(r.statusCode, r.body).toBe(200);
    const d = r.json();
    // 280 of the 1,267 functions move by ≥ 1 % of a request's CPU across the 12 profiles and are tested.
    expect(d.noise).toMatchObject({
      status: 'tested',
      tested: 280,
      candidates: 1267,
      floor: 0.01,
      nBase: 6,
      nTarget: 6,
    });
    type Row = { name: string; status: string; verdict: { cum: { status: string; p: number; q: number } } };
    const rows = d.top as Row[];
    // Benjamini–Hochberg by hand over the tested family's cum p-values.
    const tested = rows.filter((x) => x.verdict?.cum.q !== null && x.verdict?.cum.q !== undefined);
    expect(tested).toHaveLength(280);
    const ps = tested.map((x) => x.verdict.cum.p).sort((a, b) => a - b);
    let k = 0;
    ps.forEach((p, i) => {
      if (p <= (0.05 * (i + 1)) / ps.length) k = i + 1;
    });
    expect(tested.filter((x) => x.verdict.cum.status === 'significant')).toHaveLength(k);
    for (const name of ['net/http.(*Transport).dialConnFor', 'main.freshClientRates.Rate']) {
      const row = rows.find((x) => x.name === name)!;
      expect(row.status).toBe('removed');
      expect(row.verdict.cum).toMatchObject({ status: 'significant', p: 2 / 924 });
      // q of the smallest p: p · m / (how many tested share it).
      const atMin = ps.filter((p) => p === 2 / 924).length;
      expect(row.verdict.cum.q).toBeCloseTo((2 / 924) * (280 / atMin), 12);
      expect(row.verdict.cum.q).toBeLessThan(0.05);
    }
  });

  it('baseline → pooled: what the runtime did — scheduling wait, blocking on channels, syscalls and goroutines per request fall, judged over six traces a stage', async () => {
    const rt = (await app.inject({ url: '/api/comparisons/demo/runtime?base=baseline&target=pooled' })).json();
    type TraceRow = {
      requests: number;
      divisor: string;
      summary: {
        spanNanos: number;
        schedWait: { meanNanos: number; p99Nanos: number };
        goroutines: { created: number };
        blocked: Record<'network' | 'select' | 'channel', { totalNanos: number }>;
      };
    };
    for (const [side, stage] of [
      ['base', 'baseline'],
      ['target', 'pooled'],
    ] as const) {
      const traces = rt[side].traces as TraceRow[];
      expect(traces).toHaveLength(6);
      expect(rt[side].metrics).toHaveLength(6);
      // Each trace's requests are its own wrk run's rate over the trace's span.
      for (const [k, t] of traces.entries()) {
        expect(t.divisor).toBe('paired-run');
        expect(t.requests).toBeCloseTo(wrkRps(`${demo}${stage}/run-${k + 1}/wrk.txt`) * (t.summary.spanNanos / 1e9), 6);
      }
    }
    const by = (metric: string) => rt.figures.find((f: { metric: string }) => f.metric === metric);
    const values = (side: 'base' | 'target', read: (t: TraceRow) => number) =>
      (rt[side].traces as TraceRow[]).map(read);
    for (const [metric, read] of [
      ['sched-wait-mean', (t: TraceRow) => t.summary.schedWait.meanNanos],
      ['sched-wait-p99', (t: TraceRow) => t.summary.schedWait.p99Nanos],
      ['blocked-channel', (t: TraceRow) => t.summary.blocked.channel.totalNanos / t.requests],
      ['goroutines-created', (t: TraceRow) => t.summary.goroutines.created / t.requests],
    ] as const) {
      const f = by(metric);
      const bv = values('base', read);
      const tv = values('target', read);
      for (const [i, v] of bv.entries()) expect(f.base.values[i]).toBeCloseTo(v, 6);
      for (const [i, v] of tv.entries()) expect(f.target.values[i]).toBeCloseTo(v, 6);
      const want = verdict(bv, tv);
      expect([f.verdict.status, f.verdict.p, f.verdict.nBase, f.verdict.nTarget], metric).toEqual([
        want.status,
        want.p,
        6,
        6,
      ]);
      // Pooled reuses its upstream connections: less waiting for a CPU, on channels and for new goroutines
      // (on this busy machine the network and select waits per request also fall, within the noise).
      expect([f.verdict.status, f.direction], metric).toEqual(['significant', 'improvement']);
    }
    // The same rows, worded, in the pair's changes.
    const c = await changes('baseline', 'pooled');
    expect(c.sentences.some((x: string) => /^Scheduling wait \(mean\) −\d+ % .*p=0\.00\d, n=6\+6\)$/.test(x))).toBe(
      true,
    );
    expect(c.sentences.some((x: string) => /^Blocked on channels \(all goroutines\) −\d+ % /.test(x))).toBe(true);
  });

  it('pooled → async-log: QPS within the noise, worded so', async () => {
    const c = await changes('pooled', 'async-log');
    const qps = c.figures.find((f: { metric: string }) => f.metric === 'rps');
    expect(qps.verdict).toMatchObject({ status: 'no-change', nBase: 6, nTarget: 6 });
    expect(c.sentences).toContain(`QPS ~ within the noise (p=${qps.verdict.p.toFixed(3)}, n=6+6)`);
  });

  it('CPU per request is each CPU profile over its own wrk run (rps × the profile’s duration)', async () => {
    const t = (await app.inject({ url: '/api/comparisons/demo/stage-table' })).json();
    for (const [i, st] of STAGES.entries()) {
      const perRun = [1, 2, 3, 4, 5, 6].map((k) => {
        const p = parsePprof(readFileSync(`${demo}${st}/run-${k}/cpu.pb.gz`));
        return (
          total(
            p,
            p.sampleTypes.findIndex((t) => t.type === 'cpu'),
          ) /
          (wrkRps(`${demo}${st}/run-${k}/wrk.txt`) * (p.durationNanos / 1e9))
        );
      });
      const fig = t.rows[i].figures.cpuPerRequest;
      expect(fig.n).toBe(6);
      for (const [k, v] of (fig.values as number[]).entries()) expect(v).toBeCloseTo(perRun[k]!, 6);
      expect(fig.median).toBeCloseTo(median(perRun), 6);
      if (i > 0) {
        const c = await changes(STAGES[i - 1]!, st);
        const cpu = c.figures.find((f: { metric: string }) => f.metric === 'cpu-per-request');
        // The page's table and the pair's changes are one judgement.
        expect(cpu.verdict).toEqual(t.rows[i].vsPrevious.cpuPerRequest);
        expect(c.perRequest.base.measured).toBe(true);
        expect(c.perRequest.target.profiles.map((p: { method: string }) => p.method)).toEqual(
          Array(6).fill('paired-run'),
        );
      }
    }
  });

  it('allocation windows and heap snapshots are separate kinds; only snapshots warn of since-start', async () => {
    const c = (await app.inject({ url: '/api/comparisons/demo' })).json();
    const kinds = c.stages[0].artifacts
      .filter((a: { kind: string }) => a.kind === 'profile')
      .map((a: { filename: string; summary: { kind: string } }) => [
        a.filename.replace(/^run-\d-/, ''),
        a.summary.kind,
      ]);
    expect(new Map(kinds)).toEqual(
      new Map([
        ['cpu.pb.gz', 'cpu'],
        ['allocs.pb.gz', 'allocs'],
        ['heap.pb.gz', 'heap'],
        ['mutex.pb.gz', 'mutex'],
        ['block.pb.gz', 'block'],
        ['goroutine.pb.gz', 'goroutine'],
      ]),
    );
    const allocs = (await app.inject({ url: '/api/comparisons/demo/flamegraph?stage=baseline&kind=allocs' })).json();
    expect(allocs).toMatchObject({ kind: 'allocs', sampleType: 'alloc_space' });
    expect(allocs.profiles).toHaveLength(6);
    expect(allocs.sampleTypes.find((t: { type: string }) => t.type === 'alloc_space').cumulativeSinceStart).toBe(false);
    const heap = (await app.inject({ url: '/api/comparisons/demo/flamegraph?stage=baseline&kind=heap' })).json();
    expect(heap).toMatchObject({ kind: 'heap', sampleType: 'inuse_space' });
    expect(heap.sampleTypes.find((t: { type: string }) => t.type === 'alloc_space').cumulativeSinceStart).toBe(true);
    // Per request works on the window deltas.
    const d = await app.inject({
      url: '/api/comparisons/demo/diff?base=baseline&target=pooled&kind=allocs&mode=per-request',
    });
    expect(d.statusCode, d.body).toBe(200);
    expect(d.json()).toMatchObject({ kind: 'allocs', unit: 'bytes/request', warnings: [] });
    // A snapshot has no window: per request is refused, naming why.
    const h = await app.inject({
      url: '/api/comparisons/demo/diff?base=baseline&target=pooled&kind=heap&mode=per-request',
    });
    expect(h.statusCode).toBe(400);
    expect(h.json().error.message).toMatch(/snapshots have none/);
  });

  it.skipIf(!go)('each kind equals go tool pprof over the stage’s files of that kind merged', async () => {
    for (const [kind, file, type] of [
      ['allocs', 'allocs.pb.gz', 'alloc_space'],
      ['heap', 'heap.pb.gz', 'inuse_space'],
      ['heap', 'heap.pb.gz', 'alloc_space'],
    ] as const) {
      const files = [1, 2, 3, 4, 5, 6].map((k) => `${demo}baseline/run-${k}/${file}`);
      const r = spawnSync(
        go!,
        [
          'tool',
          'pprof',
          '-top',
          '-nodecount=0',
          '-nodefraction=0',
          '-edgefraction=0',
          `-sample_index=${type}`,
          '-unit=bytes',
          ...files,
        ],
        { encoding: 'utf8', env: { ...process.env, PPROF_BINARY_PATH: '/nonexistent' }, maxBuffer: 64 << 20 },
      );
      expect(r.status, r.stderr).toBe(0);
      const ref = parseTopAll(r.stdout);
      const top = (
        await app.inject({ url: `/api/comparisons/demo/top?stage=baseline&kind=${kind}&sampleType=${type}` })
      ).json();
      const ours = new Map(top.rows.map((x: { name: string; flat: number; cum: number }) => [x.name, [x.flat, x.cum]]));
      expect(new Map([...ours].sort()), `${kind} ${type}`).toEqual(new Map([...ref].sort()));
    }
  });
});

describe('runs are runs, and too few runs are unjudged', () => {
  let app: StagediffApp;
  beforeAll(async () => {
    app = await testApp();
  });
  afterAll(async () => app.close());

  const rr = `${fixturesDir}repeated-runs/`;

  it('a run is a run: the same wrk output with a byte added is refused (409) naming the run it repeats', async () => {
    const { id, auth } = await createComparison(app, 'same run');
    const st = await addStage(app, id, auth, 'pooled');
    const wrk = `${rr}pooled/run-1/wrk.txt`;
    expect((await upload(app, id, st, auth, [wrk], ['run-1-wrk.txt'])).statusCode).toBe(200);
    const dir = mkdtempSync(join(tmpdir(), 'stagediff-same-run-'));
    const copy = join(dir, 'wrk.txt');
    writeFileSync(copy, `${readFileSync(wrk, 'utf8')}\n`);
    const r = await upload(app, id, st, auth, [copy], ['run-2-wrk.txt']);
    expect(r.statusCode).toBe(409);
    const body = r.json();
    expect(body.error.code).toBe('duplicate');
    expect(body.error.existing.filename).toBe('run-1-wrk.txt');
    expect(body.results[0].error.message).toMatch(
      /already holds this run as run-1-wrk\.txt: every figure it prints is the same/,
    );
    // A different run of the same stage is a run.
    expect((await upload(app, id, st, auth, [`${rr}pooled/run-2/wrk.txt`], ['run-2-wrk.txt'])).statusCode).toBe(200);
    const tree = (await app.ctx.store.getComparisonTree(id))!;
    expect(tree.stages[0]!.artifacts.map((a) => a.filename)).toEqual(['run-1-wrk.txt', 'run-2-wrk.txt']);
  });

  it('2+2 real runs uploaded twice: the duplicates are refused (409) and the verdict stays too-few-runs', async () => {
    const { id, auth } = await createComparison(app, '2+2');
    const a = await addStage(app, id, auth, 'fast-json');
    const b = await addStage(app, id, auth, 'pooled');
    const files = (stage: string) =>
      [1, 2].flatMap((k) => [`${rr}${stage}/run-${k}/wrk.txt`, `${rr}${stage}/run-${k}/cpu.pb.gz`]);
    // Named by run (run-1-wrk.txt, run-1-cpu.pb.gz): the names pair each profile with its run.
    for (const [st, name] of [
      [a, 'fast-json'],
      [b, 'pooled'],
    ] as const)
      for (const f of files(name))
        expect((await upload(app, id, st, auth, [f], [runFileName(f)])).statusCode).toBe(200);
    const before = (await app.inject({ url: `/api/comparisons/${id}/changes?base=${a}&target=${b}` })).json();
    const rps = (c: { figures: { metric: string; verdict: unknown }[] }) =>
      c.figures.find((f) => f.metric === 'rps')!.verdict;
    expect(rps(before)).toMatchObject({ status: 'too-few-runs', nBase: 2, nTarget: 2 });
    // The same files again: every one refused, naming the artifact already there; nothing stored.
    for (const f of files('pooled')) {
      const r = await upload(app, id, b, auth, [f]);
      expect(r.statusCode).toBe(409);
      const body = r.json();
      expect(body.error.code).toBe('duplicate');
      expect(body.error.existing.filename).toBe(runFileName(f));
      expect(body.results[0].error.message).toMatch(/already holds these exact bytes/);
    }
    const after = (await app.inject({ url: `/api/comparisons/${id}/changes?base=${a}&target=${b}` })).json();
    expect(rps(after)).toEqual(rps(before));
    const tree = (await app.ctx.store.getComparisonTree(id))!;
    expect(tree.stages[1]!.artifacts).toHaveLength(4);
    // The diff of 2+2 profiles: every tested node says too-few-runs, and the diff says why.
    const d = (await app.inject({ url: `/api/comparisons/${id}/diff?base=${a}&target=${b}` })).json();
    expect(d.noise).toMatchObject({ status: 'too-few-runs', nBase: 2, nTarget: 2, runsNeeded: 4 });
    expect(d.noise.minP).toBeCloseTo(1 / 3, 12);
    const statuses = new Set<string>();
    const walk = (n: { verdict?: { status: string } | null; children: unknown[] }) => {
      if (n.verdict) statuses.add(n.verdict.status);
      for (const c of n.children) walk(c as typeof n);
    };
    walk(d.tree);
    expect([...statuses]).toEqual(['too-few-runs']);
    expect(d.mode).toBe('per-request');
  });
});
