/**
 * Per-request figures count the requests a stage served during each profile's window: from a load
 * test's own timeline when the run records absolute times and spans the window (vegeta, k6), else the
 * run the profile was captured with (its rps × the profile's duration), else the stage's rps × its
 * duration. A stage of several profiles sums its profiles' windows.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StagediffApp } from '../../src/app.ts';
import { ingest } from '../../src/ingest/detect.ts';
import { parsePprof } from '../../src/ingest/pprof/index.ts';
import { total } from '../../src/analysis/flat-cum.ts';
import type { LoadTestRun, LoadTestSummary } from '../../src/model/loadtest.ts';
import type { Artifact, StageWithArtifacts } from '../../src/store/index.ts';
import {
  describeDivisor,
  perRequest,
  profileRequests,
  requestsInWindow,
  runNumberOf,
} from '../../src/services/requests.ts';
import { uploadName } from '../../src/cli/upload.ts';
import { stageRunSet } from '../../src/services/stage-runs.ts';
import { addStage, createComparison, testApp, upload } from '../helpers/app.ts';
import { fixturesDir } from '../helpers/paths.ts';

const log = `${fixturesDir}demo/baseline/fixed-rate/vegeta.jsonl`;

/** RFC 3339 with nanoseconds (as vegeta writes it) → epoch milliseconds, keeping sub-ms digits. */
function epochMs(ts: string): number {
  const m = /^(.*T\d\d:\d\d:\d\d)(?:\.(\d+))?(Z|[+-]\d\d:\d\d)$/.exec(ts)!;
  const frac = (m[2] ?? '').padEnd(9, '0');
  return Date.parse(`${m[1]}${m[3]}`) + Number(frac) / 1e6;
}

describe('requests during one profile', () => {
  it('counts the requests that started inside the profile window, from the run timeline', async () => {
    const parsed = await ingest({ name: 'vegeta.jsonl', path: log });
    if (parsed.kind !== 'loadtest') throw new Error('not a load test');
    expect(parsed.runs).toHaveLength(1);
    const run: LoadTestRun = parsed.runs[0]!;
    // Independent count from the raw log: requests whose start falls in [first + 1 s, first + 3 s).
    const starts = readFileSync(log, 'utf8')
      .trim()
      .split('\n')
      .map((l) => epochMs(JSON.parse(l).timestamp as string));
    const first = Math.min(...starts);
    const inWindow = starts.filter((t) => t >= first + 1000 && t < first + 3000).length;
    expect(inWindow).toBeGreaterThan(700);
    expect(Math.abs(requestsInWindow(run, first + 1000, 2000)! - inWindow)).toBeLessThanOrEqual(1);
    // A window outside the run, or one the run only touches, is not covered.
    expect(requestsInWindow(run, first - 3_600_000, 2000)).toBeNull();
    expect(requestsInWindow(run, first + 2000, 10_000)).toBeNull();

    // The order of preference, on a stage of one profile, the vegeta run and a wrk run of 7000 req/s.
    const profile = (timeNanos: number, durationNanos: number): Artifact =>
      ({
        id: `p${timeNanos}`,
        kind: 'profile',
        sha256: `${timeNanos}`,
        filename: 'cpu.pb.gz',
        summary: { durationNanos, timeNanos, sampleTypes: [], totals: {} },
      }) as unknown as Artifact;
    const wrk = {
      id: 'w',
      kind: 'loadtest',
      format: 'wrk',
      sha256: 'w',
      filename: 'wrk.txt',
      summary: { rps: 7000, requests: 70_000, latencyMs: {}, meta: {} } as unknown as LoadTestSummary,
    } as unknown as Artifact;
    const stage = (profiles: Artifact[]) =>
      ({ id: 's', name: 's', captures: [], artifacts: [wrk, ...profiles] }) as unknown as StageWithArtifacts;
    const loadTests = [{ artifact: wrk, run }];
    const inside = profile((first + 1000) * 1e6, 2e9);
    const st1 = stage([inside]);
    const [r1] = profileRequests(st1, [inside], loadTests, stageRunSet(st1, 'wrk'));
    expect(r1).toMatchObject({
      method: 'timeline',
      description: "timeline of vegeta-json within the profile's window",
    });
    expect(Math.abs(r1!.requests! - inWindow)).toBeLessThanOrEqual(1);
    // Outside the vegeta run: the profile's own run (the stage's only wrk run pairs with its only profile).
    const outside = profile((first - 3_600_000) * 1e6, 2e9);
    const st2 = stage([outside]);
    expect(profileRequests(st2, [outside], loadTests, stageRunSet(st2, 'wrk'))[0]).toMatchObject({
      requests: 14_000,
      method: 'paired-run',
    });
    // Two profiles for one run: no pairing, so no per-request value (never the stage's rps as a guess),
    // and the description says why.
    const other = profile((first - 7_200_000) * 1e6, 2e9);
    const st3 = stage([outside, other]);
    const both = profileRequests(st3, [outside, other], loadTests, stageRunSet(st3, 'wrk'));
    expect(both.map((r) => [r.method, r.requests])).toEqual([
      [null, null],
      [null, null],
    ]);
    expect(both[0]!.description).toBe(
      'no per-request value: no capture record, no run number in its name, no load-test timeline over its window',
    );
    expect(perRequest(both)).toMatchObject({ requests: null, measured: false });
    // No duration (a heap snapshot): no divisor.
    const snapshot = profile((first + 1000) * 1e6, 0);
    const st4 = stage([snapshot]);
    expect(profileRequests(st4, [snapshot], loadTests, stageRunSet(st4, 'wrk'))[0]!.requests).toBeNull();
  });
});

