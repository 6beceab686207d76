/**
 * "Add from a profiler" from Pyroscope, against a stand-in querier on 127.0.0.1 whose answers were
 * built with Pyroscope's published API types (fixtures/pyroscope/gen, from the demo's pooled
 * run-1..3 files; helpers/pyroscope-stand-in.ts answers by procedure, type and window): every Go
 * kind Pyroscope holds is imported, each of its sample types equal to what go tool pprof -top prints
 * on the same files, the delta kinds merged over the window and the snapshot kinds (heap, goroutine)
 * taken from the one profile nearest the run's end, never summed.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StagediffApp } from '../../src/app.ts';
import { addStage, createComparison, testApp } from '../helpers/app.ts';
import { parseTopRows } from '../helpers/pprof-text.ts';
import {
  CPU_ONLY_SELECTOR,
  DEMO_SELECTOR,
  PYROSCOPE_DIR,
  TWO_INSTANCES_SELECTOR,
  type StandIn,
  manifestType,
  startPyroscopeStandIn,
} from '../helpers/pyroscope-stand-in.ts';

let pyro: StandIn;
let app: StagediffApp;

beforeAll(async () => {
  pyro = await startPyroscopeStandIn();
  app = await testApp({ ANALYSIS_WORKERS: '0', PROFILER_HOSTS: `127.0.0.1:${pyro.port}` });
});
afterAll(async () => {
  await app.close();
  await pyro.close();
});

interface ImportReply {
  runs: {
    run: number;
    covered: unknown;
    profiles: {
      kind: string;
      mode: string;
      query: string;
      total: number;
      seriesTotal: number | null;
      scrapes: number;
      from: string;
      to: string;
      filename: string;
    }[];
  }[];
  skippedTypes: string[];
  results: { ok: boolean }[];
}

async function importInto(a: StagediffApp, name: string, payload: Record<string, unknown>) {
  const c = await createComparison(a, name);
  const stage = await addStage(a, c.id, c.auth, 'pooled');
  const r = await a.inject({
    method: 'POST',
    url: `/api/comparisons/${c.id}/stages/${stage}/import`,
    headers: c.auth,
    payload: { source: 'pyroscope', url: `http://127.0.0.1:${pyro.port}`, query: DEMO_SELECTOR, ...payload },
  });
  return { c, stage, r };
}

/** The kept total of go tool pprof -top text ("… of X total"). */
function pprofTotal(text: string): number {
  const m = / of (-?\d+)[a-zA-Z]* total/.exec(text);
  if (!m) throw new Error('no total in pprof -top text');
  return Number(m[1]);
}

/** The stage's top for a kind and sample type equals go tool pprof -top's rows and total. */
async function expectTop(commonId: string, stage: string, kind: string, sampleType: string, expectedFile: string) {
  const top = await app.inject({
    url: `/api/comparisons/${commonId}/top?stage=${stage}&kind=${kind}&sampleType=${sampleType}`,
  });
  expect(top.statusCode, top.body).toBe(200);
  const t = top.json() as { kind: string; total: number; rows: { name: string; flat: number; cum: number }[] };
  const text = readFileSync(`${PYROSCOPE_DIR}expected/${expectedFile}`, 'utf8');
  const expected = parseTopRows(text);
  expect(t.kind).toBe(kind);
  expect(t.total, `${kind} ${sampleType} total`).toBe(pprofTotal(text));
  const byName = new Map(t.rows.map((x) => [x.name, [x.flat, x.cum]]));
  expect(expected.length).toBeGreaterThan(0);
  for (const [name, flat, cum] of expected)
    expect(byName.get(name), `${kind} ${sampleType}: ${name}`).toEqual([flat, cum]);
  return t;
}

const WINDOW = { from: '2026-11-29T03:40:00Z', to: '2026-11-29T04:05:00Z' };

