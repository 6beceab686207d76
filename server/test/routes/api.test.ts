/**
 * The HTTP API through app.inject: a story of three stages built from real files, its figures
 * checked against the parsers and against go tool pprof's answers, rights, and bad input.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StagediffApp } from '../../src/app.ts';
import { ingest } from '../../src/ingest/detect.ts';
import { parsePprof } from '../../src/ingest/pprof/index.ts';
import { flatCum, total } from '../../src/analysis/flat-cum.ts';
import type { LoadTestRun } from '../../src/model/loadtest.ts';
import { fixturesDir, samplePath } from '../helpers/paths.ts';
import { addStage, createComparison, multipart, testApp, upload } from '../helpers/app.ts';

const S = {
  beforeCpu: samplePath('pprof/go_httpserver_before_cpu.pb.gz'),
  afterCpu: samplePath('pprof/go_httpserver_after_cpu.pb.gz'),
  afterAllocs: samplePath('pprof/go_httpserver_after_allocs.pb.gz'),
  beforeAllocs: samplePath('pprof/go_httpserver_before_allocs.pb.gz'),
  beforeHeap: samplePath('pprof/go_httpserver_before_heap.pb.gz'),
  wrkBase: samplePath('loadtests/wrk/baseline-latency.txt'),
  wrkFast: samplePath('loadtests/wrk/fast-json-latency.txt'),
  wrkAsync: samplePath('loadtests/wrk/async-log-latency.txt'),
  heyCsv: samplePath('loadtests/hey/async-log-requests.csv'),
  truncated: samplePath('pprof/hostile/truncated_gzip.pb.gz'),
  xss: samplePath('pprof/hostile/xss_names.pb.gz'),
};

async function run(path: string): Promise<LoadTestRun> {
  const p = await ingest({ name: 'x', bytes: readFileSync(path) });
  if (p.kind !== 'loadtest') throw new Error('not a load test');
  expect(p.runs).toHaveLength(1);
  return p.runs[0]!;
}

let app: StagediffApp;
let id: string;
let auth: Record<string, string>;
let stages: string[];

beforeAll(async () => {
  app = await testApp();
  ({ id, auth } = await createComparison(app, 'JSON service'));
  stages = [
    await addStage(app, id, auth, 'baseline', 'encoding/json'),
    await addStage(app, id, auth, 'fast-json', 'append encoder'),
    await addStage(app, id, auth, 'async-log', 'log off the request path'),
  ];
  const ups = [
    await upload(app, id, stages[0]!, auth, [S.beforeCpu, S.wrkBase, S.beforeAllocs, S.beforeHeap]),
    await upload(app, id, stages[1]!, auth, [S.afterCpu, S.wrkFast, S.afterAllocs]),
    await upload(app, id, stages[2]!, auth, [S.afterCpu, S.wrkAsync, S.heyCsv]),
  ];
  for (const u of ups) expect(u.statusCode, u.body).toBe(200);
});
afterAll(async () => app.close());

describe('a three-stage story from real files', () => {
  it('lists stages and artifacts with detected formats', async () => {
    const r = await app.inject({ url: `/api/comparisons/${id}` });
    expect(r.statusCode).toBe(200);
    const c = r.json();
    expect(c.stages.map((s: { name: string }) => s.name)).toEqual(['baseline', 'fast-json', 'async-log']);
    expect(c.stages[0].artifacts.map((a: { format: string; kind: string }) => `${a.kind}/${a.format}`)).toEqual([
      'profile/pprof',
      'loadtest/wrk',
      'profile/pprof',
      'profile/pprof',
    ]);
    expect(c.stages[2].artifacts.map((a: { format: string }) => a.format)).toEqual(['pprof', 'wrk', 'hey-csv']);
    expect(c.readOnly).toBe(false);
    expect(c.url).toMatch(new RegExp(`/c/${id}$`));
  });

  it("stage table figures equal the parsers' figures, with verdicts vs previous and baseline", async () => {
    const t = (await app.inject({ url: `/api/comparisons/${id}/stage-table` })).json().rows;
    const base = (await run(S.wrkBase)).summary;
    const fast = (await run(S.wrkFast)).summary;
    expect(t[0]).toMatchObject({
      requests: base.requests,
      errors: base.errors,
      vsPrevious: null,
      vsBaseline: null,
      loadTests: 1,
      summary: 'single-run',
    });
    expect(t[0].figures.rps).toMatchObject({ n: 1, median: base.rps });
    expect(t[0].figures.p50.median).toBe(base.latencyMs.p50);
    expect(t[0].figures.p99.median).toBe(base.latencyMs.p99);
    expect(t[1].figures.rps.median).toBe(fast.rps);
    // One run a side: the change is measured, not judged.
    expect(t[1].vsPrevious.rps).toMatchObject({ status: 'single-run', nBase: 1, nTarget: 1, p: null });
    expect(t[1].vsPrevious.rps.ratio).toBeCloseTo(fast.rps! / base.rps!, 12);
    expect(t[1].vsBaseline.p99.ratio).toBeCloseTo(fast.latencyMs.p99! / base.latencyMs.p99!, 12);
    // CPU per request: the CPU profile's total over its wrk run's rps × the profile's duration.
    const cpu = parsePprof(readFileSync(S.beforeCpu));
    expect(t[0].figures.cpuPerRequest.median).toBeCloseTo(total(cpu, 1) / ((base.rps! * cpu.durationNanos) / 1e9), 6);
    // Stage 3 holds wrk and a hey per-request log: the row reads wrk only (the tool every stage has),
    // never a blend of a saturating run and a rate-limited one.
    const a = (await run(S.wrkAsync)).summary;
    expect(t[2]).toMatchObject({ requests: a.requests, loadTests: 1, summary: 'single-run' });
    expect(t[2].figures.rps.median).toBe(a.rps);
    expect(t[2].source).toMatchObject({ format: 'wrk', otherRuns: 1, headline: true });
  });

  it('absolute diff equals go tool pprof -diff_base', async () => {
    const r = await app.inject({
      url: `/api/comparisons/${id}/diff?base=${stages[0]}&target=${stages[1]}&sampleType=cpu&mode=absolute`,
    });
    expect(r.statusCode).toBe(200);
    const d = r.json();
    const ref = JSON.parse(readFileSync(samplePath('pprof/expected/diff/go_httpserver_cpu.diff.json'), 'utf8'));
    expect(d.mode).toBe('absolute');
    expect(d.unit).toBe('nanoseconds');
    expect(d.baseTotal).toBe(ref.base_total);
    expect(d.targetTotal).toBe(ref.after_total);
    const top = d.top
      .filter((x: { deltaFlat: number; deltaCum: number }) => x.deltaFlat !== 0 || x.deltaCum !== 0)
      .slice(0, 10);
    expect(
      top.map((x: { name: string; deltaFlat: number; deltaCum: number }) => ({
        name: x.name,
        flat: x.deltaFlat,
        cum: x.deltaCum,
      })),
    ).toEqual(ref.top10_by_flat);
    expect(d.tree.delta).toBe(ref.after_total - ref.base_total);
    expect(top.find((x: { name: string }) => x.name === 'main.appendJSONString').status).toBe('new');
    // limit and sort=cum: the first rows by |Δcum|, and how many there are in all.
    const byCum = (
      await app.inject({
        url: `/api/comparisons/${id}/diff?base=${stages[0]}&target=${stages[1]}&sampleType=cpu&mode=absolute&limit=3&sort=cum`,
      })
    ).json();
    expect(byCum.top).toHaveLength(3);
    expect(byCum.rowsTotal).toBe(d.top.length);
    expect(byCum.top.map((x: { name: string }) => x.name)).toEqual(
      ref.top10_by_cum.slice(0, 3).map((x: { name: string }) => x.name),
    );
  });

  it('per-request diff divides by the requests each stage served in the profile window', async () => {
    const d = (
      await app.inject({
        url: `/api/comparisons/${id}/diff?base=${stages[0]}&target=${stages[1]}&sampleType=cpu&mode=per-request`,
      })
    ).json();
    const base = parsePprof(readFileSync(S.beforeCpu));
    const after = parsePprof(readFileSync(S.afterCpu));
    const bReq = ((await run(S.wrkBase)).summary.rps! * base.durationNanos) / 1e9;
    const tReq = ((await run(S.wrkFast)).summary.rps! * after.durationNanos) / 1e9;
    expect(d.unit).toBe('nanoseconds/request');
    expect(d.perRequest.baseRequests).toBeCloseTo(bReq, 6);
    expect(d.perRequest.targetRequests).toBeCloseTo(tReq, 6);
    // Each side names the run its profile is divided by (the stage's only run, here).
    expect(d.perRequest.method).toBe(
      "base: the stage's only run, baseline-latency.txt: its req/s × the profile's duration; target: the stage's only run, fast-json-latency.txt: its req/s × the profile's duration",
    );
    // By hand, for one function: flat per request in each stage.
    const fn = 'encoding/json.appendString[go.shape.string]';
    const bFlat = flatCum(base, 1).find((r) => r.name === fn)!.flat;
    const row = d.top.find((r: { name: string }) => r.name === fn);
    expect(row.base.flat).toBeCloseTo(bFlat / bReq, 9);
    expect(row.target.flat).toBe(0);
    expect(row.deltaFlat).toBeCloseTo(-bFlat / bReq, 9);
    expect(d.baseTotal).toBeCloseTo(7010000000 / bReq, 6);
  });

  it('share and normalize modes, with warnings for cumulative sample types', async () => {
    const share = (
      await app.inject({
        url: `/api/comparisons/${id}/diff?base=${stages[0]}&target=${stages[1]}&sampleType=cpu&mode=share`,
      })
    ).json();
    expect(share.unit).toBe('fraction');
    expect(share.baseTotal).toBeCloseTo(1, 12);
    expect(share.targetTotal).toBeCloseTo(1, 12);
    const allocs = (
      await app.inject({
        url: `/api/comparisons/${id}/diff?base=${stages[0]}&target=${stages[1]}&sampleType=alloc_space&mode=absolute`,
      })
    ).json();
    expect(allocs.warnings.join(' ')).toMatch(/accumulates since the process started/);
    // The heap and allocs profiles of stage 1 share sample types: alloc_space comes from allocs only.
    const ref = JSON.parse(readFileSync(samplePath('pprof/expected/diff/go_httpserver_allocs.diff.json'), 'utf8'));
    expect(allocs.baseTotal).toBe(ref.base_total);
    expect(allocs.targetTotal).toBe(ref.after_total);
  });

  it('flamegraph, top, folded, trajectory, sandwich, timeline', async () => {
    const f = (
      await app.inject({
        url: `/api/comparisons/${id}/flamegraph?stage=${stages[0]}&sampleType=cpu&mode=absolute&minFraction=0.01`,
      })
    ).json();
    expect(f.tree.name).toBe('root');
    expect(f.tree.value).toBe(7010000000);
    expect(f.trim.prunedNodes).toBeGreaterThan(0);
    const full = (
      await app.inject({ url: `/api/comparisons/${id}/flamegraph?stage=${stages[0]}&sampleType=cpu&mode=absolute` })
    ).json();
    expect(full.trim.prunedNodes).toBe(0);
    // By default (mode auto) the stage's one profile, taken with its one run, reads per request.
    const perRequest = (
      await app.inject({ url: `/api/comparisons/${id}/flamegraph?stage=${stages[0]}&sampleType=cpu` })
    ).json();
    expect(perRequest.mode).toBe('per-request');
    expect(perRequest.total).toBe(7010000000 / perRequest.perRequest.requests);
    const top = (await app.inject({ url: `/api/comparisons/${id}/top?stage=${stages[0]}&sampleType=cpu` })).json();
    const ref = JSON.parse(readFileSync(samplePath('pprof/expected/go_httpserver_before_cpu.json'), 'utf8'));
    expect(top.rows.slice(0, 10)).toEqual(ref.top10_by_flat);
    const folded = (await app.inject({ url: `/api/comparisons/${id}/folded?stage=${stages[0]}&sampleType=cpu` })).body;
    const sum = folded
      .trim()
      .split('\n')
      .reduce((a, l) => a + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
    expect(sum).toBe(7010000000);
    const tr = (await app.inject({ url: `/api/comparisons/${id}/trajectory?sampleType=cpu&n=5` })).json();
    expect(tr.functions).toHaveLength(5);
    expect(tr.functions[0].points).toHaveLength(3);
    const sw = (
      await app.inject({
        url: `/api/comparisons/${id}/sandwich?stage=${stages[0]}&sampleType=cpu&mode=absolute&fn=${encodeURIComponent('encoding/json.Marshal')}`,
      })
    ).json();
    expect(sw.cum).toBe(
      ref.top10_by_cum.find((r: { name: string }) => r.name === 'encoding/json.Marshal')?.cum ??
        flatCum(parsePprof(readFileSync(S.beforeCpu)), 1).find((r) => r.name === 'encoding/json.Marshal')!.cum,
    );
    expect(sw.callers.value).toBe(sw.cum);
    const tl = (await app.inject({ url: `/api/comparisons/${id}/timeline` })).json();
    expect(tl.stages[2].runs.find((r: { format: string }) => r.format === 'hey-csv').timeline.length).toBeGreaterThan(
      0,
    );
    expect(tl.stages[0].runs[0].latencyDistribution.length).toBeGreaterThan(0);
  });

  it('focus / ignore / hide filters behave as pprof', async () => {
    const all = (await app.inject({ url: `/api/comparisons/${id}/top?stage=${stages[0]}&sampleType=cpu` })).json();
    const focused = (
      await app.inject({
        url: `/api/comparisons/${id}/top?stage=${stages[0]}&sampleType=cpu&focus=${encodeURIComponent('encoding/json')}`,
      })
    ).json();
    expect(focused.total).toBeLessThan(all.total);
    expect(focused.total).toBe(
      all.rows.filter((r: { name: string }) => r.name === 'encoding/json.Marshal')[0]?.cum ?? focused.total,
    );
    const hidden = (
      await app.inject({
        url: `/api/comparisons/${id}/top?stage=${stages[0]}&sampleType=cpu&hide=${encodeURIComponent('^runtime\\.')}`,
      })
    ).json();
    expect(hidden.rows.some((r: { name: string }) => r.name.startsWith('runtime.'))).toBe(false);
    // Samples made only of runtime frames lose every frame and go, as in go tool pprof -hide.
    expect(hidden.total).toBeGreaterThan(0);
    expect(hidden.total).toBeLessThanOrEqual(all.total);
    const bad = await app.inject({
      url: `/api/comparisons/${id}/top?stage=${stages[0]}&focus=${encodeURIComponent('(')}`,
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error).toEqual({
      code: 'invalid-filter',
      param: 'focus',
      message: 'focus is not a valid Go regular expression: error parsing regexp: missing closing ): `(`',
    });
  });

  it('keeps the original bytes, byte for byte', async () => {
    const c = (await app.inject({ url: `/api/comparisons/${id}` })).json();
    const a = c.stages[0].artifacts[0];
    const raw = await app.inject({ url: `/api/artifacts/${a.id}/raw` });
    expect(raw.statusCode).toBe(200);
    expect(Buffer.compare(raw.rawPayload, readFileSync(S.beforeCpu))).toBe(0);
  });

  it('serves cached results until the comparison changes, then recomputes', async () => {
    const url = `/api/comparisons/${id}/flamegraph?stage=${stages[1]}&sampleType=cpu&mode=absolute`;
    const first = (await app.inject({ url })).json();
    const hitsBefore =
      /stagediff_result_cache_hits_total (\d+)/.exec((await app.inject({ url: '/metrics' })).body)?.[1] ?? '0';
    expect((await app.inject({ url })).json()).toEqual(first);
    const hitsAfter = /stagediff_result_cache_hits_total (\d+)/.exec((await app.inject({ url: '/metrics' })).body)![1];
    expect(Number(hitsAfter)).toBe(Number(hitsBefore) + 1);
    // Adding a second CPU profile to the stage changes the merged figures at once.
    await upload(app, id, stages[1]!, auth, [S.beforeCpu]);
    const merged = (await app.inject({ url })).json();
    expect(merged.total).toBe(first.total + 7010000000);
  });
});

describe('rights: the link reads, only the token writes', () => {
  it('reading needs no token; changes need the right one', async () => {
    expect((await app.inject({ url: `/api/comparisons/${id}` })).statusCode).toBe(200);
    const none = await app.inject({ method: 'POST', url: `/api/comparisons/${id}/stages`, payload: { name: 'x' } });
    expect(none.statusCode).toBe(401);
    const wrong = await app.inject({
      method: 'POST',
      url: `/api/comparisons/${id}/stages`,
      headers: { authorization: 'Bearer nope' },
      payload: { name: 'x' },
    });
    expect(wrong.statusCode).toBe(403);
    const other = await createComparison(app, 'other');
    const cross = await app.inject({ method: 'DELETE', url: `/api/comparisons/${id}`, headers: other.auth });
    expect(cross.statusCode).toBe(403);
    const up = multipart([S.afterCpu]);
    expect(
      (
        await app.inject({
          method: 'POST',
          url: `/api/comparisons/${id}/stages/${stages[0]}/artifacts`,
          headers: up.headers,
          payload: up.payload,
        })
      ).statusCode,
    ).toBe(401);
  });

  it('a token is checked without changing the comparison: 204 right, 403 wrong, 401 none', async () => {
    const before = (await app.inject({ url: `/api/comparisons/${id}` })).json();
    const check = (headers: Record<string, string>) =>
      app.inject({ method: 'POST', url: `/api/comparisons/${id}/token-check`, headers });
    const right = await check(auth);
    expect(right.statusCode).toBe(204);
    expect(right.body).toBe('');
    expect((await check({ authorization: 'Bearer nope' })).json().error.code).toBe('forbidden');
    expect((await check({})).statusCode).toBe(401);
    expect(
      (await app.inject({ method: 'POST', url: '/api/comparisons/nosuch/token-check', headers: auth })).statusCode,
    ).toBe(404);
    const after = (await app.inject({ url: `/api/comparisons/${id}` })).json();
    expect(after.updatedAt).toBe(before.updatedAt);
    expect(after).toEqual(before);
  });

  it('STAGEDIFF_WRITE_TOKEN guards creation', async () => {
    const guarded = await testApp({ STAGEDIFF_WRITE_TOKEN: 'secret' });
    expect(
      (await guarded.inject({ method: 'POST', url: '/api/comparisons', payload: { title: 't' } })).statusCode,
    ).toBe(401);
    expect(
      (
        await guarded.inject({
          method: 'POST',
          url: '/api/comparisons',
          headers: { authorization: 'Bearer wrong' },
          payload: { title: 't' },
        })
      ).statusCode,
    ).toBe(403);
    expect(
      (
        await guarded.inject({
          method: 'POST',
          url: '/api/comparisons',
          headers: { authorization: 'Bearer secret' },
          payload: { title: 't' },
        })
      ).statusCode,
    ).toBe(201);
    await guarded.close();
  });

  it('edit, reorder, delete with the token', async () => {
    const c = await createComparison(app, 'scratch');
    const a = await addStage(app, c.id, c.auth, 'a');
    const b = await addStage(app, c.id, c.auth, 'b');
    const re = await app.inject({
      method: 'PUT',
      url: `/api/comparisons/${c.id}/stages/order`,
      headers: c.auth,
      payload: { stageIds: [b, a] },
    });
    expect(re.json().map((s: { name: string }) => s.name)).toEqual(['b', 'a']);
    const ren = await app.inject({
      method: 'PATCH',
      url: `/api/comparisons/${c.id}/stages/${a}`,
      headers: c.auth,
      payload: { note: 'pooled buffers' },
    });
    expect(ren.json().note).toBe('pooled buffers');
    expect(
      (
        await app.inject({
          method: 'PATCH',
          url: `/api/comparisons/${c.id}`,
          headers: c.auth,
          payload: { title: 'renamed' },
        })
      ).json().title,
    ).toBe('renamed');
    expect((await app.inject({ method: 'DELETE', url: `/api/comparisons/${c.id}`, headers: c.auth })).statusCode).toBe(
      204,
    );
    expect((await app.inject({ url: `/api/comparisons/${c.id}` })).statusCode).toBe(404);
  });
});

describe('bad input gets a clear 4xx', () => {
  it('a malformed file is refused by name; good files in the same request land', async () => {
    const st = await addStage(app, id, auth, 'mixed');
    const r = await upload(app, id, st, auth, [S.truncated, S.afterCpu]);
    expect(r.statusCode).toBe(200);
    const [bad, good] = r.json().results;
    expect(bad.ok).toBe(false);
    expect(bad.error.message).toMatch(/^truncated_gzip\.pb\.gz: corrupt gzip/);
    expect(good.ok).toBe(true);
    const only = await upload(app, id, st, auth, [S.truncated]);
    expect(only.statusCode).toBe(422);
    expect(only.json().error.message).toMatch(/truncated_gzip\.pb\.gz/);
    const c = (await app.inject({ url: `/api/comparisons/${id}` })).json();
    expect(c.stages.find((s: { id: string }) => s.id === st).artifacts).toHaveLength(1);
  });

  it('an unknown format, a wrong content type, an oversized file', async () => {
    const st = await addStage(app, id, auth, 'junk');
    const txt = await app.inject({
      method: 'POST',
      url: `/api/comparisons/${id}/stages/${st}/artifacts?filename=notes.txt`,
      headers: { ...auth, 'content-type': 'application/octet-stream' },
      payload: Buffer.from('just some notes\n'),
    });
    expect(txt.statusCode).toBe(422);
    expect(txt.json().error).toMatchObject({ code: 'unsupported' });
    expect(txt.json().error.message).toMatch(/^notes\.txt: unrecognized format/);
    const json = await app.inject({
      method: 'POST',
      url: `/api/comparisons/${id}/stages/${st}/artifacts`,
      headers: auth,
      payload: { file: 'x' },
    });
    expect(json.statusCode).toBe(415);
    const small = await testApp({ MAX_UPLOAD_BYTES: '10000' });
    const c = await createComparison(small);
    const s = await addStage(small, c.id, c.auth, 's');
    const big = await upload(small, c.id, s, c.auth, [S.beforeCpu]);
    expect(big.statusCode).toBe(413);
    expect(big.json().error.message).toMatch(/go_httpserver_before_cpu\.pb\.gz: larger than the 10000-byte limit/);
    expect((await small.ctx.store.stats()).blobs).toBe(0);
    await small.close();
  });

  it('unknown ids and bad query parameters', async () => {
    expect((await app.inject({ url: '/api/comparisons/doesnotexist' })).statusCode).toBe(404);
    expect((await app.inject({ url: '/api/comparisons/bad%20id' })).statusCode).toBe(400);
    expect((await app.inject({ url: `/api/comparisons/${id}/flamegraph?stage=nope` })).statusCode).toBe(404);
    expect((await app.inject({ url: `/api/comparisons/${id}/flamegraph` })).statusCode).toBe(400);
    expect(
      (await app.inject({ url: `/api/comparisons/${id}/diff?base=${stages[0]}&target=${stages[1]}&mode=sideways` }))
        .statusCode,
    ).toBe(400);
    expect(
      (await app.inject({ url: `/api/comparisons/${id}/flamegraph?stage=${stages[0]}&minFraction=2` })).statusCode,
    ).toBe(400);
    const noType = await app.inject({
      url: `/api/comparisons/${id}/flamegraph?stage=${stages[0]}&sampleType=goroutine`,
    });
    expect(noType.statusCode).toBe(404);
    expect(noType.json().error.message).toMatch(/no CPU profile with sample type "goroutine"/);
    expect((await app.inject({ url: '/api/artifacts/nope/raw' })).statusCode).toBe(404);
    const badJson = await app.inject({
      method: 'POST',
      url: '/api/comparisons',
      headers: { 'content-type': 'application/json' },
      payload: '{"title":',
    });
    expect(badJson.statusCode).toBe(400);
    expect((await app.inject({ method: 'POST', url: '/api/comparisons', payload: { title: '' } })).statusCode).toBe(
      400,
    );
  });

  it('50 parallel uploads of 50 different files lose nothing', async () => {
    const st = await addStage(app, id, auth, 'parallel');
    // Real, distinct files: the demo's runs (a file the stage already holds would be refused).
    const demo = `${fixturesDir}demo/`;
    const files = ['baseline', 'fast-json', 'pooled', 'async-log']
      .flatMap((stage) => [1, 2, 3, 4, 5, 6].map((k) => `${demo}${stage}/run-${k}/`))
      .flatMap((run) => ['wrk.txt', 'cpu.pb.gz', 'allocs.pb.gz'].map((f) => run + f))
      .slice(0, 50);
    expect(new Set(files.map((f) => createHash('sha256').update(readFileSync(f)).digest('hex'))).size).toBe(50);
    // From ten addresses (each within its share of the workers: ANALYSIS_CLIENT_JOBS).
    const rs = await Promise.all(
      files.map((f, i) => {
        const m = multipart([f]);
        return app.inject({
          method: 'POST',
          url: `/api/comparisons/${id}/stages/${st}/artifacts`,
          headers: { ...auth, ...m.headers },
          payload: m.payload,
          remoteAddress: `10.0.${i % 10}.1`,
        });
      }),
    );
    expect(rs.map((r) => r.statusCode)).toEqual(Array(50).fill(200));
    const c = (await app.inject({ url: `/api/comparisons/${id}` })).json();
    expect(c.stages.find((s: { id: string }) => s.id === st).artifacts).toHaveLength(50);
    // 17 of them are wrk runs with the same settings: the row is their median.
    const row = (await app.inject({ url: `/api/comparisons/${id}/stage-table` }))
      .json()
      .rows.find((r: { stageId: string }) => r.stageId === st);
    const printed = files
      .filter((f) => f.endsWith('wrk.txt'))
      .map((f) => Number(/Requests\/sec:\s+([\d.]+)/.exec(readFileSync(f, 'utf8'))![1]))
      .sort((x, y) => x - y);
    expect(row).toMatchObject({ loadTests: 17, summary: 'median' });
    expect(row.figures.rps.median).toBe(printed[8]);
    // The same file once more: refused, nothing added.
    const again = await upload(app, id, st, auth, [files[4]!]);
    expect(again.statusCode).toBe(409);
    expect(again.json().error.existing.filename).toBe('cpu.pb.gz');
  });

  it('function names are data: hostile names come back as JSON strings, unchanged', async () => {
    const st = await addStage(app, id, auth, 'xss');
    expect((await upload(app, id, st, auth, [S.xss])).statusCode).toBe(200);
    const top = (await app.inject({ url: `/api/comparisons/${id}/top?stage=${st}` })).json();
    expect(top.rows.some((r: { name: string }) => r.name.includes('<'))).toBe(true);
  });
});

describe('ops', () => {
  it('healthz, metrics, openapi', async () => {
    expect((await app.inject({ url: '/healthz' })).json()).toMatchObject({
      status: 'ok',
      store: 'sqlite',
      blobs: 'files',
      analysis: { workers: 2, running: 0, queued: 0 },
    });
    const m = (await app.inject({ url: '/metrics' })).body;
    expect(m).toMatch(/# TYPE stagediff_http_requests_total counter/);
    expect(m).toMatch(/stagediff_upload_bytes_total \d+/);
    expect(m).toMatch(/stagediff_parse_seconds_count\{kind="profile"\} \d+/);
    const o = (await app.inject({ url: '/api/openapi.json' })).json();
    expect(o.openapi).toMatch(/^3\./);
    expect(Object.keys(o.paths)).toContain('/api/comparisons/{id}/diff');
  });
});
