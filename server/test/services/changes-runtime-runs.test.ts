/**
 * The runtime rows of GET …/changes, `stagediff report` and `stagediff check`, on fixtures/runtime-runs:
 * the demo service's baseline and pooled stages, four captures each with a CPU profile, an allocs delta,
 * an execution trace and runtime metrics over the same window under vegeta (per-request times). The
 * requests of each window are counted here from vegeta's own log, and the metrics' window deltas from the
 * raw scrapes in metrics.json, independently of the engine; the verdicts are benchstat's rule on them.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StagediffApp } from '../../src/app.ts';
import { estimate, verdict } from '../../src/analysis/significance.ts';
import { addStage, createComparison, testApp, upload } from '../helpers/app.ts';
import { runCli } from '../helpers/cli.ts';
import { fixturesDir } from '../helpers/paths.ts';

const DIR = join(fixturesDir, 'runtime-runs');
const STAGES = ['baseline', 'pooled'] as const;
const RUNS = [1, 2, 3, 4];
const runDir = (stage: string, k: number) => join(DIR, stage, `run-${k}`);
const FILES = ['cpu.pb.gz', 'allocs.pb.gz', 'trace.out', 'metrics.json', 'vegeta.jsonl'];

/** Wall-clock ms of an RFC 3339 time with nanoseconds (Date.parse keeps milliseconds only). */
function wallMs(ts: string): number {
  const m = /^(.*T\d\d:\d\d:\d\d)(\.\d+)?Z$/.exec(ts)!;
  return Date.parse(`${m[1]}Z`) + (m[2] ? Number(m[2]) * 1000 : 0);
}

/**
 * The requests vegeta's log puts inside [startMs, startMs + durMs): its requests by whole second after
 * the first request started, each second's share by its overlap with the window (the documented rule).
 */
