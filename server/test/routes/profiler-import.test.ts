/**
 * "Add from a profiler" through the API, against a stand-in Parca on 127.0.0.1 replaying Parca
 * v0.28.0's recorded answers (fixtures/parca): the stage gets six runs of whole scrapes and its top
 * functions are go tool pprof's on the scrapes taken; a server whose PROFILER_HOSTS allows no host,
 * or not this one, refuses naming the setting, before any connection.
 */
import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StagediffApp } from '../../src/app.ts';
import { addStage, createComparison, testApp } from '../helpers/app.ts';
import { parcaAnswers, parcaWindow, startParcaReplay } from '../helpers/parca-replay.ts';
import { fixturesDir } from '../helpers/paths.ts';
import { parseTopRows } from '../helpers/pprof-text.ts';

let replay: { server: Server; port: number; requests: string[] };
const apps: StagediffApp[] = [];

beforeAll(async () => {
  replay = await startParcaReplay();
});
afterAll(async () => {
  for (const a of apps) await a.close();
  await new Promise((r) => replay.server.close(r));
});

async function appWith(env: Record<string, string>) {
  const app = await testApp({ ANALYSIS_WORKERS: '0', ...env });
  apps.push(app);
  const c = await createComparison(app, 'from parca');
  const stage = await addStage(app, c.id, c.auth, 'pooled');
  return { app, c, stage };
}

const body = (url: string, extra: Record<string, unknown> = {}) => ({
  source: 'parca',
  url,
  query: parcaWindow.selector,
  from: parcaWindow.from,
  to: parcaWindow.to,
  runs: parcaWindow.runs,
  ...extra,
});

