/**
 * GET …/requests on the demo (fixtures/demo: six annotated 0.1 s traces per stage): each trace's figures
 * are exactly the request figures its runtime rows are computed from (the trace read again here), its
 * histogram counts each request once on the shared log-scale bins (binned here from the requests
 * themselves, by a plain scan of the edges), the slowest requests' critical paths cover their spans, and
 * the verdicts are the change engine's request rows of GET …/changes. A pair without traced requests
 * gets its typed status (traces too large for the request analysis: requests-view-too-large.test.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StagediffApp } from '../../src/app.ts';
import type { RequestsView } from '../../src/api/requests.ts';
import { parseTrace } from '../../src/ingest/trace/index.ts';
import { RequestCollector } from '../../src/ingest/trace/requests.ts';
import { type Transition, transitionOf } from '../../src/ingest/trace/events.ts';
import { defaultTraceLimits, readTrace } from '../../src/ingest/trace/reader.ts';
import { fileSource } from '../../src/ingest/source.ts';
import { seedDemo } from '../../src/services/seed.ts';
import { addStage, createComparison, testApp, upload } from '../helpers/app.ts';
import { fixturesDir } from '../helpers/paths.ts';

/** Every request span of a trace's shown group (ns), read with the collector alone. */
async function spans(path: string, name: string): Promise<number[]> {
  const c = new RequestCollector(8_000_000, 1_000_000);
  const t: Transition = { kind: 'goroutine', id: 0, from: 0, to: 0, reason: '', stack: 0 };
  await readTrace(fileSource(path), (e) => c.event(e, transitionOf(e, t) ? t : null), defaultTraceLimits());
  return c
    .finish()
    .requests.filter((q) => q.name === name)
    .map((q) => q.endNanos - q.startNanos);
}

