/**
 * Granularity through the HTTP API: `granularity=lines|files` on top, diff and flamegraph gives
 * go tool pprof's -lines/-files rows (the carried answers of the reference corpus), and a value
 * other than functions|lines|files is a 400 naming the parameter.
 */
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StagediffApp } from '../../src/app.ts';
import { addStage, createComparison, testApp, upload } from '../helpers/app.ts';
import { samplePath } from '../helpers/paths.ts';
import { parseTopRows } from '../helpers/pprof-text.ts';

let app: StagediffApp;
let c: { id: string; before: string; after: string };

beforeAll(async () => {
  app = await testApp();
  const a = await createComparison(app, 'granularity');
  const before = await addStage(app, a.id, a.auth, 'before');
  const after = await addStage(app, a.id, a.auth, 'after');
  const file = (v: string) => samplePath(`pprof/go_httpserver_${v}_cpu.pb.gz`);
  expect((await upload(app, a.id, before, a.auth, [file('before')])).statusCode).toBe(200);
  expect((await upload(app, a.id, after, a.auth, [file('after')])).statusCode).toBe(200);
  c = { id: a.id, before, after };
});
afterAll(async () => {
  await app?.close();
});

const answer = (rel: string) =>
  parseTopRows(gunzipSync(readFileSync(samplePath(`pprof/expected/granularity/${rel}`))).toString('utf8'));
/** pprof prints a file node as the bare file; ours adds the function's start line and the binary. */
const bare = (n: string) => n.replace(/( \(function at line \d+\))?( \[[^\]]*\])?$/, '');
const byName = (rows: [string, number, number][]) =>
  [...rows].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] - b[1] || a[2] - b[2]));
const get = async (path: string, q: Record<string, string>) => {
  const r = await app.inject({ url: `/api/comparisons/${c.id}/${path}?${new URLSearchParams(q)}` });
  return { status: r.statusCode, body: r.json() };
};

describe('granularity over the API', () => {
  it.each(['lines', 'files'])('top?granularity=%s: every row of go tool pprof -top -%s', async (g) => {
    const r = await get('top', { stage: c.after, sampleType: 'cpu', granularity: g });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.granularity).toBe(g);
    const rows = r.body.rows as { name: string; flat: number; cum: number }[];
    const ref = answer(`go_httpserver_after_cpu.cpu.${g}.txt.gz`);
    expect(byName(rows.map((x) => [bare(x.name), x.flat, x.cum]))).toEqual(byName(ref));
  });

  it('diff?granularity=lines&mode=absolute: every row of go tool pprof -diff_base -lines', async () => {
    const r = await get('diff', {
      base: c.before,
      target: c.after,
      sampleType: 'cpu',
      mode: 'absolute',
      granularity: 'lines',
      limit: '1000000',
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.granularity).toBe('lines');
    const rows = (r.body.top as { name: string; deltaFlat: number; deltaCum: number }[])
      .filter((x) => x.deltaFlat !== 0 || x.deltaCum !== 0)
      .map((x): [string, number, number] => [x.name, x.deltaFlat, x.deltaCum]);
    expect(byName(rows)).toEqual(byName(answer('diff/go_httpserver_cpu.cpu.lines.diff_base.txt.gz')));
  });

  it('flamegraph?granularity=lines names nodes by function and line', async () => {
    const r = await get('flamegraph', { stage: c.after, sampleType: 'cpu', granularity: 'lines' });
    expect(r.status).toBe(200);
    expect(r.body.granularity).toBe('lines');
    const names: string[] = [];
    const walk = (n: { name: string; children: unknown[] }) => {
      names.push(n.name);
      for (const k of n.children) walk(k as typeof n);
    };
    walk(r.body.tree);
    expect(names).toContain('main.appendJSONString example.com/httpserver/after.go:45');
  });

  it('refuses an unknown granularity with a 400 naming the parameter', async () => {
    const r = await get('top', { stage: c.after, granularity: 'bytes' });
    expect(r.status).toBe(400);
    expect(JSON.stringify(r.body)).toMatch(/granularity/);
  });
});
