/**
 * "Add from a profiler" through the API, against a stand-in Parca on 127.0.0.1 replaying Parca
 * v0.28.0's recorded answers (fixtures/parca): the stage gets six runs of whole scrapes and its top
 * functions are go tool pprof's on the scrapes taken; a server whose PROFILER_HOSTS allows no host,
 * or not this one, refuses naming the setting, before any connection.
 */
import type { Server } from 'node:http';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StagediffApp } from '../../src/app.ts';
import { addStage, createComparison, testApp } from '../helpers/app.ts';
import { parcaWindow, startParcaReplay } from '../helpers/parca-replay.ts';
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
    expect(out.runs[0]!.requested.start).toBe('2026-11-29T04:03:27.000Z');
    expect(out.runs[0]!.covered).toEqual({
      start: '2026-11-29T04:03:27.215Z',
      end: '2026-11-29T04:03:37.216Z',
      seconds: 10.001103659,
    });
    expect(out.runs.reduce((a, x) => a + x.covered.seconds, 0)).toBeCloseTo(60.035, 3);
    expect(out.results).toHaveLength(36);
    expect(out.results.every((x) => x.ok)).toBe(true);

    // the stage's CPU, as stagediff ranks it, is go tool pprof's ranking of the scrapes taken
    const top = await app.inject({ url: `/api/comparisons/${c.id}/top?stage=${stage}&sampleType=cpu` });
    expect(top.statusCode, top.body).toBe(200);
    const t = top.json() as { kind: string; total: number; rows: { name: string; flat: number }[] };
    expect(t.kind).toBe('cpu');
    const expected = parseTopRows(readFileSync(`${fixturesDir}parca/expected/cpu.pprof-top.txt`, 'utf8'));
    expect(t.total).toBeCloseTo(43.82e9, -6);
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
});
