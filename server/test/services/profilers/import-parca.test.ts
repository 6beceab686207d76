/**
 * The Parca importer against Parca v0.28.0's recorded answers (fixtures/parca: a real Parca scraping
 * the demo service's pooled stage under wrk, every 10 s). The window's CPU is the sum of the scrapes
 * that start and end inside it, the allocations last − first of its snapshots, and the top functions
 * of the imported CPU are those go tool pprof ranks on the same scrapes merged.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { flatCum } from '../../../src/analysis/flat-cum.ts';
import { mergeProfiles } from '../../../src/analysis/merge.ts';
import { ProfilerError, guardedFetcher } from '../../../src/services/profilers/guarded-fetch.ts';
import { type ImportOutcome, importFromParca } from '../../../src/services/profilers/import-parca.ts';
import { parseTimeMs } from '../../../src/services/profilers/parca.ts';
import { coveredMs, cumulativePairs, planRuns } from '../../../src/services/profilers/window.ts';
import { parcaAnswers, parcaWindow, replayFetcher, startParcaReplay } from '../../helpers/parca-replay.ts';
import { findGo, fixturesDir } from '../../helpers/paths.ts';
import { parseTopAll, parseTopRows, parseTopShown } from '../../helpers/pprof-text.ts';

const go = findGo();
const fromMs = Date.parse(parcaWindow.from);
const toMs = Date.parse(parcaWindow.to);
const tmp = mkdtempSync(join(tmpdir(), 'stagediff-parca-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** The recorded query_range points of a type, straight from Parca's answer. */
function series(type: string): { t: number; value: number; durationMs: number }[] {
  const a = parcaAnswers().find(
    (x) => x.request.startsWith('/api/profiles/query_range') && x.request.includes(encodeURIComponent(type)),
  )!;
  const body = JSON.parse(a.body) as {
    series: { samples: { timestamp: string; value: string; duration: string }[] }[];
  };
  return body.series.flatMap((s) =>
    s.samples.map((p) => ({
      t: parseTimeMs(p.timestamp),
      value: Number(p.value),
      durationMs: Number(p.duration) / 1e6,
    })),
  );
}

async function runImport(): Promise<ImportOutcome> {
  return importFromParca(replayFetcher(), {
    url: new URL('http://127.0.0.1:7070'),
    selector: parcaWindow.selector,
    fromMs,
    toMs,
    runs: parcaWindow.runs,
  });
}

