/**
 * GET …/runtime: what the Go runtime did in two stages, and the change engine's verdicts on the trace
 * figures across the runs (one execution trace a run). Each trace's figures are checked against
 * scripts/trace-reference's answers (a program on golang.org/x/exp/trace) for the same file; the
 * medians, ratios and verdicts against the engine's benchstat rules computed here from those answers.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StagediffApp } from '../../src/app.ts';
import { estimate, verdict } from '../../src/analysis/significance.ts';
import { addStage, createComparison, testApp, upload } from '../helpers/app.ts';
import { fixturesDir } from '../helpers/paths.ts';
import { compareWithin } from '../helpers/trace-compare.ts';

const trace = (name: string) => `${fixturesDir}traces/${name}.trace`;
interface Ref {
  spanNanos: number;
  goroutines: { created: number };
  schedWait: { count: number; meanNanos: number; p99Nanos: number };
  gc: { stw: { totalNanos: number } };
  blocked: Record<'channel' | 'select' | 'sync' | 'network', { totalNanos: number }>;
  syscall: { totalNanos: number };
}
const ref = (name: string): Ref =>
  JSON.parse(readFileSync(`${fixturesDir}traces/expected/${name}.summary.json`, 'utf8')) as Ref;
const wrk = (stage: string) => `${fixturesDir}demo/${stage}/run-1/wrk.txt`;
const wrkRps = (stage: string) => Number(/Requests\/sec:\s+([\d.]+)/.exec(readFileSync(wrk(stage), 'utf8'))![1]);

const BASE = ['demo-go1.26-baseline', 'demo-go1.22-baseline'];
const TARGET = ['demo-go1.26-pooled', 'demo-go1.22-pooled', 'demo-go1.25-pooled', 'demo-go1.24-pooled'];

describe('the runtime of two stages, judged across their traces', () => {
  let app: StagediffApp;
  let id: string;
  const runtime = async (cid: string, q: string) => app.inject({ url: `/api/comparisons/${cid}/runtime?${q}` });

  beforeAll(async () => {
    app = await testApp();
    const c = await createComparison(app, 'runtime');
    id = c.id;
    const b = await addStage(app, id, c.auth, 'baseline');
    const t = await addStage(app, id, c.auth, 'pooled');
    expect((await upload(app, id, b, c.auth, BASE.map(trace))).statusCode).toBe(200);
    expect((await upload(app, id, t, c.auth, TARGET.map(trace))).statusCode).toBe(200);
    // the demo service's runtime metrics and a scheduler trace beside the traces
    const extra = await upload(app, id, t, c.auth, [
      `${fixturesDir}metrics/demo-prometheus/metrics.json`,
      `${fixturesDir}schedtrace/demo-go1.26-schedtrace-gctrace.log`,
    ]);
    expect(extra.statusCode, extra.body).toBe(200);
  });
  afterAll(async () => app.close());

  it("each trace's figures are the reference program's, with its timeline", async () => {
    const r = await runtime(id, 'base=baseline&target=pooled');
    expect(r.statusCode, r.body).toBe(200);
    const o = r.json();
    expect(o.base.traces.map((x: { filename: string }) => x.filename)).toEqual(BASE.map((n) => `${n}.trace`));
    expect(o.target.traces).toHaveLength(4);
    for (const [side, names] of [
      [o.base, BASE],
      [o.target, TARGET],
    ] as const)
      names.forEach((n, i) => {
        const x = side.traces[i];
        const {
          timeline,
          entryFunctions: _e,
          ...want
        } = ref(n) as Ref & { timeline: unknown; entryFunctions: unknown };
        // the traced requests are not the reference program's figures (test/ingest/trace/requests.test.ts)
        const { entryFunctions: _o, requests: traced, ...ours } = x.summary;
        expect(traced.status).toBe('ok');
        const mismatches: string[] = [];
        compareWithin(ours, want, n, mismatches);
        compareWithin(x.timeline, timeline, `${n}.timeline`, mismatches);
        expect(mismatches).toEqual([]);
        expect(x.requests).toBeNull();
      });
  });

  it('verdicts across the runs: per second of trace without load tests, 2+4 runs too few to test', async () => {
    const o = (await runtime(id, 'base=baseline&target=pooled')).json();
    expect(o.normalisation).toBe('per-second');
    const by = (m: string) => o.figures.find((f: { metric: string }) => f.metric === m);
    const perSecond = (r: Ref, v: number) => v / (r.spanNanos / 1e9);
    // the network total leaves out idle server connections' keep-alive waits (the traced requests' count of them)
    const keepAlive = new Map<string, number>();
    for (const [side, names] of [
      [o.base, BASE],
      [o.target, TARGET],
    ] as const)
      for (const [i, n] of names.entries()) keepAlive.set(n, side.traces[i].summary.requests.keepAliveWaitNanos);
    let name = '';
    const cases: [string, (r: Ref) => number, string][] = [
      ['sched-wait-mean', (r) => r.schedWait.meanNanos, 'nanoseconds'],
      ['sched-wait-p99', (r) => r.schedWait.p99Nanos, 'nanoseconds'],
      ['gc-stw', (r) => perSecond(r, r.gc.stw.totalNanos), 'nanoseconds/s'],
      ['blocked-network', (r) => perSecond(r, r.blocked.network.totalNanos - keepAlive.get(name)!), 'nanoseconds/s'],
      ['blocked-select', (r) => perSecond(r, r.blocked.select.totalNanos), 'nanoseconds/s'],
      ['syscall', (r) => perSecond(r, r.syscall.totalNanos), 'nanoseconds/s'],
      ['goroutines-created', (r) => perSecond(r, r.goroutines.created), 'count/s'],
    ];
    for (const [metric, value, unit] of cases) {
      const f = by(metric);
      const of = (n: string) => {
        name = n;
        return value(ref(n));
      };
      const bv = BASE.map(of);
      const tv = TARGET.map(of);
      expect([metric, f.unit, f.base.n, f.target.n]).toEqual([metric, unit, 2, 4]);
      const mismatches: string[] = [];
      compareWithin(f.base.values, bv, `${metric}.base`, mismatches);
      compareWithin(f.target.values, tv, `${metric}.target`, mismatches);
      compareWithin(f.verdict.ratio, estimate(tv)!.median / estimate(bv)!.median, `${metric}.ratio`, mismatches);
      expect(mismatches).toEqual([]);
      expect(f.verdict.status).toBe(verdict(bv, tv).status);
      expect(f.verdict.status).toBe('too-few-runs');
      expect(f.reason).toBe('2+4 runs: too few to test — record at least 4 per stage');
    }
    expect(o.sentences).toContainEqual(
      expect.stringMatching(
        /^Scheduling wait \(P99\) [+−]\d.* \(2\+4 runs: too few to test — record at least 4 per stage\)$/,
      ),
    );
  });

  it('the metrics timeline and the scheduler trace come with the stage', async () => {
    const o = (await runtime(id, 'base=baseline&target=pooled')).json();
    expect(o.base.metrics).toEqual([]);
    const m = o.target.metrics[0];
    expect([m.filename, m.start, m.times.length]).toEqual(['metrics.json', '2026-11-25T12:29:47.230Z', 5]);
    const names = m.series.map((s: { name: string }) => s.name);
    expect(names).toEqual(
      expect.arrayContaining([
        'go_sched_goroutines_goroutines',
        'go_sched_latencies_seconds',
        'go_gc_cycles_total_gc_cycles_total',
      ]),
    );
    const lat = m.series.find((s: { name: string }) => s.name === 'go_sched_latencies_seconds');
    expect(lat.type).toBe('histogram');
    expect(lat.perInterval).toHaveLength(5);
    const st = o.target.schedtraces[0];
    expect(st.filename).toBe('demo-go1.26-schedtrace-gctrace.log');
    expect(st.summary.gc.cycles).toBeGreaterThan(0);
  });

  it('per request when every trace has its run: totals over the run’s rps × the trace’s span', async () => {
    const c = await createComparison(app, 'runtime per request');
    for (const [stage, file] of [
      ['baseline', 'demo-go1.26-baseline'],
      ['pooled', 'demo-go1.26-pooled'],
    ] as const) {
      const sid = await addStage(app, c.id, c.auth, stage);
      expect((await upload(app, c.id, sid, c.auth, [trace(file), wrk(stage)])).statusCode).toBe(200);
    }
    const o = (await runtime(c.id, 'base=baseline&target=pooled')).json();
    expect(o.normalisation).toBe('per-request');
    const requests = (stage: string, n: string) => (wrkRps(stage) * ref(n).spanNanos) / 1e9;
    expect(o.base.traces[0].requests).toBeCloseTo(requests('baseline', 'demo-go1.26-baseline'), 6);
    const g = o.figures.find((f: { metric: string }) => f.metric === 'goroutines-created');
    expect(g.unit).toBe('count/request');
    expect(g.base.values[0]).toBeCloseTo(
      ref('demo-go1.26-baseline').goroutines.created / requests('baseline', 'demo-go1.26-baseline'),
      9,
    );
    expect(g.verdict.status).toBe('single-run');
  });

  it('refuses the same stage twice and an unknown stage, naming the parameter', async () => {
    const same = await runtime(id, 'base=pooled&target=pooled');
    expect(same.statusCode).toBe(400);
    expect(same.json().error).toMatchObject({ param: 'target' });
    const none = await runtime(id, 'base=baseline&target=nope');
    expect(none.statusCode).toBe(404);
    expect(none.json().error.message).toContain('target: comparison');
  });
});