describe('the Requests view on the demo', () => {
  let app: StagediffApp;
  beforeAll(async () => {
    app = await testApp();
    await seedDemo(app.ctx);
  }, 120_000);
  afterAll(async () => app.close());

  const view = async (base: string, target: string) => {
    const r = await app.inject({ url: `/api/comparisons/demo/requests?base=${base}&target=${target}` });
    expect(r.statusCode, r.body).toBe(200);
    return r.json() as RequestsView;
  };

  it('fast-json → pooled: each trace its own request figures, its histogram on shared bins, the engine’s rows', async () => {
    const v = await view('fast-json', 'pooled');
    expect(v.status).toBe('ok');
    expect(v.reason).toBe('');
    // shared log-scale bins: ten a decade, both stages' histograms on them
    const bins = v.edgesNanos.length - 1;
    expect(bins).toBeGreaterThan(5);
    expect(bins).toBeLessThanOrEqual(80);
    for (let i = 1; i < v.edgesNanos.length; i++)
      expect(Math.log10(v.edgesNanos[i]! / v.edgesNanos[i - 1]!)).toBeCloseTo(0.1, 3);

    for (const [side, stage] of [
      [v.base, 'fast-json'],
      [v.target, 'pooled'],
    ] as const) {
      expect(side.name).toBe(stage);
      expect(side.method).toBe('tasks');
      expect(side.traces).toHaveLength(6);
      expect(side.histogram).toHaveLength(bins);
      let requests = 0;
      for (const t of side.traces) {
        const run = /run-(\d)/.exec(t.filename)![1];
        const file = `${fixturesDir}demo/${stage}/run-${run}/trace.out`;
        const ref = (await parseTrace(fileSource(file))).requests!;
        expect(t.status).toBe('ok');
        expect(t.method).toBe(ref.method);
        expect(t.name).toBe(ref.name);
        expect(t.duration).toEqual(ref.duration);
        expect(t.parts).toEqual(ref.parts);
        expect(t.median).toEqual(ref.median);
        expect(t.tail).toEqual(ref.tail);
        // the histogram: every request once, in the bin whose edges hold its span
        const d = await spans(file, t.name);
        expect(d).toHaveLength(t.duration.count);
        const counts = new Array<number>(bins).fill(0);
        for (const x of d) {
          let k = 0;
          while (k + 1 < bins && x >= v.edgesNanos[k + 1]!) k++;
          counts[k]!++;
        }
        expect(t.histogram).toEqual(counts);
        expect(t.histogram.reduce((a, b) => a + b, 0)).toBe(t.duration.count);
        requests += t.duration.count;
        // the slowest requests of the shown trace only (the median P99 of the stage's)
        if (t.artifactId !== side.shownTrace) {
          expect(t.slowest).toEqual([]);
          expect(t.waitStacks).toEqual([]);
          continue;
        }
        expect(t.slowest.map(({ segments, segmentsOmitted, ...q }) => q)).toEqual(
          ref.slowest.map(({ path, ...q }) => q),
        );
        expect(t.waitStacks).toEqual(ref.waitStacks);
        expect(t.waitStacks.length).toBeLessThanOrEqual(64);
        // the slowest requests: slowest first, the few slowest with their critical path as segments that
        // follow each other from the request's start to its end
        expect(t.slowest.length).toBeGreaterThan(0);
        expect(t.slowest[0]!.durationNanos).toBe(t.duration.maxNanos);
        for (const q of t.slowest.slice(0, 5)) {
          expect(q.segments.length).toBeGreaterThan(0);
          expect(q.segments.length).toBeLessThanOrEqual(48);
          if (q.segmentsOmitted === 0) {
            expect(q.segments[0]!.startNanos).toBe(0);
            expect(q.segments.at(-1)!.endNanos).toBe(q.durationNanos);
            for (let i = 1; i < q.segments.length; i++)
              expect(q.segments[i]!.startNanos).toBe(q.segments[i - 1]!.endNanos);
          }
          // the request's own goroutine is on its path
          expect(q.segments.some((s) => s.goroutine === q.goroutine)).toBe(true);
          expect(q.segments.every((s) => v.parts.includes(s.part))).toBe(true);
        }
      }
      const p99s = side.traces.map((t) => t.duration.p99Nanos).sort((a, b) => a - b);
      expect(side.traces.find((t) => t.artifactId === side.shownTrace)!.duration.p99Nanos).toBe(p99s[2]);
      expect(side.requests).toBe(requests);
      expect(side.histogram.reduce((a, b) => a + b, 0)).toBe(requests);
      expect(side.tailWaits.length).toBeGreaterThan(0);
      expect(side.tailWaits.length).toBeLessThanOrEqual(20);
    }
    // fast-json dials a new connection per upstream call; pooled does not: the tail's paths say so
    const dials = (s: RequestsView['base']) =>
      s.tailWaits.filter((w) => /dialconn/i.test(w.entry)).reduce((a, w) => a + w.nanos, 0);
    expect(dials(v.base)).toBeGreaterThan(0);
    expect(dials(v.target)).toBe(0);
    // …and where they waited: fast-json's tail connects a socket (net.(*netFD).connect on its stack), pooled's never
    const connects = (s: RequestsView['base']) =>
      s.tailWaits.filter((w) => w.stack.includes('net.(*netFD).connect')).reduce((a, w) => a + w.nanos, 0);
    expect(connects(v.base)).toBeGreaterThan(0);
    expect(connects(v.target)).toBe(0);
    // a wait names its stack (the runtime's frames left out); running and scheduler wait name none
    for (const w of [...v.base.tailWaits, ...v.target.tailWaits]) {
      if (w.part === 'running' || w.part === 'runnable') expect(w.stack).toEqual([]);
      expect(w.stack.length).toBeLessThanOrEqual(8);
      if (w.stack.length > 0) expect(w.stack[0]!.startsWith('runtime.')).toBe(false);
    }
    expect(v.base.tailWaits.some((w) => w.part === 'network' && w.stack.length > 0)).toBe(true);

    // the verdicts: the change engine's request rows, as GET …/changes gives them
    const c = (await app.inject({ url: '/api/comparisons/demo/changes?base=fast-json&target=pooled' })).json();
    const rows = (c.runtime.figures as { metric: string }[]).filter((f) => f.metric.startsWith('request-'));
    expect(rows.length).toBeGreaterThan(3);
    expect(v.figures).toEqual(rows);
    const p99 = v.figures.find((f) => f.metric === 'request-p99')!;
    expect(p99.base!.values).toEqual(v.base.traces.map((t) => t.duration.p99Nanos));
    expect(p99.target!.values).toEqual(v.target.traces.map((t) => t.duration.p99Nanos));
  }, 120_000);

  it('lists each trace with its request figures, without what only this view draws', async () => {
    const c = (await app.inject({ url: '/api/comparisons/demo' })).json() as {
      stages: { artifacts: { kind: string; summary: { requests?: Record<string, unknown> } }[] }[];
    };
    const listed = c.stages.flatMap((s) => s.artifacts.filter((a) => a.kind === 'trace'));
    expect(listed).toHaveLength(24);
    for (const a of listed) {
      const r = a.summary.requests!;
      expect(r.status).toBe('ok');
      expect((r.duration as { count: number }).count).toBeGreaterThan(0);
      expect(r.histogram).toBeUndefined();
      expect(r.waitStacks).toBeUndefined();
      expect((r.slowest as Record<string, unknown>[]).every((q) => !('path' in q))).toBe(true);
    }
  });

  it('refuses a pair of one stage and an unknown stage, naming the parameter', async () => {
    const same = await app.inject({ url: '/api/comparisons/demo/requests?base=pooled&target=pooled' });
    expect(same.statusCode).toBe(400);
    expect(same.json().error).toMatchObject({ param: 'target', message: expect.stringMatching(/same stage/) });
    const unknown = await app.inject({ url: '/api/comparisons/demo/requests?base=pooled&target=nope' });
    expect(unknown.statusCode).toBeGreaterThanOrEqual(400);
    expect(unknown.statusCode).toBeLessThan(500);
    expect(unknown.body).toMatch(/target|nope/);
    const missing = await app.inject({ url: '/api/comparisons/demo/requests?base=pooled' });
    expect(missing.statusCode).toBe(400);
    expect(missing.body).toMatch(/target/);
  });
});

describe('the Requests view without figures', () => {
  it('says a stage has no traced requests', async () => {
    const trace = `${fixturesDir}demo/pooled/run-1/trace.out`;
    const wrk = `${fixturesDir}demo/pooled/run-1/wrk.txt`;
    // a stage with only a load test: no traced requests
    const app = await testApp();
    try {
      const c = await createComparison(app);
      const a = await addStage(app, c.id, c.auth, 'a');
      const b = await addStage(app, c.id, c.auth, 'b');
      expect((await upload(app, c.id, a, c.auth, [trace])).statusCode).toBe(200);
      expect((await upload(app, c.id, b, c.auth, [wrk])).statusCode).toBe(200);
      const v = (await app.inject({ url: `/api/comparisons/${c.id}/requests?base=a&target=b` })).json() as RequestsView;
      expect(v.status).toBe('no-requests');
      expect(v.reason).toBe('stage "b" has no execution trace');
      expect(v.base.requests).toBeGreaterThan(100);
      expect(v.target.traces).toEqual([]);
      expect(v.target.histogram.every((n) => n === 0)).toBe(true);
    } finally {
      await app.close();
    }
  }, 120_000);
});