describe('import from Parca (recorded answers)', () => {
  it('takes the scrapes that start and end inside the window, one run of whole scrapes each', async () => {
    const out = await runImport();
    const cpu = series('process_cpu:cpu');
    const covered = cpu.filter((s) => s.t >= fromMs && s.t + s.durationMs <= toMs);
    // the recording holds a scrape starting inside the window that runs past its end: left out
    expect(cpu.some((s) => s.t >= fromMs && s.t <= toMs && s.t + s.durationMs > toMs)).toBe(true);
    expect(covered).toHaveLength(6);
    expect(out.runs).toHaveLength(6);
    out.runs.forEach((r, k) => {
      expect(r.covered!.startMs).toBe(covered[k]!.t);
      expect(r.covered!.seconds).toBeCloseTo(covered[k]!.durationMs / 1000, 9);
      const p = r.profiles.find((x) => x.kind === 'cpu')!;
      expect(p.scrapes).toBe(1);
      // CPU of a run: the query_range value of its scrape
      expect(p.seriesTotal).toBe(covered[k]!.value);
    });
    const coveredSeconds = out.runs.reduce((a, r) => a + r.covered!.seconds, 0);
    expect(coveredSeconds).toBeCloseTo(covered.reduce((a, s) => a + s.durationMs, 0) / 1000, 6);
    // the window's CPU: the sum of the covered scrapes' query_range values
    const seriesCpu = out.runs.reduce((a, r) => a + r.profiles.find((x) => x.kind === 'cpu')!.seriesTotal!, 0);
    expect(seriesCpu).toBe(covered.reduce((a, s) => a + s.value, 0));
    expect(seriesCpu).toBe(54_610_000_000);
    // Parca's pprof of a scrape can hold a few 10 ms samples fewer than its own series says (10.03 s
    // of 10.04 s …): the files carry what the pprof holds, 0.04 s (0.07 %) short of the series.
    const fileCpu = out.runs.reduce((a, r) => a + r.profiles.find((x) => x.kind === 'cpu')!.total, 0);
    expect(fileCpu).toBe(54_570_000_000);
    expect(Math.abs(fileCpu - seriesCpu) / seriesCpu).toBeLessThan(0.0015);
  });

  it('takes allocations, mutex and block delay as last − first of the snapshots inside the window', async () => {
    const out = await runImport();
    for (const [kind, type] of [
      ['allocs', 'memory:alloc_space'],
      ['mutex', 'mutex:delay'],
      ['block', 'block:delay'],
    ] as const) {
      const inside = series(type).filter((s) => s.t >= fromMs && s.t <= toMs);
      const lastMinusFirst = inside[inside.length - 1]!.value - inside[0]!.value;
      const sum = out.runs.reduce((a, r) => a + r.profiles.find((x) => x.kind === kind)!.total, 0);
      expect(sum, kind).toBe(lastMinusFirst);
      for (const r of out.runs) expect(r.profiles.find((x) => x.kind === kind)!.scrapes).toBe(2);
    }
    const alloc = series('memory:alloc_space').filter((s) => s.t >= fromMs && s.t <= toMs);
    expect(alloc[alloc.length - 1]!.value - alloc[0]!.value).toBe(7_700_613_676 - 1_545_331_322);
  });

  it('gives each file its covered time and duration, and heap/goroutine the snapshot nearest the run end', async () => {
    const out = await runImport();
    const { parsePprof } = await import('../../../src/ingest/pprof/index.ts');
    const files = new Map(out.files.map((f) => [f.filename, f.bytes]));
    for (const r of out.runs) {
      const cpu = parsePprof(files.get(`run-${r.run + 1}-cpu.pb.gz`)!);
      expect(cpu.timeNanos).toBe(r.covered!.startMs * 1e6);
      // the duration is the covered seconds (the CPU per second divides by it)
      expect(cpu.durationNanos).toBeCloseTo(r.covered!.seconds * 1e9, -3);
      const allocs = parsePprof(files.get(`run-${r.run + 1}-allocs.pb.gz`)!);
      expect(allocs.durationNanos).toBeGreaterThan(5e9);
      const heap = parsePprof(files.get(`run-${r.run + 1}-heap.pb.gz`)!);
      expect(heap.durationNanos).toBe(0);
      expect(cpu.comments[0]).toContain(`covered ${new Date(r.covered!.startMs).toISOString()}`);
    }
    expect(out.files.map((f) => f.filename.replace(/^run-\d+-/, '')).sort()).toEqual(
      [...Array(6)]
        .flatMap(() => ['allocs.pb.gz', 'block.pb.gz', 'cpu.pb.gz', 'goroutine.pb.gz', 'heap.pb.gz', 'mutex.pb.gz'])
        .sort(),
    );
  });

  it("ranks the top 10 as go tool pprof -top does on the covered scrapes' profiles merged", async () => {
    const out = await runImport();
    const mine: string[] = [];
    for (const f of out.files.filter((x) => x.filename.endsWith('-cpu.pb.gz'))) {
      const p = join(tmp, f.filename);
      writeFileSync(p, f.bytes);
      mine.push(p);
    }
    const expected = readFileSync(`${fixturesDir}parca/expected/cpu.pprof-top.txt`, 'utf8');
    const top10 = (text: string) =>
      parseTopRows(text)
        .slice(0, 10)
        .map((r) => r[0]);
    expect(top10(expected)).toHaveLength(10);
    if (!go) return;
    const r = spawnSync(go, ['tool', 'pprof', '-top', '-nodecount=0', '-nodefraction=0', '-edgefraction=0', ...mine], {
      encoding: 'utf8',
      env: { ...process.env, PPROF_BINARY_PATH: '/nonexistent', TZ: 'UTC' },
      maxBuffer: 1 << 26,
    });
    expect(r.status, r.stderr).toBe(0);
    expect(top10(r.stdout)).toEqual(top10(expected));
    expect(parseTopRows(r.stdout)).toEqual(parseTopRows(expected));
  });
  it("holds every sample type of a kind, in Go's order, each as go tool pprof -top -sample_index reads the same scrapes", async () => {
    const out = await runImport();
    // every type Parca had for the demo belongs to a kind: nothing skipped
    expect(out.skippedTypes).toEqual([]);
    const { parsePprof } = await import('../../../src/ingest/pprof/index.ts');
    const { profileKind } = await import('../../../src/analysis/sample-types.ts');
    const want: Record<string, string[]> = {
      cpu: ['samples', 'cpu'],
      allocs: ['alloc_objects', 'alloc_space'],
      heap: ['inuse_objects', 'inuse_space'],
      mutex: ['contentions', 'delay'],
      block: ['contentions', 'delay'],
      goroutine: ['goroutine'],
    };
    for (const [kind, types] of Object.entries(want)) {
      const files = out.files.filter((f) => f.filename.endsWith(`-${kind}.pb.gz`));
      expect(files, kind).toHaveLength(6);
      const paths: string[] = [];
      for (const f of files) {
        const p = parsePprof(f.bytes);
        expect(
          p.sampleTypes.map((t) => t.type),
          f.filename,
        ).toEqual(types);
        // the file keeps the kind stagediff reads it as, and opens on the type its figures are in
        expect(profileKind(p), f.filename).toBe(kind);
        expect(p.defaultSampleType).toBe(types[types.length - 1]);
        const path = join(tmp, `types-${f.filename}`);
        writeFileSync(path, f.bytes);
        paths.push(path);
      }
      for (const type of types) {
        const name = kind === 'cpu' && type === 'cpu' ? 'cpu.pprof-top.txt' : `${kind}.${type}.pprof-top.txt`;
        const expected = readFileSync(`${fixturesDir}parca/expected/${name}`, 'utf8');
        expect(parseTopRows(expected).length, name).toBeGreaterThan(5);
        if (!go) continue;
        const r = spawnSync(
          go,
          [
            'tool',
            'pprof',
            '-top',
            '-nodecount=0',
            '-nodefraction=0',
            '-edgefraction=0',
            `-sample_index=${type}`,
            ...paths,
          ],
          {
            encoding: 'utf8',
            env: { ...process.env, PPROF_BINARY_PATH: '/nonexistent', TZ: 'UTC' },
            maxBuffer: 1 << 26,
          },
        );
        expect(r.status, r.stderr).toBe(0);
        expect(parseTopShown(r.stdout), name).toBe(parseTopShown(expected));
        expect(parseTopRows(r.stdout), name).toEqual(parseTopRows(expected));
        // and stagediff's own flat and cum of the type, per function, are what go tool pprof reads
        // in those files, exactly (in the type's unit)
        const merged = mergeProfiles(files.map((f) => parsePprof(f.bytes)));
        const col = merged.sampleTypes.findIndex((t) => t.type === type);
        const unit = merged.sampleTypes[col]!.unit;
        const exact = spawnSync(
          go,
          [
            'tool',
            'pprof',
            '-top',
            '-nodecount=0',
            '-nodefraction=0',
            '-edgefraction=0',
            `-sample_index=${type}`,
            `-unit=${unit === 'nanoseconds' ? 'ns' : unit}`,
            ...paths,
          ],
          {
            encoding: 'utf8',
            env: { ...process.env, PPROF_BINARY_PATH: '/nonexistent', TZ: 'UTC' },
            maxBuffer: 1 << 26,
          },
        );
        expect(exact.status, exact.stderr).toBe(0);
        const ours = new Map(
          flatCum(merged, col)
            .filter((x) => x.flat !== 0 || x.cum !== 0)
            .map((x) => [x.name, [x.flat, x.cum]]),
        );
        expect(ours, name).toEqual(parseTopAll(exact.stdout));
      }
    }
    // the pinned totals of the second types: CPU samples are the cpu in 10 ms ticks
    const sum = (kind: string, type: string) =>
      out.files
        .filter((f) => f.filename.endsWith(`-${kind}.pb.gz`))
        .reduce((a, f) => {
          const p = parsePprof(f.bytes);
          const col = p.values[p.sampleTypes.findIndex((t) => t.type === type)]!;
          return a + col.reduce((x, v) => x + v, 0);
        }, 0);
    expect(sum('cpu', 'samples')).toBe(5457);
    expect(sum('cpu', 'cpu')).toBe(54_570_000_000);
    const objects = series('memory:alloc_objects').filter((s) => s.t >= fromMs && s.t <= toMs);
    expect(sum('allocs', 'alloc_objects')).toBe(objects[objects.length - 1]!.value - objects[0]!.value);
  });

  it('asks Parca one series per type and one profile per scrape or snapshot of each type, and refuses up front past PROFILER_MAX_FETCHES', async () => {
    const replay = replayFetcher();
    await importFromParca(replay, {
      url: new URL('http://127.0.0.1:7070'),
      selector: parcaWindow.selector,
      fromMs,
      toMs,
      runs: parcaWindow.runs,
    });
    const singles = replay.asked.filter((r) => r.includes('MODE_SINGLE'));
    // 1 types + 11 series (one per type) + 72 profiles: 6 + 6 CPU scrapes (samples, cpu), 7 snapshots
    // of each of the 6 cumulative types (alloc_objects, alloc_space; contentions, delay of mutex and
    // of block) for 6 runs, and one snapshot per run of inuse_objects, inuse_space and goroutine
    expect(replay.asked.filter((r) => r.startsWith('/api/profiles/types'))).toHaveLength(1);
    expect(replay.asked.filter((r) => r.startsWith('/api/profiles/query_range'))).toHaveLength(11);
    expect(singles).toHaveLength(72);
    expect(replay.asked).toHaveLength(84);
    // no profile is asked twice (a boundary snapshot two runs share is fetched once)
    expect(new Set(singles.filter((r) => !/inuse|goroutine/.test(r))).size).toBe(
      singles.filter((r) => !/inuse|goroutine/.test(r)).length,
    );
    const replayServer = await startParcaReplay();
    try {
      const url = new URL(`http://127.0.0.1:${replayServer.port}`);
      const guarded = (maxFetches: number) =>
        guardedFetcher({ hosts: [url.host], timeoutMs: 10_000, maxResponseBytes: 16 * 1024 * 1024, maxFetches });
      const ask = { url, selector: parcaWindow.selector, fromMs, toMs, runs: parcaWindow.runs };
      const e = await importFromParca(guarded(83), ask).catch((x: unknown) => x);
      expect(e).toBeInstanceOf(ProfilerError);
      expect((e as ProfilerError).status).toBe(413);
      expect((e as ProfilerError).param).toBe('runs');
      expect((e as ProfilerError).message).toContain('need 84 fetches');
      expect((e as ProfilerError).message).toContain('PROFILER_MAX_FETCHES');
      // refused before any profile was fetched: only the types and the series were asked
      expect(replayServer.requests).toHaveLength(12);
      expect(replayServer.requests.some((r) => r.includes('MODE_SINGLE'))).toBe(false);
      const ok = await importFromParca(guarded(84), ask);
      expect(ok.files).toHaveLength(36);
    } finally {
      await new Promise((r) => replayServer.server.close(r));
    }
  });
});