describe('POST …/stages/:stageId/import', () => {
  it('imports six runs of whole scrapes into the stage, covered windows and seconds answered', async () => {
    const { app, c, stage } = await appWith({ PROFILER_HOSTS: `127.0.0.1:${replay.port}` });
    const r = await app.inject({
      method: 'POST',
      url: `/api/comparisons/${c.id}/stages/${stage}/import`,
      headers: c.auth,
      payload: body(`http://127.0.0.1:${replay.port}`),
    });
    expect(r.statusCode, r.body).toBe(200);
    const out = r.json() as {
      runs: { run: number; requested: { start: string }; covered: { start: string; end: string; seconds: number } }[];
      results: { ok: boolean; filename: string }[];
    };
    expect(out.runs.map((x) => x.run)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(out.runs[0]!.requested.start).toBe('2026-11-29T07:09:58.900Z');
    expect(out.runs[0]!.covered).toEqual({
      start: '2026-11-29T07:09:58.968Z',
      end: '2026-11-29T07:10:08.968Z',
      seconds: 10.000684804,
    });
    expect(out.runs.reduce((a, x) => a + x.covered.seconds, 0)).toBeCloseTo(60.003, 3);
    expect(out.results).toHaveLength(36);
    expect(out.results.every((x) => x.ok)).toBe(true);

    // the stage's CPU, as stagediff ranks it, is go tool pprof's ranking of the scrapes taken
    const top = await app.inject({ url: `/api/comparisons/${c.id}/top?stage=${stage}&sampleType=cpu` });
    expect(top.statusCode, top.body).toBe(200);
    const t = top.json() as { kind: string; total: number; rows: { name: string; flat: number }[] };
    expect(t.kind).toBe('cpu');
    const expected = parseTopRows(readFileSync(`${fixturesDir}parca/expected/cpu.pprof-top.txt`, 'utf8'));
    expect(t.total).toBeCloseTo(54.57e9, -6);
    const strip = (n: string) => n.replace(/ \(inline\)$/, '');
    expect(t.rows.slice(0, 10).map((x) => x.name)).toEqual(expected.slice(0, 10).map((x) => strip(x[0])));
  });

  it('refuses every import when PROFILER_HOSTS names no host, naming the setting, without connecting', async () => {
    const { app, c, stage } = await appWith({});
    const before = replay.requests.length;
    const r = await app.inject({
      method: 'POST',
      url: `/api/comparisons/${c.id}/stages/${stage}/import`,
      headers: c.auth,
      payload: body(`http://127.0.0.1:${replay.port}`),
    });
    expect(r.statusCode).toBe(403);
    expect(r.json().error.message).toContain('PROFILER_HOSTS');
    expect(replay.requests.length).toBe(before);
  });

  it('refuses a host (or port) the setting does not name, before any connection', async () => {
    const { app, c, stage } = await appWith({ PROFILER_HOSTS: `127.0.0.1:${replay.port + 1},parca.internal` });
    const before = replay.requests.length;
    for (const url of [`http://127.0.0.1:${replay.port}`, `http://localhost:${replay.port}`]) {
      const r = await app.inject({
        method: 'POST',
        url: `/api/comparisons/${c.id}/stages/${stage}/import`,
        headers: c.auth,
        payload: body(url),
      });
      expect(r.statusCode).toBe(403);
      expect(r.json().error.message).toContain('is not among the profiler hosts');
      expect(r.json().error.message).toContain('PROFILER_HOSTS');
    }
    expect(replay.requests.length).toBe(before);
  });

  it('answers bad input with a 4xx naming the parameter', async () => {
    const { app, c, stage } = await appWith({ PROFILER_HOSTS: `127.0.0.1:${replay.port}` });
    const post = (payload: Record<string, unknown>) =>
      app.inject({ method: 'POST', url: `/api/comparisons/${c.id}/stages/${stage}/import`, headers: c.auth, payload });
    const cases: [Record<string, unknown>, string][] = [
      [{ query: 'process_cpu{}' }, 'query'],
      [{ from: 'yesterday' }, 'from'],
      [{ to: parcaWindow.from }, 'to'],
      [{ runs: 12 }, 'runs'],
    ];
    for (const [extra, param] of cases) {
      const r = await post(body(`http://127.0.0.1:${replay.port}`, extra));
      expect(r.statusCode, JSON.stringify(extra)).toBeGreaterThanOrEqual(400);
      expect(r.statusCode).toBeLessThan(500);
      expect(r.json().error.message).toContain(param);
    }
    const noToken = await app.inject({
      method: 'POST',
      url: `/api/comparisons/${c.id}/stages/${stage}/import`,
      payload: body(`http://127.0.0.1:${replay.port}`),
    });
    expect(noToken.statusCode).toBe(401);
  });

  it("with a requests counter, gives each run its window's requests and the stage per-request figures", async () => {
    const { app, c, stage } = await appWith({ PROFILER_HOSTS: `127.0.0.1:${replay.port}` });
    const base = `http://127.0.0.1:${replay.port}`;
    const r = await app.inject({
      method: 'POST',
      url: `/api/comparisons/${c.id}/stages/${stage}/import`,
      headers: c.auth,
      payload: body(base, { requestsUrl: base, requestsQuery: parcaWindow.requestsQuery }),
    });
    expect(r.statusCode, r.body).toBe(200);
    const out = r.json() as {
      runs: {
        run: number;
        covered: { start: string; end: string };
        requests: { requests: number; from: string; to: string; query: string; filename: string };
      }[];
      results: { ok: boolean; filename: string }[];
    };
    expect(out.results).toHaveLength(42);
    expect(out.results.every((x) => x.ok)).toBe(true);
    for (const run of out.runs) {
      // the requests of exactly the window the run's CPU covers
      expect(run.requests.from).toBe(run.covered.start);
      expect(Math.abs(Date.parse(run.requests.to) - Date.parse(run.covered.end))).toBeLessThanOrEqual(1);
      expect(run.requests.filename).toBe(`run-${run.run}-requests.json`);
      expect(run.requests.query).toMatch(/^demo_http_requests_total\{job="demo"\}\[\d+ms\]$/);
      expect(run.requests.requests).toBeGreaterThan(80_000);
    }
    const requests = out.runs.reduce((a, x) => a + x.requests.requests, 0);
    // the stage's CPU per request: each run's CPU divided by its own window's requests
    const top = await app.inject({ url: `/api/comparisons/${c.id}/flamegraph?stage=${stage}&sampleType=cpu` });
    expect(top.statusCode, top.body).toBe(200);
    const t = top.json() as {
      mode: string;
      total: number;
      unit: string;
      perRequest: {
        requests: number;
        measured: boolean;
        profiles: { filename: string; description: string; requests: number }[];
      };
    };
    expect(t.mode).toBe('per-request');
    expect(t.perRequest.measured).toBe(true);
    expect(t.perRequest.profiles).toHaveLength(6);
    for (const p of t.perRequest.profiles) {
      const k = Number(/^run-(\d+)-cpu/.exec(p.filename)![1]);
      expect(p.description).toContain(`run ${k} by name: run-${k}-requests.json`);
      // one scrape per run: the profile lasts its window, so its requests are the window's (to the
      // millisecond the window's ends are kept to)
      expect(Math.abs(p.requests / out.runs[k - 1]!.requests.requests - 1)).toBeLessThan(1e-4);
    }
    expect(Math.abs(t.perRequest.requests / requests - 1)).toBeLessThan(1e-4);
    expect(t.unit).toBe('nanoseconds/request');
    expect(t.total).toBeCloseTo(54.57e9 / t.perRequest.requests, 6);
    // about 99 µs of CPU per request, as each run's CPU over its requests says
    expect(t.total / 1000).toBeCloseTo(99.4, 1);
  });

  it('refuses a requests counter it cannot use, naming the parameter, and stores nothing', async () => {
    const { app, c, stage } = await appWith({ PROFILER_HOSTS: `127.0.0.1:${replay.port}` });
    const base = `http://127.0.0.1:${replay.port}`;
    const post = (payload: Record<string, unknown>) =>
      app.inject({ method: 'POST', url: `/api/comparisons/${c.id}/stages/${stage}/import`, headers: c.auth, payload });
    const before = replay.requests.length;
    const early: [Record<string, unknown>, number, string][] = [
      [{ requestsQuery: parcaWindow.requestsQuery }, 400, 'requestsUrl'],
      [{ requestsUrl: 'http://127.0.0.1:1/', requestsQuery: parcaWindow.requestsQuery }, 403, 'PROFILER_HOSTS'],
      [{ requestsUrl: base, requestsQuery: 'sum(rate(demo_http_requests_total[1m]))' }, 400, 'requestsQuery'],
      [{ requestsUrl: base, requestsQuery: 'demo_http_requests_total[5m]' }, 400, 'requestsQuery'],
    ];
    for (const [extra, status, word] of early) {
      const r = await post(body(base, extra));
      expect(r.statusCode, JSON.stringify(extra)).toBe(status);
      expect(r.json().error.message).toContain(word);
    }
    // all refused before any connection
    expect(replay.requests.length).toBe(before);
    // a counter the server has no answer for: 422 naming the parameter, no file kept
    const r = await post(body(base, { requestsUrl: base, requestsQuery: 'other_requests_total{job="demo"}' }));
    expect(r.statusCode, r.body).toBe(422);
    expect(r.json().error.message).toMatch(/^requestsQuery: the server refused it: HTTP 404/);
    const stages = await app.inject({ url: `/api/comparisons/${c.id}` });
    const st = (stages.json() as { stages: { id: string; artifacts: unknown[] }[] }).stages.find(
      (x) => x.id === stage,
    )!;
    expect(st.artifacts).toHaveLength(0);
  });

  it('two windows of one build (A/A) come out "no change": per-request figures and functions; the traffic is not judged', async () => {
    const { app, c, stage } = await appWith({ PROFILER_HOSTS: `127.0.0.1:${replay.port}` });
    const again = await addStage(app, c.id, c.auth, 'pooled again');
    const base = `http://127.0.0.1:${replay.port}`;
    const requests = { requestsUrl: base, requestsQuery: parcaWindow.requestsQuery };
    for (const [id, window] of [
      [stage, {}],
      [again, parcaWindow.again],
    ] as const) {
      const r = await app.inject({
        method: 'POST',
        url: `/api/comparisons/${c.id}/stages/${id}/import`,
        headers: c.auth,
        payload: body(base, { ...requests, ...window }),
      });
      expect(r.statusCode, r.body).toBe(200);
    }
    const r = await app.inject({
      url: `/api/comparisons/${c.id}/changes?base=pooled&target=${encodeURIComponent('pooled again')}`,
    });
    expect(r.statusCode, r.body).toBe(200);
    const ch = r.json() as {
      figures: { metric: string; verdict: { status: string; p: number | null; reason?: string } }[];
      functions: { normalisation: string; changes: { name: string; verdict: { status: string } }[] };
      sentences: string[];
    };
    const fig = (m: string) => ch.figures.find((f) => f.metric === m)!.verdict;
    // the same build a quarter of an hour later, on a machine shared with other work: the per-request
    // figures stay within the noise (CPU p=0.394, allocations p=0.065, 6+6 runs)
    expect(fig('cpu-per-request').status).toBe('no-change');
    expect(fig('cpu-per-request').p).toBeCloseTo(0.394, 3);
    expect(fig('alloc-per-request').status).toBe('no-change');
    // the traffic fell by a quarter (the machine was busier): shown, not judged
    expect(fig('rps').status).toBe('not-comparable');
    expect(fig('rps').reason).toContain('served traffic');
    expect(ch.functions.normalisation).toBe('per-request');
    expect(ch.functions.changes.filter((f) => f.verdict.status === 'significant')).toEqual([]);
    expect(ch.sentences.join(' ')).not.toMatch(/QPS/);
  });

  it("counts an import as one of the client's jobs in flight: past ANALYSIS_CLIENT_JOBS, a 429, nothing fetched for it", async () => {
    // a Prometheus that answers the recorded requests a second late, so the first import is still running
    const byRequest = new Map(parcaAnswers().map((a) => [a.request, a]));
    let asked!: () => void;
    const firstAsked = new Promise<void>((r) => {
      asked = r;
    });
    const slow = createServer((req, res) => {
      asked();
      const a = byRequest.get(req.url ?? '');
      setTimeout(() => res.writeHead(a?.status ?? 404).end(a?.body ?? '{}'), 1000);
    });
    await new Promise<void>((r) => slow.listen(0, '127.0.0.1', r));
    try {
      const sp = (slow.address() as AddressInfo).port;
      const { app, c, stage } = await appWith({
        PROFILER_HOSTS: `127.0.0.1:${replay.port},127.0.0.1:${sp}`,
        ANALYSIS_CLIENT_JOBS: '1',
      });
      const post = () =>
        app.inject({
          method: 'POST',
          url: `/api/comparisons/${c.id}/stages/${stage}/import`,
          headers: c.auth,
          payload: body(`http://127.0.0.1:${replay.port}`, {
            requestsUrl: `http://127.0.0.1:${sp}`,
            requestsQuery: parcaWindow.requestsQuery,
          }),
        });
      const first = post();
      // the second starts once the first is waiting on the slow server (it holds its job till done)
      await firstAsked;
      const before = replay.requests.length;
      const second = await post();
      expect(second.statusCode, second.body).toBe(429);
      expect(second.headers['retry-after']).toBeDefined();
      expect(replay.requests.length).toBe(before);
      expect((await first).statusCode).toBe(200);
    } finally {
      await new Promise((r) => slow.close(r));
    }
  }, 60_000);
});