function requestsIn(stage: string, k: number, startMs: number, durMs: number): number {
  const starts = readFileSync(join(runDir(stage, k), 'vegeta.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => wallMs((JSON.parse(l) as { timestamp: string }).timestamp));
  const t0 = Math.min(...starts);
  const perSecond = new Map<number, number>();
  for (const t of starts) {
    const b = Math.floor((t - t0) / 1000);
    perSecond.set(b, (perSecond.get(b) ?? 0) + 1);
  }
  let n = 0;
  for (const [b, count] of perSecond) {
    const bs = t0 + b * 1000;
    n += (count * Math.max(0, Math.min(bs + 1000, startMs + durMs) - Math.max(bs, startMs))) / 1000;
  }
  return n;
}

/** A metrics window read from the raw file: from the first scrape to the last, and a counter's increase. */
function metricsWindow(stage: string, k: number) {
  const f = JSON.parse(readFileSync(join(runDir(stage, k), 'metrics.json'), 'utf8')) as {
    start: string;
    scrapes: { t: number; error: string | null }[];
    series: { name: string; labels: Record<string, string>; values?: (number | null)[] }[];
  };
  expect(f.scrapes.every((s) => s.error === null)).toBe(true);
  const first = f.scrapes[0]!.t;
  const last = f.scrapes[f.scrapes.length - 1]!.t;
  const delta = (name: string) => {
    const v = f.series.find((s) => s.name === name && Object.keys(s.labels).length === 0)!.values!;
    return v[v.length - 1]! - v[0]!;
  };
  return { startMs: Date.parse(f.start) + first, durMs: last - first, delta };
}

function close(actual: number, expected: number, what: string) {
  expect(Math.abs(actual - expected) / Math.abs(expected), `${what}: ${actual} vs ${expected}`).toBeLessThan(1e-6);
}

describe('runtime rows in the change engine, on captures of traces, metrics and a timed load together', () => {
  let app: StagediffApp;
  let id: string;
  const changes = async (q: string) => (await app.inject({ url: `/api/comparisons/${id}/changes?${q}` })).json();

  beforeAll(async () => {
    app = await testApp();
    const c = await createComparison(app, 'runtime runs');
    id = c.id;
    for (const stage of STAGES) {
      const sid = await addStage(app, id, c.auth, stage);
      for (const k of RUNS) {
        const r = await upload(
          app,
          id,
          sid,
          c.auth,
          FILES.map((f) => join(runDir(stage, k), f)),
        );
        expect(r.statusCode, r.body).toBe(200);
      }
    }
  });
  afterAll(async () => app.close());

  it('every trace and metrics window is divided by the requests vegeta served inside it', async () => {
    const rt = (await app.inject({ url: `/api/comparisons/${id}/runtime?base=baseline&target=pooled` })).json();
    expect(rt.normalisation).toBe('per-request');
    for (const [side, stage] of [
      [rt.base, 'baseline'],
      [rt.target, 'pooled'],
    ] as const) {
      expect(side.traces).toHaveLength(4);
      expect(side.metrics).toHaveLength(4);
      side.traces.forEach(
        (
          t: {
            requests: number;
            divisor: string;
            wallClock: { start: string; source: string };
            summary: { startTime: string; spanNanos: number };
          },
          i: number,
        ) => {
          expect([t.divisor, t.wallClock.source]).toEqual(['timeline', 'trace-clock']);
          expect(t.wallClock.start).toBe(t.summary.startTime);
          close(
            t.requests,
            requestsIn(stage, i + 1, Date.parse(t.summary.startTime), t.summary.spanNanos / 1e6),
            `${stage} trace ${i + 1}`,
          );
        },
      );
      side.metrics.forEach((m: { requests: number; divisor: string; windowStart: string }, i: number) => {
        const w = metricsWindow(stage, i + 1);
        expect(m.divisor).toBe('timeline');
        expect(Date.parse(m.windowStart)).toBe(w.startMs);
        close(m.requests, requestsIn(stage, i + 1, w.startMs, w.durMs), `${stage} metrics ${i + 1}`);
      });
    }
  });

  it('GET …/changes carries the runtime rows, their values per window and benchstat’s verdicts', async () => {
    const c = await changes('base=baseline&target=pooled');
    const rt = (await app.inject({ url: `/api/comparisons/${id}/runtime?base=baseline&target=pooled` })).json();
    expect(c.runtime.normalisation).toBe('per-request');
    expect(c.runtime.windows).toEqual({ base: { traces: 4, metrics: 4 }, target: { traces: 4, metrics: 4 } });
    // One engine: the Runtime tab's rows are the same rows.
    expect(c.runtime.figures).toEqual(rt.figures);
    expect(c.runtime.allocsCrossCheck).toEqual(rt.allocsCrossCheck);
    const by = (m: string) => c.runtime.figures.find((f: { metric: string }) => f.metric === m);
    expect(c.runtime.figures.map((f: { metric: string }) => f.metric)).toEqual([
      'sched-wait-mean',
      'sched-wait-p99',
      'gc-stw',
      'blocked-channel',
      'blocked-select',
      'blocked-sync',
      'blocked-network',
      'syscall',
      'goroutines-created',
      // the traced requests' latency and where the slowest 1 % spent it (model/trace-requests.ts)
      'request-p50',
      'request-p90',
      'request-p99',
      'request-tail-running',
      'request-tail-runnable',
      'request-tail-syscall',
      'request-tail-network',
      // (no request of these runs waited on locks, channels, select, sleep or the GC: no such rows)
      'gc-cpu',
      'allocated-bytes',
      'sched-latency-p99',
    ]);
    // The metrics rows from the raw scrapes and vegeta's log.
    for (const [metric, series, scale] of [
      ['gc-cpu', 'go_cpu_classes_gc_total_cpu_seconds_total', 1e9],
      ['allocated-bytes', 'go_gc_heap_allocs_bytes_total', 1],
    ] as const) {
      const f = by(metric);
      expect(f.unit).toBe(metric === 'gc-cpu' ? 'nanoseconds/request' : 'bytes/request');
      const values = (stage: string) =>
        RUNS.map((k) => {
          const w = metricsWindow(stage, k);
          return (w.delta(series) * scale) / requestsIn(stage, k, w.startMs, w.durMs);
        });
      const bv = values('baseline');
      const tv = values('pooled');
      for (const [i, v] of bv.entries()) close(f.base.values[i], v, `${metric} base ${i}`);
      for (const [i, v] of tv.entries()) close(f.target.values[i], v, `${metric} target ${i}`);
      const want = verdict(bv, tv);
      expect([f.verdict.status, f.verdict.p, f.verdict.nBase, f.verdict.nTarget]).toEqual([want.status, want.p, 4, 4]);
      close(f.verdict.ratio, estimate(tv)!.median / estimate(bv)!.median, `${metric} ratio`);
    }
    // A trace total over the trace's own requests.
    const g = by('goroutines-created');
    expect(g.unit).toBe('count/request');
    const traces = rt.base.traces as { summary: { goroutines: { created: number } }; requests: number }[];
    for (const [i, t] of traces.entries())
      close(g.base.values[i], t.summary.goroutines.created / t.requests, `goroutines ${i}`);
    // Pooled reuses upstream connections: fewer goroutines and fewer bytes per request, in every run.
    expect([g.verdict.status, g.direction]).toEqual(['significant', 'improvement']);
    expect(by('allocated-bytes').verdict.status).toBe('significant');
    // The runtime's own count of allocated bytes beside the sampled allocs profile's.
    const alloc = c.figures.find((f: { metric: string }) => f.metric === 'alloc-per-request');
    // The allocs deltas are stamped with their window's end (net/http/pprof's second snapshot), the CPU
    // profiles with its start: both count the requests vegeta served inside their own window.
    const ca = await changes('base=baseline&target=pooled&kind=allocs');
    const divisors = (ca.perRequest.base.profiles as { filename: string; method: string | null }[]).map((p) => [
      p.filename,
      p.method,
    ]);
    expect(divisors.filter(([f]) => f === 'allocs.pb.gz')).toEqual(RUNS.map(() => ['allocs.pb.gz', 'timeline']));
    close(c.runtime.allocsCrossCheck.base, by('allocated-bytes').base.median / alloc.base.median, 'cross-check base');
    // Only significant runtime rows join "what changed".
    expect(c.sentences).toContainEqual(expect.stringMatching(/^Goroutines created −\d+ % .*p=0\.029, n=4\+4\)$/));
    expect(c.sentences.some((s: string) => s.startsWith('Scheduling wait (P99)'))).toBe(
      by('sched-wait-p99').verdict.status === 'significant',
    );
  });

  it('per second of window when a window lacks its run; no runtime key when neither stage has any', async () => {
    const c = await createComparison(app, 'no load');
    const b = await addStage(app, c.id, c.auth, 'baseline');
    const t = await addStage(app, c.id, c.auth, 'pooled');
    expect((await upload(app, c.id, b, c.auth, [join(runDir('baseline', 1), 'metrics.json')])).statusCode).toBe(200);
    expect((await upload(app, c.id, t, c.auth, [join(runDir('pooled', 1), 'metrics.json')])).statusCode).toBe(200);
    const o = (await app.inject({ url: `/api/comparisons/${c.id}/changes?base=baseline&target=pooled` })).json();
    expect(o.runtime.normalisation).toBe('per-second');
    const w = metricsWindow('baseline', 1);
    const gc = o.runtime.figures.find((f: { metric: string }) => f.metric === 'gc-cpu');
    expect(gc.unit).toBe('nanoseconds/s');
    close(gc.base.values[0], (w.delta('go_cpu_classes_gc_total_cpu_seconds_total') * 1e9) / (w.durMs / 1000), 'gc/s');
    expect(gc.verdict.status).toBe('single-run');
    // metrics only: no trace rows
    expect(o.runtime.figures.map((f: { metric: string }) => f.metric)).toEqual([
      'gc-cpu',
      'allocated-bytes',
      'sched-latency-p99',
    ]);

    const plain = await createComparison(app, 'profiles only');
    for (const stage of STAGES) {
      const sid = await addStage(app, plain.id, plain.auth, stage);
      const files = ['cpu.pb.gz', 'vegeta.jsonl'].map((f) => join(runDir(stage, 1), f));
      expect((await upload(app, plain.id, sid, plain.auth, files)).statusCode).toBe(200);
    }
    const p = (await app.inject({ url: `/api/comparisons/${plain.id}/changes?base=baseline&target=pooled` })).json();
    expect(Object.keys(p)).not.toContain('runtime');
  });
});

describe('stagediff report and check read the runtime rows from the same engine', () => {
  const outs = (stages: readonly string[]) => stages.flatMap((s) => RUNS.flatMap((k) => ['--out', runDir(s, k)]));

  it('report: JSON schema 3 with the runtime rows; Markdown a Runtime section', async () => {
    const js = await runCli([
      'report',
      ...outs(STAGES),
      '--base',
      'baseline',
      '--target',
      'pooled',
      '--format',
      'json',
    ]);
    expect(js.status, js.stderr).toBe(0);
    const r = JSON.parse(js.stdout);
    expect(r.schema).toBe('stagediff-report/5');
    expect(r.runtime.normalisation).toBe('per-request');
    const g = r.runtime.figures.find((f: { metric: string }) => f.metric === 'goroutines-created');
    expect([g.verdict.status, g.verdict.p]).toEqual(['significant', 2 / 70]);
    const md = await runCli(['report', ...outs(STAGES), '--base', 'baseline', '--target', 'pooled']);
    expect(md.status, md.stderr).toBe(0);
    expect(md.stdout).toContain('### Runtime');
    expect(md.stdout).toContain('totals per request (every window has its own load run)');
    expect(md.stdout).toMatch(
      /Allocated bytes per request, runtime metrics ÷ allocs profile: base ×[\d.]+, target ×[\d.]+\./,
    );
    expect(md.stdout).toMatch(/- 🟢 \*\*Goroutines created\*\* improved: −\d+ %/);
  });

  it('check: a runtime row is gated only by a rule naming it, with the engine’s verdict', async () => {
    // pooled → baseline: baseline allocates more per request, significantly.
    const fail = await runCli([
      'check',
      ...outs(STAGES),
      '--base',
      'pooled',
      '--target',
      'baseline',
      '--fail-on',
      'allocated-bytes:+10%',
    ]);
    expect(fail.status, fail.stdout + fail.stderr).toBe(1);
    expect(fail.stdout).toMatch(
      /^FAIL +allocated-bytes:\+10% +Allocated \(runtime metrics\) .*significant \(p=0\.029, n=4\+4\)/m,
    );
    const pass = await runCli([
      'check',
      ...outs(STAGES),
      '--base',
      'pooled',
      '--target',
      'baseline',
      '--fail-on',
      'p99:+1000%',
    ]);
    expect(pass.status, pass.stdout + pass.stderr).toBe(0);
    const unknown = await runCli(['check', ...outs(STAGES), '--fail-on', 'gc-cycles:+5%']);
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toContain('unknown metric "gc-cycles"');
    expect(unknown.stderr).toContain('sched-wait-p99');
  });
});