describe('window rules', () => {
  const scrape = (startS: number, durS = 10) => ({
    series: '',
    startMs: startS * 1000,
    durationMs: durS * 1000,
    value: 1,
  });
  it('refuses runs that would get no whole scrape, naming runs', () => {
    expect(() => planRuns(0, 30_000, 4, [scrape(0), scrape(10), scrape(20)])).toThrow(ProfilerError);
    try {
      planRuns(0, 30_000, 4, [scrape(0), scrape(10), scrape(20)]);
    } catch (e) {
      expect((e as ProfilerError).param).toBe('runs');
      expect((e as ProfilerError).message).toContain('3 whole scrapes');
    }
  });
  it('leaves out a scrape that ends past the window, however early it starts', () => {
    const plan = planRuns(0, 25_000, 2, [scrape(0), scrape(10), scrape(20)]);
    expect(plan.map((r) => r.covered!.seconds)).toEqual([10, 10]);
  });
  it('counts seconds two targets scraped at the same instant cover once', () => {
    expect(coveredMs([scrape(0), { ...scrape(0), series: 'instance=b' }, scrape(10)])).toBe(20_000);
    expect(
      planRuns(0, 20_000, 1, [scrape(0), { ...scrape(0), series: 'instance=b' }, scrape(10)])[0]!.covered!.seconds,
    ).toBe(20);
  });
  it('takes cumulative runs as consecutive differences adding up to last − first', () => {
    expect(cumulativePairs([3, 13, 23, 33], 0, 40, [1, 11, 21, 31], 'alloc_space')).toEqual([
      [3, 13],
      [13, 23],
      [23, 33],
    ]);
    expect(() => cumulativePairs([3, 13, 23], 0, 40, [1, 11, 21, 31], 'alloc_space')).toThrow(/3 snapshots for 3 runs/);
  });
});