describe('import from Pyroscope', () => {
  it('imports every Go kind it holds, each sample type equal to go tool pprof -top on the same files', async () => {
    const { c, stage, r } = await importInto(app, 'from pyroscope', { ...WINDOW, runs: 1 });
    expect(r.statusCode, r.body).toBe(200);
    const out = r.json() as ImportReply;
    expect(out.results.every((x) => x.ok)).toBe(true);
    const run = out.runs[0]!;
    // Pyroscope's API gives no profile's own span: no covered window is claimed
    expect(run.covered).toBeNull();
    expect(run.profiles.map((p) => [p.kind, p.mode, p.filename])).toEqual([
      ['cpu', 'delta', 'run-1-cpu.pb.gz'],
      ['allocs', 'delta', 'run-1-allocs.pb.gz'],
      ['heap', 'snapshot', 'run-1-heap.pb.gz'],
      ['mutex', 'delta', 'run-1-mutex.pb.gz'],
      ['block', 'delta', 'run-1-block.pb.gz'],
      ['goroutine', 'snapshot', 'run-1-goroutine.pb.gz'],
    ]);
    // a type no Go kind takes is reported, not imported
    expect(out.skippedTypes).toEqual(['memory:alloc_in_new_tlab_bytes:bytes:space:bytes']);

    const cpu = run.profiles[0]!;
    expect(cpu.total).toBe(21_510_000_000);
    // the series' points (one per file, its total) in the window add up to the same CPU
    expect(cpu.seriesTotal).toBe(21_510_000_000);
    expect(cpu.scrapes).toBe(3);
    const types = pyro.asked.find((a) => a.path.endsWith('/ProfileTypes'))!;
    expect(types.contentType).toBe('application/proto');
    expect(types.fields).toEqual({ 1: Date.parse(WINDOW.from), 2: Date.parse(WINDOW.to) });
    const merge = pyro.asked.find(
      (a) => a.path.endsWith('/SelectMergeProfile') && a.fields[1] === 'process_cpu:cpu:nanoseconds:cpu:nanoseconds',
    )!;
    expect(merge.contentType).toBe('application/proto');
    expect(merge.fields).toEqual({
      1: 'process_cpu:cpu:nanoseconds:cpu:nanoseconds',
      2: DEMO_SELECTOR,
      3: Date.parse(WINDOW.from),
      4: Date.parse(WINDOW.to),
    });

    const t = await expectTop(c.id, stage, 'cpu', 'cpu', 'cpu.pprof-top.txt');
    const cpuRows = parseTopRows(readFileSync(`${PYROSCOPE_DIR}expected/cpu.pprof-top.txt`, 'utf8'));
    expect(t.rows.slice(0, 10).map((x) => x.name)).toEqual(cpuRows.slice(0, 10).map((x) => x[0]));
    await expectTop(c.id, stage, 'cpu', 'samples', 'samples.pprof-top.txt');
    // alloc_objects and alloc_space, fetched apart, joined stack by stack into one allocs file
    await expectTop(c.id, stage, 'allocs', 'alloc_objects', 'alloc_objects.pprof-top.txt');
    await expectTop(c.id, stage, 'allocs', 'alloc_space', 'alloc_space.pprof-top.txt');
    await expectTop(c.id, stage, 'mutex', 'contentions', 'mutex-contentions.pprof-top.txt');
    await expectTop(c.id, stage, 'mutex', 'delay', 'mutex-delay.pprof-top.txt');
    await expectTop(c.id, stage, 'block', 'contentions', 'block-contentions.pprof-top.txt');
    await expectTop(c.id, stage, 'block', 'delay', 'block-delay.pprof-top.txt');
    expect(run.profiles[1]!.total).toBe(
      pprofTotal(readFileSync(`${PYROSCOPE_DIR}expected/alloc_space.pprof-top.txt`, 'utf8')),
    );

    // Snapshots: three in the window, the run's file is the last one (run-3's), not their sum.
    for (const [kind, type, file] of [
      ['heap', 'inuse_space', 'inuse_space.run-3.pprof-top.txt'],
      ['heap', 'inuse_objects', 'inuse_objects.run-3.pprof-top.txt'],
      ['goroutine', 'goroutine', 'goroutine.run-3.pprof-top.txt'],
    ] as const) {
      const top = await expectTop(c.id, stage, kind, type, file);
      const m = manifestType(
        type === 'goroutine'
          ? 'goroutine:goroutine:count:goroutine:count'
          : `memory:${type}:${type === 'inuse_space' ? 'bytes' : 'count'}:space:bytes`,
      );
      const sum = m.profiles.reduce((a, p) => a + p.total, 0);
      expect(top.total).toBe(m.profiles[2]!.total);
      expect(top.total).toBeLessThan(sum);
    }
    const heap = run.profiles[2]!;
    const last = manifestType('memory:inuse_space:bytes:space:bytes').profiles[2]!;
    expect(heap.scrapes).toBe(1);
    expect(heap.from).toBe(heap.to);
    // its instant is the 1 s step holding run-3's heap profile, and the merge asked for that step only
    expect(Date.parse(heap.to)).toBeGreaterThanOrEqual(last.timeMs);
    expect(Date.parse(heap.to) - last.timeMs).toBeLessThan(1000);
    const heapMerge = pyro.asked.find(
      (a) => a.path.endsWith('/SelectMergeProfile') && a.fields[1] === 'memory:inuse_space:bytes:space:bytes',
    )!;
    expect(Number(heapMerge.fields[4]) - Number(heapMerge.fields[3])).toBe(999);
  });

  it('splits a window into runs: each delta run its own profiles, each snapshot the nearest to its end', async () => {
    const { r } = await importInto(app, 'pyroscope runs', {
      from: '2026-11-29T03:45:00Z',
      to: '2026-11-29T03:53:00Z',
      runs: 3,
    });
    expect(r.statusCode, r.body).toBe(200);
    const out = r.json() as ImportReply;
    expect(out.runs).toHaveLength(3);
    const space = manifestType('memory:alloc_space:bytes:space:bytes');
    const inuse = manifestType('memory:inuse_space:bytes:space:bytes');
    const goroutines = manifestType('goroutine:goroutine:count:goroutine:count');
    const mutex = manifestType('mutex:delay:nanoseconds:contentions:count');
    out.runs.forEach((run, k) => {
      const by = new Map(run.profiles.map((p) => [p.kind, p]));
      expect([...by.keys()].sort()).toEqual(['allocs', 'block', 'cpu', 'goroutine', 'heap', 'mutex']);
      expect(by.get('allocs')!.total).toBe(space.profiles[k]!.total);
      expect(by.get('allocs')!.seriesTotal).toBe(space.profiles[k]!.total);
      expect(by.get('mutex')!.total).toBe(mutex.profiles[k]!.total);
      expect(by.get('heap')!.total).toBe(inuse.profiles[k]!.total);
      expect(by.get('goroutine')!.total).toBe(goroutines.profiles[k]!.total);
    });
  });

  it("gives the stage's What changed every kind: deltas per second of the run, snapshots as they are", async () => {
    const c = await createComparison(app, 'pyroscope what changed');
    const ids: string[] = [];
    // run-1's profiles alone, then run-3's alone: 180 s windows each
    for (const [name, from, to] of [
      ['early', '2026-11-29T03:45:00Z', '2026-11-29T03:48:00Z'],
      ['late', '2026-11-29T03:50:00Z', '2026-11-29T03:53:00Z'],
    ] as const) {
      const stage = await addStage(app, c.id, c.auth, name);
      ids.push(stage);
      const r = await app.inject({
        method: 'POST',
        url: `/api/comparisons/${c.id}/stages/${stage}/import`,
        headers: c.auth,
        payload: { source: 'pyroscope', url: `http://127.0.0.1:${pyro.port}`, query: DEMO_SELECTOR, from, to, runs: 1 },
      });
      expect(r.statusCode, r.body).toBe(200);
    }
    const expected = {
      cpu: ['process_cpu:cpu:nanoseconds:cpu:nanoseconds', 'per-second'],
      allocs: ['memory:alloc_space:bytes:space:bytes', 'per-second'],
      heap: ['memory:inuse_space:bytes:space:bytes', 'absolute'],
      mutex: ['mutex:delay:nanoseconds:contentions:count', 'per-second'],
      block: ['block:delay:nanoseconds:contentions:count', 'per-second'],
      goroutine: ['goroutine:goroutine:count:goroutine:count', 'absolute'],
    } as const;
    for (const [kind, [type, normalisation]] of Object.entries(expected)) {
      const r = await app.inject({
        url: `/api/comparisons/${c.id}/changes?base=${ids[0]}&target=${ids[1]}&kind=${kind}&functions=on`,
      });
      expect(r.statusCode, r.body).toBe(200);
      const f = (
        r.json() as {
          functions: {
            status: string;
            kind: string;
            normalisation: string;
            baseTotal: number;
            targetTotal: number;
            changes: unknown[];
          };
        }
      ).functions;
      expect([f.status, f.kind, f.normalisation], kind).toEqual(['ok', kind, normalisation]);
      const m = manifestType(type);
      const per = normalisation === 'per-second' ? 180 : 1;
      expect(f.baseTotal, kind).toBeCloseTo(m.profiles[0]!.total / per, 6);
      expect(f.targetTotal, kind).toBeCloseTo(m.profiles[2]!.total / per, 6);
      expect(f.changes.length, kind).toBeGreaterThan(0);
    }
  });

  it('refuses, naming PROFILER_MAX_FETCHES, an import that would need more fetches, before fetching them', async () => {
    const small = await testApp({
      ANALYSIS_WORKERS: '0',
      PROFILER_HOSTS: `127.0.0.1:${pyro.port}`,
      PROFILER_MAX_FETCHES: '30',
    });
    try {
      const before = pyro.asked.length;
      const c = await createComparison(small, 'pyroscope budget');
      const stage = await addStage(small, c.id, c.auth, 'pooled');
      const r = await small.inject({
        method: 'POST',
        url: `/api/comparisons/${c.id}/stages/${stage}/import`,
        headers: c.auth,
        payload: {
          source: 'pyroscope',
          url: `http://127.0.0.1:${pyro.port}`,
          query: DEMO_SELECTOR,
          ...WINDOW,
          runs: 3,
        },
      });
      expect(r.statusCode, r.body).toBe(413);
      expect(r.json().error.message).toContain('PROFILER_MAX_FETCHES');
      expect(r.json().error.param).toBe('runs');
      // 11 types × (1 series + 3 merges) + 1 > 30: only ProfileTypes was asked
      expect(pyro.asked.slice(before).map((a) => a.path)).toEqual(['/querier.v1.QuerierService/ProfileTypes']);
    } finally {
      await small.close();
    }
  });

  it('answers a selector with no profiles with a 4xx naming the query', async () => {
    const { r } = await importInto(app, 'pyroscope nothing', { ...WINDOW, runs: 1, query: '{service_name="other"}' });
    expect(r.statusCode, r.body).toBe(422);
    expect(r.json().error.message).toContain('query:');
    expect(r.json().error.message).toContain('{service_name="other"}');
    expect(r.json().error.param).toBe('query');
  });

  it('refuses a snapshot kind whose selector matches several instances, naming the query', async () => {
    const { r } = await importInto(app, 'pyroscope two instances', {
      ...WINDOW,
      runs: 1,
      query: TWO_INSTANCES_SELECTOR,
    });
    expect(r.statusCode, r.body).toBe(422);
    expect(r.json().error.param).toBe('query');
    expect(r.json().error.message).toContain('memory:inuse_space:bytes:space:bytes has 2 series');
    expect(r.json().error.message).toContain('instance=');
  });

  it('imports only the kinds the selector has profiles of', async () => {
    const { r } = await importInto(app, 'pyroscope cpu only', { ...WINDOW, runs: 1, query: CPU_ONLY_SELECTOR });
    expect(r.statusCode, r.body).toBe(200);
    const out = r.json() as ImportReply;
    expect(out.runs[0]!.profiles.map((p) => p.filename)).toEqual(['run-1-cpu.pb.gz']);
    expect(out.runs[0]!.profiles[0]!.total).toBe(21_510_000_000);
  });
});