describe('requests during the profiles of a stage of several runs', () => {
  let app: StagediffApp;
  beforeAll(async () => {
    app = await testApp();
  });
  afterAll(async () => app.close());

  it("sums each CPU profile's own run by name, whatever order the files came in, not the fixed-rate run between them", async () => {
    const { id, auth } = await createComparison(app, 'runs');
    const st = await addStage(app, id, auth, 'baseline');
    const dir = `${fixturesDir}demo/baseline/`;
    // Runs 1–3 and the fixed-rate vegeta run, uploaded profiles first and runs backwards: the names pair them.
    const files = [
      'run-3/cpu.pb.gz',
      'run-1/cpu.pb.gz',
      'run-2/cpu.pb.gz',
      'fixed-rate/vegeta.jsonl',
      'run-3/wrk.txt',
      'run-2/wrk.txt',
      'run-1/wrk.txt',
    ];
    for (const f of files)
      expect((await upload(app, id, st, auth, [dir + f], [f.replace('/', '-')])).statusCode).toBe(200);
    const tree = (await app.ctx.store.getComparisonTree(id))!;
    const cpu = tree.stages[0]!.artifacts.filter((a) => a.kind === 'profile');
    expect(cpu.map((a) => a.filename)).toEqual(['run-3-cpu.pb.gz', 'run-1-cpu.pb.gz', 'run-2-cpu.pb.gz']);
    // Independently: wrk's printed Requests/sec × the profile's own duration, per run.
    const own = (a: Artifact) => {
      const k = /run-(\d)/.exec(a.filename)![1];
      const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(readFileSync(`${dir}run-${k}/wrk.txt`, 'utf8'))![1]);
      return rps * ((a.summary as { durationNanos: number }).durationNanos / 1e9);
    };
    const r = await app.ctx.analysis.perRequest(tree, tree.stages[0]!, cpu);
    expect(r.measured).toBe(true);
    expect(r.profiles.map((p) => [p.filename, p.method, p.run?.filename])).toEqual([
      ['run-3-cpu.pb.gz', 'paired-run', 'run-3-wrk.txt'],
      ['run-1-cpu.pb.gz', 'paired-run', 'run-1-wrk.txt'],
      ['run-2-cpu.pb.gz', 'paired-run', 'run-2-wrk.txt'],
    ]);
    for (const [i, a] of cpu.entries()) expect(r.profiles[i]!.requests).toBeCloseTo(own(a), 6);
    // The per-request diff divides by their sum.
    const d = (
      await app.inject({
        url: `/api/comparisons/${id}/diff?base=${st}&target=${st}&sampleType=cpu&mode=per-request&limit=1`,
      })
    ).json() as { perRequest: { baseRequests: number; method: string } };
    expect(d.perRequest.baseRequests).toBeCloseTo(
      cpu.reduce((x, a) => x + own(a), 0),
      6,
    );
    expect(d.perRequest.method).toBe(describeDivisor(r));
    expect(d.perRequest.method).toMatch(
      /^3 profiles, each: run 3 by name: run-3-wrk\.txt: its req\/s × the profile's duration; /,
    );
  });

  it('the demo’s six baseline runs uploaded in parallel and shuffled, without capture records, divide as the seeded demo', async () => {
    const { id, auth } = await createComparison(app, 'picker');
    const st = await addStage(app, id, auth, 'baseline');
    const dir = `${fixturesDir}demo/baseline/`;
    // As a browser's picker sends them: cpu-1…6.pb.gz and wrk-1…6.txt, one request per file, all at once.
    const files = [1, 2, 3, 4, 5, 6].flatMap((k) => [
      [`${dir}run-${k}/cpu.pb.gz`, `cpu-${k}.pb.gz`],
      [`${dir}run-${k}/wrk.txt`, `wrk-${k}.txt`],
    ]);
    const shuffled = [5, 10, 0, 7, 2, 11, 4, 9, 1, 6, 3, 8].map((i) => files[i]!);
    // One address, as one browser: a parse refused for the address's fair share (429) is sent again after
    // its Retry-After, as the page does.
    const send = async (path: string, name: string) => {
      for (let attempt = 0; ; attempt++) {
        const r = await upload(app, id, st, auth, [path], [name]);
        if (r.statusCode !== 429 || attempt >= 30) return r;
        await new Promise((done) => setTimeout(done, 1000 * Number(r.headers['retry-after'] ?? 1)));
      }
    };
    const results = await Promise.all(shuffled.map(([path, name]) => send(path!, name!)));
    for (const r of results) expect(r.statusCode, r.body).toBe(200);
    const tree = (await app.ctx.store.getComparisonTree(id))!;
    const cpu = tree.stages[0]!.artifacts.filter((a) => a.kind === 'profile');
    const r = await app.ctx.analysis.perRequest(tree, tree.stages[0]!, cpu);
    expect(r.measured).toBe(true);
    // CPU per request of each profile: its total (read from the file) over its own run's requests.
    const usPerRequest = new Map<string, number>();
    for (const [i, a] of cpu.entries()) {
      const k = /cpu-(\d)/.exec(a.filename)![1]!;
      expect(r.profiles[i]).toMatchObject({ method: 'paired-run', run: { filename: `wrk-${k}.txt` } });
      const p = parsePprof(readFileSync(`${dir}run-${k}/cpu.pb.gz`));
      const idx = p.sampleTypes.findIndex((t) => t.type === 'cpu');
      usPerRequest.set(k, total(p, idx) / r.profiles[i]!.requests! / 1000);
    }
    // The seeded demo (capture records) reads 303.2 and 350.1 µs/req for runs 5 and 6 (their capture.json's cpuMicrosPerRequest).
    expect(usPerRequest.get('5')!.toFixed(1)).toBe('303.2');
    expect(usPerRequest.get('6')!.toFixed(1)).toBe('350.1');
    // The same through the API: GET …/changes names each profile's run and divisor.
    const other = await addStage(app, id, auth, 'again');
    for (const k of [1, 2, 3, 4])
      await upload(
        app,
        id,
        other,
        auth,
        [`${dir}run-${k}/cpu.pb.gz`, `${dir}run-${k}/wrk.txt`],
        [`cpu-${k}.pb.gz`, `wrk-${k}.txt`],
      );
    const c = (await app.inject({ url: `/api/comparisons/${id}/changes?base=${st}&target=${other}` })).json();
    const five = c.perRequest.base.profiles.find((p: { filename: string }) => p.filename === 'cpu-5.pb.gz');
    expect(five).toMatchObject({ method: 'paired-run', run: { filename: 'wrk-5.txt' } });
    expect(five.description).toBe("run 5 by name: wrk-5.txt: its req/s × the profile's duration");
  });
});

describe('run numbers in file names', () => {
  it('reads run-5 anywhere, or a word-5 before the extension; nothing else', () => {
    for (const [name, n] of [
      ['cpu-5.pb.gz', 5],
      ['wrk-5.txt', 5],
      ['wrk_12.txt', 12],
      ['run-5-cpu.pb.gz', 5],
      ['pooled-run-3-wrk.txt', 3],
      ['run5-wrk.txt', 5],
      ['cpu.pb.gz', null],
      ['wrk.txt', null],
      ['profile-2026-11-28.pb.gz', null],
      ['go1.26-cpu.pb.gz', null],
      ['rerun-wrk.txt', null],
    ] as const)
      expect(runNumberOf(name), name).toBe(n);
    // `stagediff upload` folds a run folder into the name, as the page does.
    expect(uploadName('/tmp/x/run-5/cpu.pb.gz')).toBe('run-5-cpu.pb.gz');
    expect(uploadName('/tmp/x/pooled/cpu.pb.gz')).toBe('cpu.pb.gz');
  });
});
